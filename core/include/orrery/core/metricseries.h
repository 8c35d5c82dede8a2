// SPDX-License-Identifier: GPL-3.0-or-later
//
// Metric points, their compact encoding (how the store keeps them), and min/max downsampling
// that keeps spikes. Pure functions over memory: no database, no Qt.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orrery::core {

// One logged value. `value` may be NaN or ±inf: they are kept as logged (MLflow drops them).
struct MetricPoint {
    std::int64_t step = 0;
    std::int64_t timeMs = 0;  // unix time in milliseconds
    double value = 0;
    bool operator==(const MetricPoint &) const = default;
};

// A chunk of points of one (run, metric) series, sorted by step, one point per step.
// Encoding (version 1): 'P' 0x01, count as LEB128, then per point: zigzag-LEB128 step delta,
// zigzag-LEB128 time delta (ms), the value's 8 IEEE-754 bytes little-endian. Steps and times
// usually grow by small constants, so a point costs about 11 bytes (vs ~40 in a row table).
std::string encodeChunk(std::span<const MetricPoint> points);
// Appends the chunk's points to `out`; std::nullopt on a corrupt or unknown encoding (the
// store reports it, it never crashes on a damaged file).
bool decodeChunk(std::string_view bytes, std::vector<MetricPoint> &out);

// Merges `incoming` (any order, later entries win on equal steps) into `series` (sorted, one
// point per step): a re-logged step replaces the old value, as a resumed run's curve should show.
void mergeSeries(std::vector<MetricPoint> &series, std::vector<MetricPoint> incoming);

// Min/max per bucket: N equal-width step buckets over [lo, hi]. Each non-empty bucket keeps
// its first and last point and the points holding its min and max, so a plot drawn from
// flatten() shows every spike however far it is zoomed out. NaN values are counted but never
// become min or max.
struct HistoryBucket {
    std::int64_t count = 0;
    std::int64_t nanCount = 0;
    MetricPoint first, last, min, max;  // min/max are meaningful only when count > nanCount
};

class MinMaxBucketer {
public:
    MinMaxBucketer(std::int64_t lo, std::int64_t hi, int buckets);
    void add(const MetricPoint &p);
    // Non-empty buckets in step order.
    std::vector<HistoryBucket> finish() const;

private:
    std::int64_t m_lo, m_hi;
    int m_n;
    long double m_scale;
    std::vector<HistoryBucket> m_buckets;
};

// The points a plot needs from buckets, in step order, duplicates removed: first, min and
// max (in the order they occurred), last.
std::vector<MetricPoint> flatten(std::span<const HistoryBucket> buckets);

}  // namespace orrery::core
