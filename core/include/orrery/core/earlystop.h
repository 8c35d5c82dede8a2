// SPDX-License-Identifier: GPL-3.0-or-later
//
// Early stopping (W&B's `early_terminate`; docs/sweeps.md): hyperband/ASHA rungs and the median
// stopping rule. Pure: metric histories in, which running trials to stop (and why) out. Whoever
// calls it (the sweep follower, part 2) carries the decisions out and records the reasons.
#pragma once

#include "orrery/core/sweepspec.h"

#include <QList>
#include <QString>

#include <utility>

namespace orrery::core {

struct TrialHistory {
    qint64 trial = 0;  // the caller's id, returned in decisions
    bool running = true;  // only running trials are stopped; finished ones still set the bar
    QList<std::pair<qint64, double>> points;  // (step, metric value), in logging order
};

struct StopDecision {
    qint64 trial = 0;
    QString reason;  // one line for the user: the value, where, and the bar it missed
};

// The hyperband rungs, in iterations (= how many times the metric was logged, as W&B counts):
// min_iter * eta^k for k = 0, 1, ... up to `reached`, or with max_iter and s:
// max_iter / eta^k for k = s .. 1 (ascending). Duplicate or zero rungs are dropped.
QList<int> hyperbandRungs(const EarlyTerminate &rule, int reached);

// Applies the rule to every running trial:
// - hyperband: a trial is judged at the highest rung it reached that at least ceil(eta) trials
//   reached (so one that ran ahead is judged where the others are); it continues only if its best
//   value within its first `rung` values is within the top ceil(n / eta) of the n trials there
//   (by the goal; ties continue).
// - median: from `min_step` on, a trial whose best value up to its latest step s is worse than
//   the median of the other trials' best values up to s (among those that logged at or after s;
//   at least `min_trials` of them) stops.
// NaN values count as the worst.
QList<StopDecision> decideEarlyStops(const EarlyTerminate &rule, Goal goal, const QString &metric,
                                     const QList<TrialHistory> &trials);

}  // namespace orrery::core
