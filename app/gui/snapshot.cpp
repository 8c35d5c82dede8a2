// SPDX-License-Identifier: GPL-3.0-or-later
#include "snapshot.h"

#include <QHash>

namespace orrery::gui {

Snapshot readSnapshot(const core::TrackingStore &store, const core::RunQuery &runs)
{
    Snapshot s;
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
        if (const auto best = store.bestRun(sweep.id))
            if (const core::LatestMetric *m = best->metric(sweep.metricName))
                node.best = m->last.value;
        s.sweeps.push_back(std::move(node));
    }
    s.paramKeys = store.paramKeys();
    s.metricKeys = store.metricKeys();
    core::RunQuery q = runs;
    q.params = s.paramKeys;
    s.runs = store.queryRuns(q);
    s.readOnlyReason = store.readOnlyReason();
    return s;
}

}  // namespace orrery::gui
