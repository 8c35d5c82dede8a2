// SPDX-License-Identifier: GPL-3.0-or-later
//
// TrackingStore::history() for a plot that zooms and pans: the first read of a (run, metric)
// builds its SeriesPyramid, and later reads whose buckets are at least the pyramid's base width
// (32 steps) come from it, not from decoding every chunk in the range again; narrower ranges
// still read the store's points (few of them, at full fidelity). The pyramid is rebuilt when the
// series changed (its point count or last step in latest_metrics). Bounded by a byte budget,
// least recently used first out. Step axis only: time axes always read the store. One cache
// belongs to one thread (the GUI's store reader).
#pragma once

#include "orrery/core/metricseries.h"
#include "orrery/core/store.h"

#include <QHash>
#include <QString>

#include <memory>

namespace orrery::core {

class HistoryCache {
public:
    explicit HistoryCache(std::size_t budgetBytes = std::size_t(256) << 20);
    ~HistoryCache();

    MetricHistory history(const TrackingStore &store, RunId run, const QString &key, const HistoryQuery &q);
    std::size_t bytes() const { return m_bytes; }
    int hits() const { return m_hits; }

private:
    struct Entry;
    std::size_t m_budget, m_bytes = 0;
    quint64 m_clock = 0;
    int m_hits = 0;
    QHash<QString, std::shared_ptr<Entry>> m_entries;  // "<run>\\x1f<key>"
};

}  // namespace orrery::core
