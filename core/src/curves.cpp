// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/curves.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::core {

std::vector<CurvePoint> emaSmooth(std::span<const CurvePoint> points, double weight)
{
    std::vector<CurvePoint> out(points.begin(), points.end());
    weight = std::clamp(weight, 0.0, 0.999);
    if (weight <= 0)
        return out;
    double last = 0;
    double debias = 0;  // 1 - weight^n over the n finite values seen
    // An average never leaves the range of what it averages; rounding did (a constant 0.493946
    // came back as 0.49394600000000004 at some points: a chart scaled to that ulp drew a steep
    // diagonal under two equal tick labels). Clamped to the values seen so far.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (CurvePoint &p : out) {
        if (!std::isfinite(p.y))
            continue;
        lo = std::min(lo, p.y);
        hi = std::max(hi, p.y);
        last = last * weight + (1 - weight) * p.y;
        debias = debias * weight + (1 - weight);
        p.y = std::clamp(last / debias, lo, hi);
    }
    return out;
}

std::vector<CurvePoint> pairByStep(std::span<const StepValue> x, std::span<const StepValue> y)
{
    std::vector<StepValue> xs;  // x's finite points, one per step (the last logged wins)
    xs.reserve(x.size());
    for (const StepValue &p : x) {
        if (!std::isfinite(p.value))
            continue;
        if (!xs.empty() && xs.back().step == p.step)
            xs.back() = p;
        else if (xs.empty() || xs.back().step < p.step)
            xs.push_back(p);
    }
    std::vector<CurvePoint> out;
    if (xs.empty())
        return out;
    out.reserve(y.size());
    std::size_t i = 0;  // y is in step order: x's cursor only moves forward
    for (const StepValue &p : y) {
        if (p.step < xs.front().step || p.step > xs.back().step)
            continue;
        while (i + 1 < xs.size() && xs[i + 1].step <= p.step)
            ++i;
        double value = xs[i].value;
        if (xs[i].step != p.step && i + 1 < xs.size()) {
            const StepValue &a = xs[i], &b = xs[i + 1];
            value = a.value + (b.value - a.value) * double(p.step - a.step) / double(b.step - a.step);
        }
        out.push_back({value, p.value});
    }
    return out;
}

bool xNonDecreasing(std::span<const CurvePoint> points)
{
    return std::is_sorted(points.begin(), points.end(),
                          [](const CurvePoint &a, const CurvePoint &b) { return a.x < b.x; });
}

std::pair<double, double> valueAxisRange(double lo, double hi, double pad)
{
    const double magnitude = std::max(std::abs(lo), std::abs(hi));
    if (hi - lo <= magnitude * 1e-9) {
        const double mid = (lo + hi) / 2, half = magnitude > 0 ? magnitude * 0.05 : 0.5;
        return {mid - half, mid + half};
    }
    return {lo - (hi - lo) * pad, hi + (hi - lo) * pad};
}

std::vector<BandPoint> meanStdBand(std::span<const std::vector<CurvePoint>> runs, double xMin, double xMax,
                                   int bins)
{
    std::vector<BandPoint> out;
    if (bins <= 0 || !(xMax >= xMin) || runs.empty())
        return out;
    const double width = xMax > xMin ? (xMax - xMin) / bins : 1.0;
    std::vector<double> sum(std::size_t(bins), 0.0), sumSq(std::size_t(bins), 0.0);
    std::vector<int> count(std::size_t(bins), 0);
    std::vector<double> runSum(static_cast<std::size_t>(bins));
    std::vector<int> runCount(static_cast<std::size_t>(bins));
    for (const std::vector<CurvePoint> &run : runs) {
        std::fill(runSum.begin(), runSum.end(), 0.0);
        std::fill(runCount.begin(), runCount.end(), 0);
        for (const CurvePoint &p : run) {
            if (!std::isfinite(p.y) || p.x < xMin || p.x > xMax)
                continue;
            const auto b = std::min(std::size_t((p.x - xMin) / width), std::size_t(bins) - 1);
            runSum[b] += p.y;
            ++runCount[b];
        }
        for (std::size_t b = 0; b < std::size_t(bins); ++b) {
            if (!runCount[b])
                continue;
            const double m = runSum[b] / runCount[b];
            sum[b] += m;
            sumSq[b] += m * m;
            ++count[b];
        }
    }
    for (std::size_t b = 0; b < std::size_t(bins); ++b) {
        if (!count[b])
            continue;
        const double mean = sum[b] / count[b];
        const double var = std::max(0.0, sumSq[b] / count[b] - mean * mean);
        out.push_back({xMin + (double(b) + 0.5) * width, mean, std::sqrt(var), count[b]});
    }
    return out;
}

std::optional<std::pair<double, double>> commonXRange(std::span<const std::vector<CurvePoint>> runs)
{
    double lo = -INFINITY, hi = INFINITY;
    bool any = false;
    for (const std::vector<CurvePoint> &run : runs) {
        double first = INFINITY, last = -INFINITY;
        for (const CurvePoint &p : run)
            if (std::isfinite(p.y)) {
                first = std::min(first, p.x);
                last = std::max(last, p.x);
            }
        if (first > last)
            continue;  // no finite point: this run says nothing about where the group overlaps
        lo = std::max(lo, first);
        hi = std::min(hi, last);
        any = true;
    }
    if (!any || lo > hi)
        return std::nullopt;
    return std::pair{lo, hi};
}

}  // namespace orrery::core
