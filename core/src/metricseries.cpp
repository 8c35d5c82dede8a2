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
