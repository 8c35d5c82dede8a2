// SPDX-License-Identifier: GPL-3.0-or-later
//
// Metric points, their compact encoding (how the store keeps them), and min/max downsampling
// that keeps spikes. Pure functions over memory: no database, no Qt.
#pragma once

#include <cstdint>
#include <cstring>
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
// Appends the chunk's points to `out`; false on a corrupt or unknown encoding (the store
// reports it, it never crashes on a damaged file).
bool decodeChunk(std::string_view bytes, std::vector<MetricPoint> &out);
// Calls f(point) for each point, without a vector in between; false on a corrupt encoding.
template<typename F>
bool forEachPoint(std::string_view bytes, F &&f);

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
    void add(const MetricPoint &p) { add(p, p.step); }
    // Merges a summary of consecutive points (a SeriesPyramid bucket) into the bucket of its
    // first point.
    void add(const HistoryBucket &b);
    // Buckets by `x` (a wall or relative time) instead of the step.
    void add(const MetricPoint &p, std::int64_t x);
    // Non-empty buckets in step order.
    std::vector<HistoryBucket> finish() const;

private:
    std::int64_t m_lo, m_hi;
    int m_n;
    double m_scale;
    std::vector<HistoryBucket> m_buckets;
};

// Two summaries of consecutive points as one (`a` before `b`).
HistoryBucket mergeBuckets(const HistoryBucket &a, const HistoryBucket &b);

// A series summarised at widths of base·2^k steps (k = 0, 1, ...): what a zoomed-out plot reads
// instead of every point, so a pan over a 1M-point curve touches ~pixels buckets, not 1M
// points. Built from a series in step order; levels double until one bucket holds it all.
class SeriesPyramid {
public:
    explicit SeriesPyramid(std::span<const MetricPoint> points, std::int64_t baseWidth = 32);
    std::int64_t baseWidth() const { return m_base; }
    // The buckets of the coarsest level no wider than `width` steps that overlap [lo, hi], in
    // step order; empty when `width` is below the base width (read the points instead).
    std::span<const HistoryBucket> buckets(std::int64_t width, std::int64_t lo, std::int64_t hi) const;
    std::size_t bytes() const;

private:
    std::int64_t m_base;
    std::vector<std::vector<HistoryBucket>> m_levels;  // level k: non-empty buckets of base·2^k steps
};

// The points a plot needs from buckets, in step order, duplicates removed: first, min and
// max (in the order they occurred), last.
std::vector<MetricPoint> flatten(std::span<const HistoryBucket> buckets);

// The varint (LEB128) and zigzag primitives of the chunk encoding; the store's run_latest blob
// uses them too.
namespace detail {
inline void putVarint(std::string &out, std::uint64_t v)
{
    while (v >= 0x80) {
        out.push_back(char(v | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}
inline std::uint64_t zigzag(std::int64_t v)
{
    return (std::uint64_t(v) << 1) ^ std::uint64_t(v >> 63);
}
inline bool getVarint(const unsigned char *&p, const unsigned char *end, std::uint64_t &v)
{
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        const unsigned char b = *p++;
        v |= std::uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}
inline std::int64_t unzigzag(std::uint64_t v)
{
    return std::int64_t(v >> 1) ^ -std::int64_t(v & 1);
}
}  // namespace detail

template<typename F>
bool forEachPoint(std::string_view bytes, F &&f)
{
    if (bytes.size() < 3 || bytes[0] != 'P' || bytes[1] != 1)
        return false;
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data()) + 2;
    const auto *end = reinterpret_cast<const unsigned char *>(bytes.data()) + bytes.size();
    std::uint64_t count = 0;
    if (!detail::getVarint(p, end, count) || count > std::uint64_t(end - p) / 10)
        return false;
    std::uint64_t step = 0, time = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t ds = 0, dt = 0;
        if (!detail::getVarint(p, end, ds) || !detail::getVarint(p, end, dt) || end - p < 8)
            return false;
        step += std::uint64_t(detail::unzigzag(ds));
        time += std::uint64_t(detail::unzigzag(dt));
        MetricPoint point{std::int64_t(step), std::int64_t(time), 0};
        std::memcpy(&point.value, p, 8);
        p += 8;
        f(point);
    }
    return p == end;
}

}  // namespace orrery::core
