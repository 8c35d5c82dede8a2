// SPDX-License-Identifier: GPL-3.0-or-later
//
// How far a sweep has got and how long it has left, from what the store knows: each trial's
// latest step and the total its resolved config asks for (train.steps), a rate measured over the
// last minute of the follower's ticks, and the ETAs that follow. `sweep watch`'s status block
// shows it; any face that follows a sweep can (the GUI's follower, the monitor).
#pragma once

#include "orrery/core/store.h"

#include <QHash>
#include <QList>
#include <QString>

#include <optional>

namespace orrery::core {

struct TrialProgress {
    int index = 0;
    QString state;  // TrialState's text
    int attempt = 0;
    qint64 step = -1;  // -1: nothing logged yet
    qint64 total = -1;  // train.steps of the trial's resolved config; -1: unknown
    double stepsPerSecond = 0;  // over the last minute of samples; 0: not measured yet
    std::optional<double> latest;  // the sweep's metric, latest value
    // For a running trial: its steps to go at the slowest of what is known — the completed
    // trials' wall time per step (startup, evaluation, sampling included), its own steps over its
    // time so far, the last minute's rate.
    std::optional<qint64> etaMs;
};

struct SweepProgress {
    int planned = 0;  // the sweep's trialCount
    PhaseCounts counts;  // of the submitted trials (countPhases)
    qint64 stepsDone = 0;  // over every trial (ended ones count their last step; completed: total)
    qint64 stepsTotal = 0;  // every planned trial's total (unsubmitted ones: the typical total)
    std::optional<double> best;  // the store's best run's latest value of the metric
    QString bestRun;
    // The running trials' time to go plus the waiting trials' steps at a completed trial's wall
    // time per step, over the number running: an estimate that assumes the concurrency stays.
    std::optional<qint64> etaMs;
    QList<TrialProgress> active;  // queued and running trials, by index
};

// train.steps of a resolved trial.yaml; nullopt when the text has none (or does not parse).
std::optional<qint64> configuredSteps(const QString &trialYaml);

// Keeps a minute of (time, step) samples per trial between calls, so rates are measured, not
// guessed. One tracker per follower; update() after each tick.
class SweepProgressTracker {
public:
    SweepProgress update(const Sweep &sweep, const QList<TrialSummary> &trials,
                         const std::optional<RunRow> &best, qint64 nowMs);

private:
    struct Sample {
        qint64 ms, step;
    };
    QHash<qint64, QList<Sample>> m_samples;  // by Trial::id (one attempt)
    // train.steps of each attempt's config (-1: none), parsed once: a config never changes.
    QHash<qint64, qint64> m_totals;
    std::optional<qint64> m_baseTotal;
};

}  // namespace orrery::core
