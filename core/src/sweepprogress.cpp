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

    double rateSum = 0;
    qint64 remaining = 0;
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
        remaining += std::max<qint64>(total - step, 0);
        if (t.step >= 0) {
            QList<Sample> samples = m_samples.value(t.trial.id);
            if (samples.isEmpty() || samples.back().step != t.step)
                samples.append({nowMs, t.step});
            while (samples.size() > 2 && nowMs - samples[1].ms > kRateWindowMs)
                samples.removeFirst();
            if (samples.size() >= 2 && samples.back().ms > samples.front().ms) {
                tp.stepsPerSecond = double(samples.back().step - samples.front().step) * 1000.0 /
                    double(samples.back().ms - samples.front().ms);
                if (tp.stepsPerSecond > 0 && total > 0) {
                    tp.etaMs =
                        qint64(double(std::max<qint64>(total - t.step, 0)) * 1000.0 / tp.stepsPerSecond);
                    rateSum += tp.stepsPerSecond;
                }
            }
            kept.insert(t.trial.id, samples);
        }
        p.active.append(tp);
    }
    m_samples = kept;
    const int unsubmitted = std::max(0, p.planned - int(trials.size()));
    if (typical > 0) {
        p.stepsTotal += qint64(unsubmitted) * typical;
        remaining += qint64(unsubmitted) * typical;
    }
    if (rateSum > 0 && typical > 0)
        p.etaMs = qint64(double(remaining) * 1000.0 / rateSum);
    std::sort(p.active.begin(), p.active.end(),
              [](const TrialProgress &a, const TrialProgress &b) { return a.index < b.index; });
    return p;
}

}  // namespace orrery::core
