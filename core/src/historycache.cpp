// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/historycache.h"

#include <algorithm>
#include <vector>

namespace orrery::core {

struct HistoryCache::Entry {
    std::pair<qint64, qint64> version;  // (count, last step)
    std::int64_t first = 0, last = 0;  // the series' step range
    qint64 count = 0;
    SeriesPyramid pyramid;
    quint64 used = 0;
};

HistoryCache::HistoryCache(std::size_t budgetBytes) : m_budget(budgetBytes)
{ }
HistoryCache::~HistoryCache() = default;

MetricHistory HistoryCache::history(const TrackingStore &store, RunId run, const QString &key,
                                    const HistoryQuery &q)
{
    if (q.axis != XAxis::Step || q.buckets <= 0)
        return store.history(run, key, q);
    const auto version = store.seriesVersion(run, key);
    if (!version || version->first <= 2 * qint64(q.buckets))
        return store.history(run, key, q);  // few points: raw, straight from the store
    const QString id = QString::number(run) + QChar(0x1f) + key;
    std::shared_ptr<Entry> entry = m_entries.value(id);
    if (!entry || entry->version != *version) {
        if (entry) {
            m_bytes -= entry->pyramid.bytes();
            m_entries.remove(id);
        }
        const std::vector<MetricPoint> all = store.allPoints(run, key);
        if (all.empty())
            return store.history(run, key, q);
        entry = std::make_shared<Entry>(
            Entry{*version, all.front().step, all.back().step, qint64(all.size()), SeriesPyramid(all), 0});
        m_bytes += entry->pyramid.bytes();
        m_entries.insert(id, entry);
        while (m_bytes > m_budget && m_entries.size() > 1) {  // the least recently used go first
            auto oldest = m_entries.begin();
            for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
                if (it.value()->used < oldest.value()->used)
                    oldest = it;
            if (oldest.value() == entry)
                break;
            m_bytes -= oldest.value()->pyramid.bytes();
            m_entries.erase(oldest);
        }
    } else {
        ++m_hits;
    }
    entry->used = ++m_clock;
    const std::int64_t lo = std::max<std::int64_t>(q.from, entry->first);
    const std::int64_t hi = std::min<std::int64_t>(q.to, entry->last);
    if (hi < lo)
        return {};
    const std::int64_t width = (hi - lo + 1) / q.buckets;
    const auto buckets = entry->pyramid.buckets(width, lo, hi);
    if (buckets.empty())
        return store.history(run, key, q);  // zoomed in below the base width: the points
    MetricHistory out;
    MinMaxBucketer bucketer(lo, hi, q.buckets);
    for (const HistoryBucket &b : buckets) {
        bucketer.add(b);
        out.pointsInRange += b.count;
    }
    out.downsampled = true;
    out.buckets = bucketer.finish();
    out.points = flatten(out.buckets);
    return out;
}

}  // namespace orrery::core
