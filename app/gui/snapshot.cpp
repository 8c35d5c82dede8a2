// SPDX-License-Identifier: GPL-3.0-or-later
#include "snapshot.h"

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
    for (const core::Sweep &sweep : store.sweeps()) {
        SweepNode node;
        node.sweep = sweep;
        node.experiment = names.value(sweep.experimentId);
        node.trials = store.trialSummaries(sweep.id);
        QList<core::Trial> latest;
        latest.reserve(node.trials.size());
        for (const core::TrialSummary &t : std::as_const(node.trials))
            latest.push_back(t.trial);
        node.counts = core::countPhases(latest);
        // The same best as `orrery sweep list` and `sweep best`: the run whose latest value of
        // the sweep's metric is best by its goal.
        const std::optional<core::RunRow> best = store.bestRun(sweep.id);
        if (best)
            if (const core::LatestMetric *m = best->metric(sweep.metricName))
                node.best = m->last.value;
        if (trackers && core::isActive(sweep.sweepState())) {
            node.progress = (*trackers)[sweep.id].update(sweep, node.trials, best, now);
            active.insert(sweep.id);
        }
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
