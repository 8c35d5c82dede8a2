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
        const bool maximize = sweep.metricGoal == QLatin1String("maximize");
        for (const core::TrialSummary &t : std::as_const(node.trials)) {
            latest.push_back(t.trial);
            if (t.best && (!node.best || (maximize ? *t.best > *node.best : *t.best < *node.best)))
                node.best = t.best;
        }
        node.counts = core::countPhases(latest);
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
