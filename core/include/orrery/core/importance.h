// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Parameter importance of a sweep (W&B's "parameter importance" panel): for each param, its
// correlation with the sweep metric's latest value and its importance to a small random forest
// that predicts the metric from all the params at once. The GUI's Importance tab and
// `orrery sweep importance` show the same answer: this one function computes it.

#include "orrery/core/params.h"

#include <QList>
#include <QString>

#include <optional>

namespace orrery::core {

class TrackingStore;
struct Sweep;

// One run as the forest sees it: its params (as text) and its metric's latest value.
struct ImportanceRun {
    Params params;
    double metric = 0;  // NaN or ±inf: the run is left out
};

struct ImportanceOptions {
    int trees = 100;
    int maxDepth = 6;  // a sweep has tens to hundreds of runs: deeper trees only fit noise
    int minLeaf = 2;  // runs a leaf keeps at least
    int maxSamples = 1000;  // each tree's bootstrap draws at most this many runs (bounds the time)
    int minRuns = 4;  // fewer runs with the metric: "not enough runs"
    quint64 seed = 0x5eed;  // the same data gives the same answer, run after run
};

struct ParamImportance {
    QString key;
    bool swept = false;  // one of the sweep's swept params (else a numeric param that varies)
    bool categorical = false;  // text values: ordinal-coded for the forest, no correlation
    bool log = false;  // correlated (and shown) on log10 of the value
    // Pearson correlation of the value (log10 of it where `log`) with the metric over the runs
    // that have both; nullopt for a categorical or a param with a single value among them.
    std::optional<double> correlation;
    double importance = 0;  // share of the forest's permutation importance; the rows sum to 1 (or all 0)
    int runs = 0;  // runs that have this param and the metric
};

struct ImportanceResult {
    QList<ParamImportance> params;  // by importance, highest first
    int runsUsed = 0;  // runs with a finite metric value
    int runsLeftOut = 0;  // runs without one (not logged yet, NaN)
    QString problem;  // set instead of an answer: not enough runs, no param varies
    bool ok() const { return problem.isEmpty(); }
};

// The importance of each param of `runs` for their metric. The params are `swept` (in that
// order, categorical or numeric) and every other param whose values are numeric and differ
// among the runs; a swept param is shown log where SweptParam::log, another where its positive
// values span a factor of 10 or more.
//
// The forest: `trees` regression trees, each grown on a bootstrap sample (seeded) to `maxDepth`
// with at least `minLeaf` runs a leaf, every param considered at each split (scikit-learn's
// default for regression); a categorical param is coded as the rank of its categories' mean
// metric, which lets one threshold split the categories in any way that matters (Breiman).
// A param's importance is the rise of the squared error on each tree's out-of-bag runs when its
// column is shuffled among them (permutation importance), averaged over the trees, negatives
// counted as 0, normalised to sum to 1. Runs missing a param take the param's median (numeric)
// or an empty category.
ImportanceResult paramImportance(const QList<ImportanceRun> &runs, const QList<SweptParam> &swept,
                                 const ImportanceOptions &options = {});

// paramImportance over the runs of `sweep` in `store` (archived runs left out, as every view
// leaves them), with the sweep's metric and its swept params (core::sweptParams).
ImportanceResult sweepImportance(const TrackingStore &store, const Sweep &sweep,
                                 const ImportanceOptions &options = {});

}  // namespace orrery::core
