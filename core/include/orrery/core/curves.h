// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a metric chart computes from a curve's points, kept out of the widgets so the CLI, the GUI
// and the tests agree: EMA smoothing and the mean ± std band of a group of runs (seeds).
#pragma once

#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace orrery::core {

struct CurvePoint {
    double x = 0, y = 0;
};

// TensorBoard's and W&B's smoothing: a debiased exponential moving average with weight
// 0 ≤ w < 1 (0: the raw curve). Non-finite values pass through unsmoothed and do not enter the
// average (a NaN is a gap in the chart, not a poisoned tail).
std::vector<CurvePoint> emaSmooth(std::span<const CurvePoint> points, double weight);

// The value axis for data spanning [lo, hi]: padded by `pad` of the span each side, and where the
// data is flat to rounding (a constant metric), ±5% of its value (±0.5 at zero) — never an axis
// a few ulps tall whose ticks all read the same number. Compare's charts and the report's.
std::pair<double, double> valueAxisRange(double lo, double hi, double pad);

// A metric against another metric (a parametric chart: eval/loss against GPU-hours, tokens, or
// samples seen): each point of `y` at its step, with `x` as it was at that step — x's logged value
// there, else linearly interpolated between x's points on either side. A y point before x's first
// logged step or after its last has no x and is left out (never an x that was not there); so are
// non-finite x values. Both inputs in step order; the result is in y's step order, so x may go
// back where the x metric does.
struct StepValue {
    long long step = 0;
    double value = 0;
};
std::vector<CurvePoint> pairByStep(std::span<const StepValue> x, std::span<const StepValue> y);
// Whether a curve's x never decreases (a chart may then skip sorting it).
bool xNonDecreasing(std::span<const CurvePoint> points);

struct BandPoint {
    double x = 0;
    double mean = 0, std = 0;  // population std over the runs with a value here
    int runs = 0;
};

// The mean ± std of several runs' curves over `bins` equal-width bins of [xMin, xMax]: each run
// contributes its mean over the bin's finite points, then the bin's mean and std are taken over
// the runs that have one. Bins no run reaches are left out; x is the bin's centre.
std::vector<BandPoint> meanStdBand(std::span<const std::vector<CurvePoint>> runs, double xMin, double xMax,
                                   int bins);

// The x range every run with a finite point covers: from the latest first point to the earliest
// last one. A group band is drawn over it only, so a mean of three seeds does not turn into the
// mean of one where the others have stopped (or not started). nullopt: no run has a point, or
// they do not overlap.
std::optional<std::pair<double, double>> commonXRange(std::span<const std::vector<CurvePoint>> runs);

}  // namespace orrery::core
