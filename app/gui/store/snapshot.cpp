// SPDX-License-Identifier: GPL-3.0-or-later
#include "snapshot.h"

#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QHash>
#include <QSet>

namespace orrery::gui {

Snapshot readSnapshot(const core::TrackingStore &store, const core::RunQuery &runs,
                      ProgressTrackers *trackers)
{
    Snapshot s;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QSet<core::SweepId> active;
    s.experiments = store.experiments();
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
        if (trackers && core::isActive(sweep.sweepState())) {
            options.tracker = &(*trackers)[sweep.id];  // a rate needs two looks: kept between snapshots
            active.insert(sweep.id);
        }
        SweepNode node;
        static_cast<core::SweepOverview &>(node) = core::readSweepOverview(store, sweep, options);
        node.experiment = names.value(sweep.experimentId);
        s.sweeps.push_back(std::move(node));
    }
    if (trackers)
        trackers->removeIf([&](const ProgressTrackers::iterator &it) { return !active.contains(it.key()); });
    s.paramKeys = store.paramKeys();
    s.metricKeys = store.metricKeys();
    core::RunQuery q = runs;
    q.params = s.paramKeys;
    s.runs = store.queryRuns(q);
    s.readOnlyReason = store.readOnlyReason();
    return s;
}

}  // namespace orrery::gui
