// SPDX-License-Identifier: GPL-3.0-or-later
//
// Trial expansion and search: grid, seeded random, and bayes = TPE (Tree-structured Parzen
// Estimator, Bergstra et al. 2011; docs/sweeps.md says why). Pure functions: the same inputs and
// seed give the same trials on every machine (the random numbers are our own, not the standard
// library's implementation-defined distributions).
#pragma once

#include "orrery/core/sweepspec.h"

#include <QList>

#include <cstdint>

namespace orrery::core {

// xoshiro256** seeded by splitmix64: small, fast, and the same stream everywhere.
class SweepRng {
public:
    explicit SweepRng(quint64 seed);
    // An independent stream per trial, so trial i's suggestion does not depend on how many
    // numbers the trials before it drew.
    static SweepRng forTrial(quint64 seed, int index);

    quint64 next();
    double uniform();  // [0, 1)
    double normal();  // standard normal (Box-Muller)
    int below(int n);  // [0, n)

private:
    quint64 m_s[4];
};

// Grid: the cartesian product of every parameter's values, the first parameter varying slowest
// (file order), at most `runCap` of them (0: all). Constants join every trial.
qint64 gridSize(const QList<ParamSpec> &space);
QList<TrialParams> gridTrials(const QList<ParamSpec> &space, int runCap);

// One sample of every parameter from its W&B distribution.
TrialParams sampleRandom(const QList<ParamSpec> &space, SweepRng &rng);

struct FinishedTrial {
    TrialParams params;
    double value = 0;  // the sweep metric (NaN: failed; counts as the worst)
};

struct TpeOptions {
    int startupTrials = 10;  // random suggestions until this many trials have finished
    double gamma = 0.25;  // the best gamma fraction of finished trials forms l(x)
    int candidates = 24;  // samples drawn from l(x) per parameter (hyperopt's default)
    double priorWeight = 1.0;  // weight of the prior in each density (categorical: pseudo-counts)
};

// TPE: splits the finished trials at the gamma quantile by the goal, fits per-parameter Parzen
// densities l(x) (good) and g(x) (the rest) — in log space for log distributions, as smoothed
// counts for categorical ones — draws candidates from l and keeps the one with the largest
// l(x)/g(x). Random until `startupTrials` trials finished.
TrialParams suggestTpe(const QList<ParamSpec> &space, const QList<FinishedTrial> &finished, Goal goal,
                       SweepRng &rng, const TpeOptions &options = {});

// The trials a sweep starts with, as `orrery sweep plan` shows them: grid → every combination
// (capped); random → run_cap samples; bayes → the first max_concurrent suggestions (random: no
// trial has finished yet). Trial i uses SweepRng::forTrial(spec.seed, i).
QList<TrialParams> initialTrials(const SweepSpec &spec);

}  // namespace orrery::core
