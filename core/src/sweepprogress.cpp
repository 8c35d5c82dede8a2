// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweepprogress.h"

#include "orrery/core/states.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace orrery::core {

namespace {

constexpr qint64 kRateWindowMs = 60'000;  // rates over the last minute: recent, not jumpy

}  // namespace

std::optional<qint64> configuredSteps(const QString &trialYaml)
{
    try {
        const YAML::Node root = YAML::Load(trialYaml.toStdString());
        const YAML::Node steps = root["train"]["steps"];
        if (steps && steps.IsScalar())
            return steps.as<qint64>();
    } catch (const YAML::Exception &) { }
    return std::nullopt;
}

SweepProgress SweepProgressTracker::update(const Sweep &sweep, const QList<TrialSummary> &trials,
                                           const std::optional<RunRow> &best, qint64 nowMs)
{
    SweepProgress p;
    p.planned = std::max<int>(sweep.trialCount, int(trials.size()));
    if (best)
        if (const LatestMetric *m = best->metric(sweep.metricName)) {
            p.best = m->last.value;
            p.bestRun = best->run.name;
        }
    QList<Trial> latest;
    QHash<qint64, qint64> totals;
    qint64 typical = -1;  // for trials not submitted yet (random/bayes suggest them later)
    for (const TrialSummary &t : trials) {
        latest.append(t.trial);
        const qint64 total = m_totals.contains(t.trial.id) ? m_totals.value(t.trial.id)
                                                           : configuredSteps(t.trial.config).value_or(-1);
        totals.insert(t.trial.id, total);
        typical = std::max(typical, total);
    }
    m_totals = totals;  // ended attempts drop out
    if (typical < 0) {
        if (!m_baseTotal)
            m_baseTotal = configuredSteps(sweep.baseConfig).value_or(-1);
        typical = *m_baseTotal;
    }
    p.counts = countPhases(latest);

    // The wall time a step costs over a whole trial — startup, evaluation, sampling and
    // checkpoints included, which a rate of training steps leaves out (an ETA of 59 s for a sweep
    // whose evals and samples were 45% of its 3 minutes): the completed attempts' started..ended
    // over their steps.
    double doneMs = 0, doneSteps = 0;
    for (const TrialSummary &t : trials)
        if (phaseOf(t.trial.trialState()) == Phase::Done && t.trial.startedMs > 0 &&
            t.trial.endedMs > t.trial.startedMs) {
            doneMs += double(t.trial.endedMs - t.trial.startedMs);
            doneSteps += double(std::max(totals.value(t.trial.id), t.step));
        }
    const double msPerDoneStep = doneSteps > 0 ? doneMs / doneSteps : 0;  // 0: none completed

    double remainingMs = 0;  // of the running trials, summed
    double perStepSum = 0;  // each estimating running trial's ms per step
    int estimating = 0;
    qint64 waitingSteps = 0;  // of trials not running yet
    QHash<qint64, QList<Sample>> kept;
    for (const TrialSummary &t : trials) {
        const Phase phase = phaseOf(t.trial.trialState());
        const qint64 total = totals.value(t.trial.id) >= 0 ? totals.value(t.trial.id) : typical;
        const qint64 step = std::max<qint64>(t.step, 0);
        if (phase == Phase::Done) {
            p.stepsDone += std::max(total, step);
            p.stepsTotal += std::max(total, step);
            continue;
        }
        if (phase == Phase::Failed || phase == Phase::Stopped) {  // ended for good: what it ran is all
            p.stepsDone += step;
            p.stepsTotal += step;
            continue;
        }
        TrialProgress tp;
        tp.index = t.trial.index;
        tp.state = t.trial.state;
        tp.attempt = t.trial.attempt;
        tp.step = t.step;
        tp.total = total;
        tp.latest = t.latest;
        p.stepsDone += step;
        p.stepsTotal += std::max(total, step);
        if (phase == Phase::Queued)
            waitingSteps += std::max<qint64>(total - step, 0);
        if (t.step >= 0) {
            QList<Sample> samples = m_samples.value(t.trial.id);
            if (samples.isEmpty() || samples.back().step != t.step)
                samples.append({nowMs, t.step});
            while (samples.size() > 2 && nowMs - samples[1].ms > kRateWindowMs)
                samples.removeFirst();
            if (samples.size() >= 2 && samples.back().ms > samples.front().ms)
                tp.stepsPerSecond = double(samples.back().step - samples.front().step) * 1000.0 /
                    double(samples.back().ms - samples.front().ms);
            kept.insert(t.trial.id, samples);
        }
        // A running trial's time to go, the slowest of what is known: its whole-trial cost from
        // the completed trials (less what it has run), its own steps so far over its time so far
        // (its evaluations and samples until now included), the last minute's rate.
        const qint64 left = std::max<qint64>(total - step, 0);
        if (t.trial.trialState() == TrialState::Running && total > 0) {
            std::optional<double> ms, perStep;
            const double elapsed = t.trial.startedMs > 0 ? double(nowMs - t.trial.startedMs) : 0;
            if (tp.stepsPerSecond > 0)
                perStep = 1000.0 / tp.stepsPerSecond;
            if (elapsed > 0 && step > 0)
                perStep = std::max(perStep.value_or(0), elapsed / double(step));
            if (perStep)
                ms = double(left) * *perStep;
            if (msPerDoneStep > 0 && elapsed > 0) {
                ms = std::max(ms.value_or(0), double(total) * msPerDoneStep - elapsed);
                perStep = std::max(perStep.value_or(0), msPerDoneStep);
            }
            if (ms) {
                tp.etaMs = qint64(*ms);
                remainingMs += *ms;
                perStepSum += *perStep;
                ++estimating;
            } else {
                waitingSteps += left;  // not measured yet: at the others' cost
            }
        }
        p.active.append(tp);
    }
    m_samples = kept;
    const int unsubmitted = std::max(0, p.planned - int(trials.size()));
    if (typical > 0) {
        p.stepsTotal += qint64(unsubmitted) * typical;
        waitingSteps += qint64(unsubmitted) * typical;
    }
    // The trials still to run cost what a completed one did per step (else the running ones'
    // mean); all of it shared between as many trials at once as run now.
    if (estimating > 0 && typical > 0) {
        const double perStep = msPerDoneStep > 0 ? msPerDoneStep : perStepSum / estimating;
        p.etaMs = qint64((remainingMs + double(waitingSteps) * perStep) / estimating);
    }
    std::sort(p.active.begin(), p.active.end(),
              [](const TrialProgress &a, const TrialProgress &b) { return a.index < b.index; });
    return p;
}

}  // namespace orrery::core
