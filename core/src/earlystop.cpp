// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/earlystop.h"

#include "textutil.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::core {

namespace {

double worst(Goal goal)
{
    return goal == Goal::Minimize ? std::numeric_limits<double>::infinity()
                                  : -std::numeric_limits<double>::infinity();
}

// The best of the first `count` values (NaN if all are NaN).
double bestOfFirst(const TrialHistory &t, qsizetype count, Goal goal)
{
    double best = std::numeric_limits<double>::quiet_NaN();
    for (qsizetype i = 0; i < std::min(count, t.points.size()); ++i)
        if (isBetter(t.points[i].second, best, goal))
            best = t.points[i].second;
    return best;
}

// The best value logged at or before `step`, and whether the trial got that far.
std::optional<double> bestUpToStep(const TrialHistory &t, qint64 step, Goal goal)
{
    if (t.points.isEmpty() || t.points.back().first < step)
        return std::nullopt;
    double best = std::numeric_limits<double>::quiet_NaN();
    for (const auto &[s, v] : t.points)
        if (s <= step && isBetter(v, best, goal))
            best = v;
    return best;
}

QString numberText(double v)
{
    return std::isnan(v) ? QStringLiteral("nan") : formatDouble(v);
}

QList<StopDecision> hyperband(const EarlyTerminate &rule, Goal goal, const QString &metric,
                              const QList<TrialHistory> &trials)
{
    int reached = 0;
    for (const TrialHistory &t : trials)
        reached = std::max(reached, int(t.points.size()));
    const QList<int> rungs = hyperbandRungs(rule, reached);
    const qsizetype quorum = qsizetype(std::ceil(rule.eta));
    // How many trials reached each rung.
    QList<qsizetype> atRung(rungs.size(), 0);
    for (const TrialHistory &o : trials)
        for (int k = 0; k < rungs.size(); ++k)
            if (o.points.size() >= rungs[k])
                ++atRung[k];
    QList<StopDecision> stops;
    for (const TrialHistory &t : trials) {
        if (!t.running)
            continue;
        // The highest rung this trial reached that enough trials reached too: a trial that ran
        // ahead of the others is judged where they are, not waved through for being alone.
        int rungIndex = -1;
        for (int k = 0; k < rungs.size(); ++k)
            if (t.points.size() >= rungs[k] && atRung[k] >= quorum)
                rungIndex = k;
        if (rungIndex < 0)
            continue;
        const int rung = rungs[rungIndex];
        // W&B's `strict: true` (its hyperband_stopping.py): each trial by its value at the rung
        // itself, not by its best up to it; stops more trials.
        const auto judged = [&](const TrialHistory &o) {
            return rule.strict ? o.points[rung - 1].second : bestOfFirst(o, rung, goal);
        };
        std::vector<double> values;
        for (const TrialHistory &o : trials)
            if (o.points.size() >= rung) {
                const double v = judged(o);
                values.push_back(std::isnan(v) ? worst(goal) : v);
            }
        std::sort(values.begin(), values.end(), [goal](double a, double b) { return isBetter(a, b, goal); });
        const qsizetype keep = std::max<qsizetype>(1, qsizetype(std::ceil(double(values.size()) / rule.eta)));
        const double cutoff = values[std::size_t(keep - 1)];
        const double mine = judged(t);
        if (isBetter(cutoff, std::isnan(mine) ? worst(goal) : mine, goal))
            stops.append(
                {t.trial,
                 (rule.strict ? QStringLiteral("hyperband (strict): %1 %2 at its value %3 (rung %4) is "
                                               "not in the top %5 of the %6 trials there (cut-off %7)")
                              : QStringLiteral("hyperband: best %1 %2 in its first %3 values (rung %4) is "
                                               "not in the top %5 of the %6 trials there (cut-off %7)"))
                     .arg(metric, numberText(mine))
                     .arg(rung)
                     .arg(rungIndex + 1)
                     .arg(keep)
                     .arg(values.size())
                     .arg(numberText(cutoff))});
    }
    return stops;
}

QList<StopDecision> median(const EarlyTerminate &rule, Goal goal, const QString &metric,
                           const QList<TrialHistory> &trials)
{
    QList<StopDecision> stops;
    for (const TrialHistory &t : trials) {
        if (!t.running || t.points.isEmpty())
            continue;
        const qint64 step = t.points.back().first;
        if (step < rule.minStep)
            continue;
        std::vector<double> others;
        for (const TrialHistory &o : trials) {
            if (&o == &t)
                continue;
            if (const auto v = bestUpToStep(o, step, goal))
                others.push_back(std::isnan(*v) ? worst(goal) : *v);
        }
        if (qsizetype(others.size()) < rule.minTrials)
            continue;
        std::sort(others.begin(), others.end());
        const std::size_t n = others.size();
        const double med = n % 2 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2;
        const double mine = bestUpToStep(t, step, goal).value_or(std::numeric_limits<double>::quiet_NaN());
        if (isBetter(med, mine, goal))
            stops.append({t.trial,
                          QStringLiteral("median: best %1 %2 by step %3 is worse than the median %4 of "
                                         "%5 other trials at that step")
                              .arg(metric, numberText(mine))
                              .arg(step)
                              .arg(numberText(med))
                              .arg(n)});
    }
    return stops;
}

}  // namespace

QList<int> hyperbandRungs(const EarlyTerminate &rule, int reached)
{
    QList<int> rungs;
    const auto add = [&](double r) {
        const int v = int(std::floor(r + 1e-9));
        if (v >= 1 && (rungs.isEmpty() || v > rungs.back()))
            rungs.append(v);
    };
    if (rule.minIter > 0) {
        for (double r = rule.minIter; r <= reached && rungs.size() < 64; r *= rule.eta)
            add(r);
    } else if (rule.maxIter > 0 && rule.s > 0) {
        for (int k = rule.s; k >= 1; --k)
            add(rule.maxIter / std::pow(rule.eta, k));
    }
    return rungs;
}

QList<StopDecision> decideEarlyStops(const EarlyTerminate &rule, Goal goal, const QString &metric,
                                     const QList<TrialHistory> &trials)
{
    return rule.type == EarlyTerminate::Type::Hyperband ? hyperband(rule, goal, metric, trials)
                                                        : median(rule, goal, metric, trials);
}

}  // namespace orrery::core
