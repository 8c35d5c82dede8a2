// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/metricseries.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace orrery::core {

namespace {

constexpr char kMagic = 'P';
constexpr char kVersion = 1;

using detail::putVarint;
using detail::zigzag;

}  // namespace

std::string encodeChunk(std::span<const MetricPoint> points)
{
    static_assert(std::endian::native == std::endian::little, "chunk encoding assumes little-endian");
    std::string out;
    out.reserve(4 + points.size() * 12);
    out.push_back(kMagic);
    out.push_back(kVersion);
    putVarint(out, points.size());
    std::int64_t step = 0, time = 0;
    for (const MetricPoint &p : points) {
        // Deltas wrap in unsigned arithmetic, so extreme steps never overflow.
        putVarint(out, zigzag(std::int64_t(std::uint64_t(p.step) - std::uint64_t(step))));
        putVarint(out, zigzag(std::int64_t(std::uint64_t(p.timeMs) - std::uint64_t(time))));
        char raw[8];
        std::memcpy(raw, &p.value, 8);
        out.append(raw, 8);
        step = p.step;
        time = p.timeMs;
    }
    return out;
}

bool decodeChunk(std::string_view bytes, std::vector<MetricPoint> &out)
{
    return forEachPoint(bytes, [&out](const MetricPoint &p) { out.push_back(p); });
}

void mergeSeries(std::vector<MetricPoint> &series, std::vector<MetricPoint> incoming)
{
    if (incoming.empty())
        return;
    std::stable_sort(incoming.begin(), incoming.end(),
                     [](const MetricPoint &a, const MetricPoint &b) { return a.step < b.step; });
    // Keep the last of equal steps within the batch.
    std::vector<MetricPoint> unique;
    unique.reserve(incoming.size());
    for (const MetricPoint &p : incoming) {
        if (!unique.empty() && unique.back().step == p.step)
            unique.back() = p;
        else
            unique.push_back(p);
    }
    if (series.empty() || series.back().step < unique.front().step) {
        series.insert(series.end(), unique.begin(), unique.end());
        return;
    }
    std::vector<MetricPoint> merged;
    merged.reserve(series.size() + unique.size());
    auto a = series.begin();
    auto b = unique.begin();
    while (a != series.end() || b != unique.end()) {
        if (b == unique.end() || (a != series.end() && a->step < b->step)) {
            merged.push_back(*a++);
        } else {
            if (a != series.end() && a->step == b->step)
                ++a;  // replaced by the newer value
            merged.push_back(*b++);
        }
    }
    series = std::move(merged);
}

MinMaxBucketer::MinMaxBucketer(std::int64_t lo, std::int64_t hi, int buckets)
    : m_lo(lo), m_hi(std::max(hi, lo)), m_n(std::max(buckets, 1)),
      m_scale(static_cast<long double>(m_n) / (static_cast<long double>(m_hi) - m_lo + 1)),
      m_buckets(std::size_t(m_n))
{ }

void MinMaxBucketer::add(const MetricPoint &p, std::int64_t x)
{
    if (x < m_lo || x > m_hi)
        return;
    auto index = static_cast<std::size_t>(double(x - m_lo) * m_scale);
    index = std::min(index, m_buckets.size() - 1);
    HistoryBucket &b = m_buckets[index];
    if (b.count == 0)
        b.first = p;
    b.last = p;
    ++b.count;
    if (std::isnan(p.value)) {
        ++b.nanCount;
        return;
    }
    if (b.count - b.nanCount == 1) {
        b.min = b.max = p;
        return;
    }
    if (p.value < b.min.value)
        b.min = p;
    if (p.value > b.max.value)
        b.max = p;
}

HistoryBucket mergeBuckets(const HistoryBucket &a, const HistoryBucket &b)
{
    if (a.count == 0)
        return b;
    if (b.count == 0)
        return a;
    HistoryBucket m = a;
    m.count += b.count;
    m.nanCount += b.nanCount;
    m.last = b.last;
    const bool aHas = a.count > a.nanCount, bHas = b.count > b.nanCount;
    if (bHas && (!aHas || b.min.value < a.min.value))
        m.min = b.min;
    if (bHas && (!aHas || b.max.value > a.max.value))
        m.max = b.max;
    return m;
}

void MinMaxBucketer::add(const HistoryBucket &b)
{
    if (b.count == 0)
        return;
    const std::int64_t x = std::clamp(b.first.step, m_lo, m_hi);
    auto index = static_cast<std::size_t>(double(x - m_lo) * m_scale);
    index = std::min(index, m_buckets.size() - 1);
    m_buckets[index] = mergeBuckets(m_buckets[index], b);
}

namespace {
std::int64_t floorDiv(std::int64_t a, std::int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
}  // namespace

SeriesPyramid::SeriesPyramid(std::span<const MetricPoint> points, std::int64_t baseWidth)
    : m_base(std::max<std::int64_t>(1, baseWidth))
{
    std::vector<HistoryBucket> level;
    std::int64_t number = 0;
    for (const MetricPoint &p : points) {
        HistoryBucket one;
        one.count = 1;
        one.nanCount = std::isnan(p.value) ? 1 : 0;
        one.first = one.last = one.min = one.max = p;
        const std::int64_t n = floorDiv(p.step, m_base);
        if (!level.empty() && n == number)
            level.back() = mergeBuckets(level.back(), one);
        else
            level.push_back(one);
        number = n;
    }
    for (std::int64_t width = m_base; !level.empty(); width *= 2) {
        // One bucket holds it all (or, with steps on both sides of 0, two never merge: stop).
        const bool last = level.size() <= 1 || m_levels.size() >= 60;
        m_levels.push_back(std::move(level));
        if (last)
            break;
        std::vector<HistoryBucket> next;
        for (const HistoryBucket &b : m_levels.back()) {
            const std::int64_t n = floorDiv(b.first.step, width * 2);
            if (!next.empty() && floorDiv(next.back().first.step, width * 2) == n)
                next.back() = mergeBuckets(next.back(), b);
            else
                next.push_back(b);
        }
        level = std::move(next);
    }
}

std::span<const HistoryBucket> SeriesPyramid::buckets(std::int64_t width, std::int64_t lo,
                                                      std::int64_t hi) const
{
    if (width < m_base || m_levels.empty())
        return {};
    std::size_t level = 0;
    for (std::int64_t w = m_base * 2; level + 1 < m_levels.size() && w <= width; w *= 2)
        ++level;
    const std::vector<HistoryBucket> &b = m_levels[level];
    auto from = std::lower_bound(b.begin(), b.end(), lo,
                                 [](const HistoryBucket &x, std::int64_t v) { return x.last.step < v; });
    auto to = std::upper_bound(from, b.end(), hi,
                               [](std::int64_t v, const HistoryBucket &x) { return v < x.first.step; });
    return {from, to};
}

std::size_t SeriesPyramid::bytes() const
{
    std::size_t n = 0;
    for (const auto &level : m_levels)
        n += level.capacity() * sizeof(HistoryBucket);
    return n;
}

std::vector<HistoryBucket> MinMaxBucketer::finish() const
{
    std::vector<HistoryBucket> out;
    for (const HistoryBucket &b : m_buckets)
        if (b.count)
            out.push_back(b);
    return out;
}

std::vector<MetricPoint> flatten(std::span<const HistoryBucket> buckets)
{
    std::vector<MetricPoint> out;
    out.reserve(buckets.size() * 4);
    auto push = [&out](const MetricPoint &p) {
        if (out.empty() || out.back().step != p.step)
            out.push_back(p);
    };
    for (const HistoryBucket &b : buckets) {
        push(b.first);
        if (b.count > b.nanCount) {
            const bool minFirst = b.min.step <= b.max.step;
            push(minFirst ? b.min : b.max);
            push(minFirst ? b.max : b.min);
        }
        push(b.last);
    }
    return out;
}

}  // namespace orrery::core
