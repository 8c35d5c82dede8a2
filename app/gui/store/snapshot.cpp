// SPDX-License-Identifier: GPL-3.0-or-later
#include "snapshot.h"

#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QHash>
#include <QSet>

namespace orrery::gui {

Snapshot readSnapshot(const core::TrackingStore &store, const core::RunQuery &runs,
                      ProgressTrackers *trackers, const QList<core::RunId> &selected, bool goodput)
{
    Snapshot s;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QSet<core::SweepId> active;
    s.experiments = store.experiments();
    s.paramKeys = store.paramKeys();
    s.metricKeys = store.metricKeys();
    core::RunQuery q = runs;
    q.params = s.paramKeys;
    // Every run is read when nothing filters them (the window's open): the sweeps' trial rows
    // and best come from these rows, not from two more reads per sweep, and are made while the
    // rows' params are still being read (they need none: queryRuns' withoutParams).
    const bool everyRun = !runs.experiment && !runs.sweep && runs.conditions.isEmpty() && runs.limit <= 0;
    auto overviews = [&](const QList<core::RunRow> &rows) {
        QHash<core::RunId, const core::RunRow *> byId;
        if (everyRun) {
            byId.reserve(rows.size());
            for (const core::RunRow &r : rows)
                byId.insert(r.run.id, &r);
        }
        QHash<core::ExperimentId, QString> names;
        for (const core::Experiment &e : std::as_const(s.experiments))
            names.insert(e.id, e.name);
        // Each cluster's price read once a snapshot (a profile file each).
        QHash<QString, std::optional<core::Price>> prices;
        for (const core::Sweep &sweep : store.sweeps()) {
            if (!prices.contains(sweep.cluster))
                prices.insert(sweep.cluster, remote::executorPrice(sweep.cluster));
            core::OverviewOptions options;
            options.nowMs = now;
            options.price = prices.value(sweep.cluster);
            options.bestVideo = false;  // shown by neither
            options.runs = everyRun ? &byId : nullptr;
            if (trackers && core::isActive(sweep.sweepState())) {
                options.tracker = &(*trackers)[sweep.id];  // a rate needs two looks: kept between snapshots
                active.insert(sweep.id);
            }
            SweepNode node;
            static_cast<core::SweepOverview &>(node) = core::readSweepOverview(store, sweep, options);
            node.experiment = names.value(sweep.experimentId);
            node.swept = core::sweptParams(node.sweep, node.attempts);
            if (goodput)
                for (const core::RunGoodput &g : core::sweepGoodput(store, sweep.id, now).runs)
                    if (g.total.wallS > 0)
                        node.runGoodput.insert(g.run, g.total.goodput());
            s.sweeps.push_back(std::move(node));
        }
    };
    s.runs = store.queryRuns(q, overviews);
    if (trackers)
        trackers->removeIf([&](const ProgressTrackers::iterator &it) { return !active.contains(it.key()); });
    s.readOnlyReason = store.readOnlyReason();
    for (core::RunId run : selected)
        if (!store.run(run))
            s.gone.push_back(run);
    if (!runs.includeArchived)
        for (core::RunId run : store.archivedRuns())
            s.archived.insert(run);
    return s;
}

SweepIndex Snapshot::index() const
{
    SweepIndex index;
    index.sweeps = sweeps;
    for (const SweepNode &node : sweeps)
        for (const core::Trial &t : node.attempts)
            if (t.runId)
                index.sweepOfRun.insert(t.runId, node.sweep.id);
    return index;
}

const SweepNode *SweepIndex::sweep(core::SweepId id) const
{
    for (const SweepNode &node : sweeps)
        if (node.sweep.id == id)
            return &node;
    return nullptr;
}

const SweepNode *SweepIndex::sweepOf(core::RunId run) const
{
    const auto it = sweepOfRun.constFind(run);
    return it == sweepOfRun.cend() ? nullptr : sweep(*it);
}

const SweepNode *SweepIndex::leadingSweep(const QList<core::RunId> &runs) const
{
    QHash<core::SweepId, int> count;
    for (core::RunId run : runs)
        if (const auto it = sweepOfRun.constFind(run); it != sweepOfRun.cend())
            ++count[*it];
    core::SweepId best = 0;
    int most = 0;
    for (auto it = count.cbegin(); it != count.cend(); ++it)
        if (it.value() > most || (it.value() == most && it.key() > best)) {
            best = it.key();
            most = it.value();
        }
    return best ? sweep(best) : nullptr;
}

QList<core::SweptParam> SweepIndex::sweptParams(const QList<core::RunId> &runs) const
{
    QList<core::SweptParam> out;
    QSet<QString> seen;
    auto add = [&](const SweepNode *node) {
        if (node)
            for (const core::SweptParam &p : node->swept)
                if (!seen.contains(p.key)) {
                    seen.insert(p.key);
                    out.append(p);
                }
    };
    const SweepNode *lead = leadingSweep(runs);
    add(lead);
    QSet<core::SweepId> done;
    if (lead)
        done.insert(lead->sweep.id);
    for (core::RunId run : runs)
        if (const auto it = sweepOfRun.constFind(run); it != sweepOfRun.cend() && !done.contains(*it)) {
            done.insert(*it);
            add(sweep(*it));
        }
    return out;
}

}  // namespace orrery::gui
