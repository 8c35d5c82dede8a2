// SPDX-License-Identifier: GPL-3.0-or-later
//
// TrackingStore's private half, shared by the store_*.cpp files. Its facets (SweepBook, IngestBook,
// HousekeepingBook) reach it through the pointer TrackingStore's constructor gives them; their
// headers name it StoreImpl, as they come before TrackingStore (whose Impl it is).
#pragma once

#include "orrery/core/store.h"
#include "sqlite.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace orrery::core {

struct Event;

// Opens a database file (sqlite3_open_v2's flags; SQLITE_OPEN_NOMUTEX added) with extended result
// codes and a busy timeout; StoreError names the file and SQLite's reason.
sql::DbHandle openDatabaseFile(const QString &path, int flags, int busyTimeoutMs);

struct StoreImpl {
    // Points per metric chunk. Small enough that rewriting a run's open tail chunks on every
    // monitor tick stays cheap (~3 KB per metric), large enough that a 1M-point history is
    // ~4,000 rows and the per-row overhead is < 1 byte per point.
    static constexpr std::int64_t kChunkPoints = 256;
    static const char *const kRunColumns;

    sql::DbHandle db;
    QString path;
    int version = 0;
    bool readOnly = false;
    QString readOnlyReason;

    // Prepared statements by SQL text (the pointer: every caller passes a literal).
    std::map<std::string, sql::Stmt> statements;
    // Metric key ids: ids are never reused once committed, so the cache is valid across
    // transactions and processes; ids created in a transaction enter it only on commit.
    mutable std::unordered_map<std::string, qint64> keyIds;
    mutable std::unordered_map<qint64, QString> keyNames;
    std::unordered_map<std::string, qint64> pendingKeys;

    sqlite3 *writable();
    sql::Stmt &stmt(const char *sqlText);
    sql::Stmt &stmt(const std::string &sqlText) { return stmt(sqlText.c_str()); }
    std::optional<qint64> keyId(std::string_view name) const;
    qint64 ensureKey(std::string_view name);
    QString keyName(qint64 id) const;

    void appendSeries(qint64 run, qint64 key, std::vector<MetricPoint> points);
    // Rewrites run_latest for `run` from latest_metrics; call once per transaction that
    // appended to any of the run's series.
    void refreshRunLatest(qint64 run);
    void logParam(qint64 run, std::string_view key, std::string_view value);
    void setTag(qint64 run, std::string_view key, std::string_view value);
    void addArtifact(qint64 run, const Artifact &a);
    // A `phases` event: the row of its process in run_phases, unless a newer one is there
    // (store_goodput.cpp).
    void recordPhases(qint64 run, const Event &ev, qint64 timeMs);
    QList<LatestMetric> latestOf(qint64 run) const;
    static Run readRun(const sql::Stmt &s);
    // A second, read-only connection to the file, as the store's own reads are set up (a
    // worker's: queryRuns reads a table of every param on one beside its own).
    static sql::DbHandle openReader(const std::string &path);

    // Converts SQLite errors into StoreError with what the store was doing.
    template<typename F>
    auto guarded(const char *what, F &&f) const -> decltype(f());

    // A write transaction, or nothing when one is already open (writeTransaction() nesting).
    class Tx {
    public:
        explicit Tx(StoreImpl &impl);
        ~Tx();
        void commit();

    private:
        StoreImpl &d;
        std::optional<sql::WriteTransaction> tx;
        bool committed = false;
    };
};

template<typename F>
auto StoreImpl::guarded(const char *what, F &&f) const -> decltype(f())
{
    try {
        return f();
    } catch (const sql::Error &e) {
        if ((e.code() & 0xff) == SQLITE_FULL || e.isBusy())
            throw StoreUnavailableError(std::string(what) + ": " + e.what());
        throw StoreError(std::string(what) + ": " + e.what());
    }
}

// Calls f(key id, metric) for each entry of a run_latest blob; false when it is corrupt.
bool decodeRunLatest(std::string_view bytes, const std::function<void(qint64 key, const LatestMetric &)> &f);

inline QString qstr(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}
inline std::string utf8(const QString &s)
{
    return s.toStdString();
}

}  // namespace orrery::core
