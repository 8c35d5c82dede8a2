// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/store.h"

#include "orrery/core/events.h"
#include "schema.h"
#include "sqlite.h"
#include "storeimpl.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QThread>
#include <QUuid>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace orrery::core {

using sql::Stmt;

namespace {

// How long a writer waits for another process's transaction before giving up. An ingest
// transaction holds the lock for at most a few hundred ms (8 MB of events), so 60 s only
// runs out when another process is stuck.
constexpr int kBusyTimeoutMs = 60'000;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

const char *statusName(RunStatus s)
{
    switch (s) {
    case RunStatus::Scheduled:
        return "SCHEDULED";
    case RunStatus::Running:
        return "RUNNING";
    case RunStatus::Finished:
        return "FINISHED";
    case RunStatus::Failed:
        return "FAILED";
    case RunStatus::Killed:
        return "KILLED";
    }
    return "RUNNING";
}

}  // namespace

QString toString(RunStatus s)
{
    return QString::fromLatin1(statusName(s));
}

std::optional<RunStatus> runStatusFromString(const QString &s)
{
    const QString u = s.trimmed().toUpper();
    for (RunStatus r : {RunStatus::Scheduled, RunStatus::Running, RunStatus::Finished, RunStatus::Failed,
                        RunStatus::Killed})
        if (u == QLatin1String(statusName(r)))
            return r;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Opening and migrations

TrackingStore::TrackingStore(std::unique_ptr<Impl> impl)
    : SweepBook(*impl), IngestBook(*impl), HousekeepingBook(*impl), d(std::move(impl))
{ }

TrackingStore::~TrackingStore()
{
    // The day's writes into the main file before the connection goes: SQLite checkpoints the
    // WAL only when the last connection to close can write, and a face's read-only connection
    // (the window's reader, a monitor) often closes last — the main file, the one people copy,
    // then lacked everything since the last automatic checkpoint (1,000 pages). Never blocks:
    // with no busy wait, a reader of another process in the middle of a read keeps the frames it
    // needs (the WAL stays, the main file gets all that can be copied).
    if (d && d->db && !d->readOnly) {
        d->statements.clear();
        sqlite3_busy_timeout(d->db.get(), 0);
        sqlite3_wal_checkpoint_v2(d->db.get(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    }
}

int TrackingStore::currentSchemaVersion()
{
    return schema::currentVersion();
}
int TrackingStore::schemaVersion() const
{
    return d->version;
}
QString TrackingStore::path() const
{
    return d->path;
}
bool TrackingStore::isReadOnly() const
{
    return d->readOnly;
}
QString TrackingStore::readOnlyReason() const
{
    return d->readOnlyReason;
}

static int userVersion(sqlite3 *db)
{
    Stmt s(db, "PRAGMA user_version");
    return s.step() ? int(s.int64(0)) : 0;
}

sql::DbHandle openDatabaseFile(const QString &path, int flags, int busyTimeoutMs)
{
    sqlite3 *raw = nullptr;
    const int rc = sqlite3_open_v2(path.toUtf8().constData(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    sql::DbHandle db(raw);
    if (rc != SQLITE_OK)
        throw StoreError(QStringLiteral("cannot open %1: %2")
                             .arg(path, QString::fromUtf8(raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)))
                             .toStdString());
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, busyTimeoutMs);
    return db;
}

static sql::DbHandle openHandle(const QString &path, bool readOnly)
{
    return openDatabaseFile(
        path, readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, kBusyTimeoutMs);
}

// Reads through mmap and a 64 MiB page cache: a 1M-point history or a 10,000-run list then
// costs no read() syscalls (measured: 2x faster than SQLite's 2 MiB default).
static void setUpReads(sqlite3 *db)
{
    sql::execScript(db, "PRAGMA mmap_size = 1073741824");
    sql::execScript(db, "PRAGMA cache_size = -65536");
}

sql::DbHandle StoreImpl::openReader(const std::string &path)
{
    sql::DbHandle db = openHandle(QString::fromStdString(path), true);
    setUpReads(db.get());
    return db;
}

std::unique_ptr<TrackingStore> TrackingStore::open(const QString &path, Mode mode)
{
    // SQLite answers SQLITE_BUSY at once, without its busy handler, in a few places: while another
    // connection turns a new file to WAL or recovers its WAL. Several processes that open a new
    // file at the same instant (a CLI command beside the window, a loaded machine) meet there;
    // they try again for a while instead of failing (tst_cli_runs concurrentFirstOpensMigrateOnce).
    const qint64 deadline = QDateTime::currentMSecsSinceEpoch() + 10'000;
    for (int backoffMs = 10;; backoffMs = std::min(backoffMs * 2, 200)) {
        try {
            return openOnce(path, mode);
        } catch (const sql::Error &e) {
            if (QDateTime::currentMSecsSinceEpoch() > deadline)
                throw StoreError(
                    QStringLiteral("%1: %2").arg(path, QString::fromUtf8(e.what())).toStdString());
            QThread::msleep(backoffMs);
        }
    }
}

std::unique_ptr<TrackingStore> TrackingStore::openOnce(const QString &path, Mode mode)
{
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    const bool readOnly = mode == Mode::ReadOnly;
    if (!readOnly) {
        const QString dir = QFileInfo(path).absolutePath();
        if (!QDir().mkpath(dir))
            throw StoreError(QStringLiteral("cannot create the directory %1").arg(dir).toStdString());
    }
    try {
        impl->db = openHandle(path, readOnly);
        sqlite3 *db = impl->db.get();
        sql::execScript(db, "PRAGMA foreign_keys = ON");
        setUpReads(db);
        if (!readOnly) {
            // 16 KiB pages hold a whole metric chunk (~2.8 KB) in the b-tree leaf: with SQLite's
            // default 4 KiB pages a chunk spills into overflow pages and the file grows by 70%
            // (measured: 18.8 vs 14.7 bytes per point, 11 of them payload; 64 KiB pages: 13.8 but
            // 4x the WAL traffic per live tick). Only takes effect on a new file.
            sql::execScript(db, "PRAGMA page_size = 16384");
            // WAL: readers (the GUI) never block the writer and vice versa. synchronous=NORMAL
            // in WAL mode survives any process crash (kill -9); only a power cut may lose the
            // last transactions, never corrupt the file.
            sql::execScript(db, "PRAGMA journal_mode = WAL");
            sql::execScript(db, "PRAGMA synchronous = NORMAL");
        }
        int version = userVersion(db);
        const int current = schema::currentVersion();
        if (version > current) {
            impl->readOnly = true;
            impl->readOnlyReason =
                QStringLiteral(
                    "%1 was written by a newer Orrery (schema version %2; this build knows up to %3): "
                    "opened read-only, upgrade Orrery to change it")
                    .arg(path)
                    .arg(version)
                    .arg(current);
            if (!readOnly) {
                impl->db.reset();
                impl->db = openHandle(path, true);
                sql::execScript(impl->db.get(), "PRAGMA foreign_keys = ON");
            }
        } else if (version < current) {
            if (readOnly)
                throw StoreError(
                    QStringLiteral("%1 needs a schema upgrade (version %2 → %3); open it read-write once")
                        .arg(path)
                        .arg(version)
                        .arg(current)
                        .toStdString());
            // The migration lock: BEGIN IMMEDIATE holds SQLite's write lock, which other
            // processes honour; re-read the version under it, since another process may have
            // migrated while this one waited. DDL is transactional, so a crash mid-migration
            // leaves the old version intact.
            sql::WriteTransaction tx(db);
            version = userVersion(db);
            for (const schema::Migration &m : schema::migrations()) {
                if (m.version <= version)
                    continue;
                sql::execScript(db, m.sql);
                if (m.convert)
                    m.convert(db);
                sql::execScript(db, ("PRAGMA user_version = " + std::to_string(m.version)).c_str());
                version = m.version;
            }
            tx.commit();
        }
        if (readOnly && !impl->readOnly) {
            impl->readOnly = true;
            impl->readOnlyReason = QStringLiteral("opened read-only");
        }
        impl->version = version;
    } catch (const sql::Error &e) {
        if (e.isBusy())
            throw;  // open() tries again
        throw StoreError(QStringLiteral("%1: %2").arg(path, QString::fromUtf8(e.what())).toStdString());
    }
    return std::unique_ptr<TrackingStore>(new TrackingStore(std::move(impl)));
}

// ---------------------------------------------------------------------------------------------
// run_latest: every latest metric of a run in one blob. Encoding: 'L' 0x01, count (LEB128), then
// per metric: key id, step (zigzag), time (zigzag), count as LEB128, value/min/max as 8 raw bytes.

namespace {

using detail::putVarint;
using detail::zigzag;

void putDouble(std::string &out, double v)
{
    char raw[8];
    std::memcpy(raw, &v, 8);
    out.append(raw, 8);
}

double getDouble(const unsigned char *&p)
{
    double v;
    std::memcpy(&v, p, 8);
    p += 8;
    return v;
}

// Rebuilds run_latest for one run from latest_metrics.
void refreshRunLatest(sqlite3 *db, Stmt &select, Stmt &upsert, std::int64_t run)
{
    std::string blob{'L', 1};
    std::string body;
    std::uint64_t n = 0;
    select.bind(1, run);
    while (select.step()) {
        putVarint(body, std::uint64_t(select.int64(0)));
        putVarint(body, zigzag(select.int64(1)));
        putVarint(body, zigzag(select.int64(2)));
        putVarint(body, std::uint64_t(select.int64(6)));
        putDouble(body, select.real(3));
        putDouble(body, select.real(4));
        putDouble(body, select.real(5));
        ++n;
    }
    select.reset();
    putVarint(blob, n);
    blob += body;
    upsert.bind(1, run).bindBlob(2, blob.data(), blob.size()).exec();
    (void)db;
}

constexpr const char kLatestOfRun[] =
    "SELECT key_id, step, time, value, min_value, max_value, count FROM latest_metrics WHERE run_id = ?";
constexpr const char kUpsertRunLatest[] = "INSERT INTO run_latest (run_id, metrics) VALUES (?, ?) ON "
                                          "CONFLICT DO UPDATE SET metrics = excluded.metrics";

}  // namespace

namespace schema {
void backfillRunLatest(sqlite3 *db)
{
    Stmt runs(db, "SELECT DISTINCT run_id FROM latest_metrics");
    Stmt select(db, kLatestOfRun), upsert(db, kUpsertRunLatest);
    while (runs.step())
        refreshRunLatest(db, select, upsert, runs.int64(0));
}
}  // namespace schema

void StoreImpl::refreshRunLatest(qint64 run)
{
    orrery::core::refreshRunLatest(db.get(), stmt(kLatestOfRun), stmt(kUpsertRunLatest), run);
}

bool decodeRunLatest(std::string_view bytes, const std::function<void(qint64 key, const LatestMetric &)> &f)
{
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
    const auto *end = p + bytes.size();
    if (bytes.size() < 3 || p[0] != 'L' || p[1] != 1)
        return false;
    p += 2;
    std::uint64_t n = 0;
    if (!detail::getVarint(p, end, n))
        return false;
    for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t key = 0, step = 0, time = 0, count = 0;
        if (!detail::getVarint(p, end, key) || !detail::getVarint(p, end, step) ||
            !detail::getVarint(p, end, time) || !detail::getVarint(p, end, count) || end - p < 24)
            return false;
        LatestMetric m;
        m.last.step = detail::unzigzag(step);
        m.last.timeMs = detail::unzigzag(time);
        m.count = qint64(count);
        m.last.value = getDouble(p);
        m.min = getDouble(p);
        m.max = getDouble(p);
        f(qint64(key), m);
    }
    return p == end;
}

// ---------------------------------------------------------------------------------------------
// Impl helpers

sqlite3 *StoreImpl::writable()
{
    if (readOnly)
        throw StoreError(
            (readOnlyReason.isEmpty() ? QStringLiteral("read-only") : readOnlyReason).toStdString());
    return db.get();
}

Stmt &StoreImpl::stmt(const char *sqlText)
{
    auto it = statements.find(sqlText);
    if (it == statements.end())
        it = statements.emplace(sqlText, Stmt(db.get(), sqlText)).first;
    it->second.reset();
    return it->second;
}

std::optional<qint64> StoreImpl::keyId(std::string_view name) const
{
    if (auto it = keyIds.find(std::string(name)); it != keyIds.end())
        return it->second;
    Stmt &s = const_cast<StoreImpl *>(this)->stmt("SELECT key_id FROM metric_keys WHERE name = ?");
    s.bind(1, name);
    if (!s.step())
        return std::nullopt;
    const qint64 id = s.int64(0);
    s.reset();
    if (sqlite3_get_autocommit(db.get()))  // only cache ids that are committed
        keyIds.emplace(std::string(name), id);
    return id;
}

qint64 StoreImpl::ensureKey(std::string_view name)
{
    if (auto id = keyId(name))
        return *id;
    Stmt &s = stmt("INSERT INTO metric_keys (name) VALUES (?)");
    s.bind(1, name).exec();
    const qint64 id = sqlite3_last_insert_rowid(db.get());
    pendingKeys.emplace(std::string(name), id);
    return id;
}

QString StoreImpl::keyName(qint64 id) const
{
    if (auto it = keyNames.find(id); it != keyNames.end())
        return it->second;
    Stmt &s = const_cast<StoreImpl *>(this)->stmt("SELECT name FROM metric_keys WHERE key_id = ?");
    s.bind(1, id);
    QString name = s.step() ? qstr(s.text(0)) : QString();
    s.reset();
    if (sqlite3_get_autocommit(db.get()))
        keyNames.emplace(id, name);
    return name;
}

StoreImpl::Tx::Tx(StoreImpl &impl) : d(impl)
{
    sqlite3 *handle = d.writable();
    if (sqlite3_get_autocommit(handle))
        tx.emplace(handle);
}

StoreImpl::Tx::~Tx()
{
    if (tx && !committed) {
        d.pendingKeys.clear();  // rolled back: those ids may be reused
    }
}

void StoreImpl::Tx::commit()
{
    if (tx) {
        tx->commit();
        for (auto &[name, id] : d.pendingKeys)
            d.keyIds.emplace(name, id);
        d.pendingKeys.clear();
    }
    committed = true;
}

// Writes points of one series: loads the chunks the new points touch (those ending at or after
// the first new step, and the open tail chunk), merges, and rewrites them in full chunks.
void StoreImpl::appendSeries(qint64 run, qint64 key, std::vector<MetricPoint> points)
{
    if (points.empty())
        return;
    std::int64_t minStep = points.front().step;
    for (const MetricPoint &p : points)
        minStep = std::min(minStep, p.step);

    std::vector<MetricPoint> series;
    std::vector<std::int64_t> replaced;
    {
        Stmt &tail =
            stmt("SELECT first_step, last_step, count FROM metric_chunks WHERE run_id = ? AND key_id = ? "
                 "ORDER BY first_step DESC LIMIT 1");
        tail.bind(1, run).bind(2, key);
        bool load = false;
        std::int64_t from = minStep;
        if (tail.step()) {
            const std::int64_t tailFirst = tail.int64(0), tailLast = tail.int64(1), tailCount = tail.int64(2);
            if (tailLast >= minStep) {
                load = true;
            } else if (tailCount < kChunkPoints) {
                load = true;
                from = tailFirst;
            }
            // Chunks never overlap, so "last_step >= from" selects exactly the touched ones.
        }
        tail.reset();
        if (load) {
            Stmt &s = stmt("SELECT first_step, points FROM metric_chunks WHERE run_id = ? AND key_id = ? "
                           "AND last_step >= ? ORDER BY first_step");
            s.bind(1, run).bind(2, key).bind(3, std::int64_t(from));
            while (s.step()) {
                replaced.push_back(s.int64(0));
                if (!decodeChunk(s.blob(1), series))
                    throw StoreError("a metric chunk of run " + std::to_string(run) + " is corrupt");
            }
            s.reset();
        }
    }
    mergeSeries(series, std::move(points));

    Stmt &del = stmt("DELETE FROM metric_chunks WHERE run_id = ? AND key_id = ? AND first_step = ?");
    for (std::int64_t first : replaced)
        del.bind(1, run).bind(2, key).bind(3, first).exec();

    Stmt &ins = stmt("INSERT INTO metric_chunks (run_id, key_id, first_step, last_step, count, min_value, "
                     "max_value, points) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < series.size(); i += kChunkPoints) {
        const std::size_t n = std::min<std::size_t>(kChunkPoints, series.size() - i);
        std::span<const MetricPoint> chunk(series.data() + i, n);
        double lo = std::numeric_limits<double>::quiet_NaN(), hi = lo;
        for (const MetricPoint &p : chunk) {
            if (std::isnan(p.value))
                continue;
            if (std::isnan(lo) || p.value < lo)
                lo = p.value;
            if (std::isnan(hi) || p.value > hi)
                hi = p.value;
        }
        const std::string blob = encodeChunk(chunk);
        ins.bind(1, run)
            .bind(2, key)
            .bind(3, chunk.front().step)
            .bind(4, chunk.back().step)
            .bind(5, std::int64_t(n))
            .bind(6, lo)
            .bind(7, hi)
            .bindBlob(8, blob.data(), blob.size())
            .exec();
    }

    // latest = the series' last point by step (the tail is always among the rewritten chunks).
    const MetricPoint &last = series.back();
    Stmt &agg =
        stmt("SELECT min(min_value), max(max_value), sum(count) FROM metric_chunks WHERE run_id = ? AND "
             "key_id = ?");
    agg.bind(1, run).bind(2, key);
    agg.step();
    const double lo = agg.real(0), hi = agg.real(1);
    const std::int64_t count = agg.int64(2);
    agg.reset();
    stmt("INSERT INTO latest_metrics (run_id, key_id, step, time, value, min_value, max_value, count) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, key_id) DO UPDATE SET step = excluded.step, "
         "time = excluded.time, value = excluded.value, min_value = excluded.min_value, "
         "max_value = excluded.max_value, count = excluded.count")
        .bind(1, run)
        .bind(2, key)
        .bind(3, last.step)
        .bind(4, last.timeMs)
        .bind(5, last.value)
        .bind(6, lo)
        .bind(7, hi)
        .bind(8, count)
        .exec();
}

Run StoreImpl::readRun(const Stmt &s)
{
    Run r;
    r.id = s.int64(0);
    r.uuid = qstr(s.text(1));
    r.experimentId = s.int64(2);
    r.experimentName = qstr(s.text(3));
    r.name = qstr(s.text(4));
    const std::string_view status = s.text(5);  // compared as bytes: no QString per row
    for (RunStatus st : {RunStatus::Scheduled, RunStatus::Running, RunStatus::Finished, RunStatus::Failed,
                         RunStatus::Killed})
        if (status == statusName(st))
            r.status = st;
    r.startTimeMs = s.int64(6);
    r.endTimeMs = s.isNull(7) ? 0 : s.int64(7);
    r.runDir = qstr(s.text(8));
    r.archived = s.text(9) == std::string_view("archived");
    return r;
}

const char *const StoreImpl::kRunColumns =
    "SELECT r.run_id, r.run_uuid, r.experiment_id, e.name, r.name, r.status, r.start_time, r.end_time, "
    "coalesce(r.run_dir, ''), r.lifecycle_stage FROM runs r JOIN experiments e ON e.experiment_id = "
    "r.experiment_id ";

// ---------------------------------------------------------------------------------------------
// Experiments and runs

ExperimentId TrackingStore::ensureExperiment(const QString &name)
{
    return d->guarded("ensureExperiment", [&] {
        if (name.trimmed().isEmpty())
            throw StoreError("an experiment needs a name");
        Impl::Tx tx(*d);
        Stmt &find = d->stmt("SELECT experiment_id FROM experiments WHERE name = ?");
        find.bind(1, utf8(name));
        if (find.step()) {
            const qint64 id = find.int64(0);
            find.reset();
            tx.commit();
            return id;
        }
        find.reset();
        const qint64 now = nowMs();
        d->stmt("INSERT INTO experiments (name, creation_time, last_update_time) VALUES (?, ?, ?)")
            .bind(1, utf8(name))
            .bind(2, now)
            .bind(3, now)
            .exec();
        const qint64 id = sqlite3_last_insert_rowid(d->db.get());
        tx.commit();
        return id;
    });
}

QList<Experiment> TrackingStore::experiments() const
{
    return d->guarded("experiments", [&] {
        QList<Experiment> out;
        Stmt &s = d->stmt("SELECT e.experiment_id, e.name, e.artifact_location, e.creation_time, "
                          "(SELECT count(*) FROM runs r WHERE r.experiment_id = e.experiment_id "
                          "AND r.lifecycle_stage = 'active') "
                          "FROM experiments e ORDER BY e.name");
        while (s.step()) {
            Experiment e;
            e.id = s.int64(0);
            e.name = qstr(s.text(1));
            e.artifactLocation = qstr(s.text(2));
            e.creationTimeMs = s.int64(3);
            e.runCount = s.int64(4);
            out.push_back(e);
        }
        s.reset();
        Stmt &t = d->stmt("SELECT experiment_id, key, value FROM experiment_tags");
        while (t.step())
            for (Experiment &e : out)
                if (e.id == t.int64(0))
                    e.tags.insert(qstr(t.text(1)), qstr(t.text(2)));
        t.reset();
        return out;
    });
}

std::optional<Experiment> TrackingStore::experiment(const QString &name) const
{
    for (const Experiment &e : experiments())
        if (e.name == name)
            return e;
    return std::nullopt;
}

void TrackingStore::setExperimentTag(ExperimentId id, const QString &key, const QString &value)
{
    d->guarded("setExperimentTag", [&] {
        Impl::Tx tx(*d);
        d->stmt("INSERT INTO experiment_tags (experiment_id, key, value) VALUES (?, ?, ?) "
                "ON CONFLICT DO UPDATE SET value = excluded.value")
            .bind(1, id)
            .bind(2, utf8(key))
            .bind(3, utf8(value))
            .exec();
        tx.commit();
    });
}

RunId TrackingStore::createRun(ExperimentId experiment, const QString &name, qint64 startTimeMs,
                               const QString &runDir)
{
    return d->guarded("createRun", [&] {
        Impl::Tx tx(*d);
        const QString uuid = QUuid::createUuid().toString(QUuid::Id128);
        Stmt &s = d->stmt(
            "INSERT INTO runs (run_uuid, experiment_id, name, start_time, run_dir) VALUES (?, ?, ?, ?, ?)");
        s.bind(1, utf8(uuid))
            .bind(2, experiment)
            .bind(3, utf8(name))
            .bind(4, startTimeMs ? startTimeMs : nowMs());
        if (runDir.isEmpty())
            s.bindNull(5);
        else
            s.bind(5, utf8(runDir));
        s.exec();
        const qint64 id = sqlite3_last_insert_rowid(d->db.get());
        d->stmt("UPDATE experiments SET last_update_time = ? WHERE experiment_id = ?")
            .bind(1, nowMs())
            .bind(2, experiment)
            .exec();
        tx.commit();
        return id;
    });
}

void TrackingStore::endRun(RunId run, RunStatus status, qint64 endTimeMs)
{
    d->guarded("endRun", [&] {
        Impl::Tx tx(*d);
        d->stmt("UPDATE runs SET status = ?, end_time = ? WHERE run_id = ?")
            .bind(1, statusName(status))
            .bind(2, endTimeMs ? endTimeMs : nowMs())
            .bind(3, run)
            .exec();
        tx.commit();
    });
}

void TrackingStore::setRunStart(RunId run, qint64 startTimeMs)
{
    d->guarded("setRunStart", [&] {
        Impl::Tx tx(*d);
        d->stmt("UPDATE runs SET start_time = ? WHERE run_id = ?").bind(1, startTimeMs).bind(2, run).exec();
        tx.commit();
    });
}

void TrackingStore::setRunStatus(RunId run, RunStatus status)
{
    d->guarded("setRunStatus", [&] {
        Impl::Tx tx(*d);
        Stmt &s = d->stmt(
            "UPDATE runs SET status = ?1, end_time = CASE WHEN ?1 IN ('RUNNING', 'SCHEDULED') THEN NULL "
            "ELSE end_time END WHERE run_id = ?2");
        s.bind(1, statusName(status)).bind(2, run).exec();
        tx.commit();
    });
}

std::optional<Run> TrackingStore::run(RunId id) const
{
    return d->guarded("run", [&]() -> std::optional<Run> {
        Stmt &s = d->stmt((std::string(Impl::kRunColumns) + "WHERE r.run_id = ?").c_str());
        s.bind(1, id);
        std::optional<Run> out;
        if (s.step())
            out = Impl::readRun(s);
        s.reset();
        return out;
    });
}

std::optional<Run> TrackingStore::findRun(const QString &ref) const
{
    return d->guarded("findRun", [&]() -> std::optional<Run> {
        bool isNumber = false;
        const qint64 id = ref.toLongLong(&isNumber);
        if (isNumber && !ref.startsWith(QLatin1Char('0')))
            if (auto r = run(id))
                return r;
        static const QRegularExpression hex(QStringLiteral("^[0-9a-fA-F]{6,32}$"));
        auto collect = [&](const std::string &where, const std::string &arg) {
            QList<Run> found;
            Stmt s(d->db.get(), std::string(Impl::kRunColumns) + where + " LIMIT 2");
            s.bind(1, arg);
            while (s.step())
                found.push_back(Impl::readRun(s));
            return found;
        };
        QList<Run> found;
        if (hex.match(ref).hasMatch())
            found = collect("WHERE r.run_uuid LIKE ?", ref.toLower().toStdString() + "%");
        if (found.isEmpty())
            found = collect("WHERE r.name = ?", utf8(ref));
        if (found.size() > 1)
            throw StoreError("'" + utf8(ref) + "' names more than one run; use its id or uuid");
        if (found.isEmpty())
            return std::nullopt;
        return found.front();
    });
}

std::optional<RunId> TrackingStore::runByDirectory(const QString &runDir) const
{
    return d->guarded("runByDirectory", [&]() -> std::optional<RunId> {
        Stmt &s = d->stmt("SELECT run_id FROM runs WHERE run_dir = ?");
        s.bind(1, utf8(runDir));
        std::optional<RunId> out;
        if (s.step())
            out = s.int64(0);
        s.reset();
        return out;
    });
}

QList<LatestMetric> StoreImpl::latestOf(qint64 run) const
{
    QList<LatestMetric> out;
    Stmt &s = const_cast<StoreImpl *>(this)->stmt(
        "SELECT key_id, step, time, value, min_value, max_value, count FROM latest_metrics WHERE run_id = ?");
    s.bind(1, run);
    std::vector<std::pair<qint64, LatestMetric>> rows;
    while (s.step()) {
        LatestMetric m;
        m.last = {s.int64(1), s.int64(2), s.real(3)};
        m.min = s.real(4);
        m.max = s.real(5);
        m.count = s.int64(6);
        rows.emplace_back(s.int64(0), m);
    }
    s.reset();
    for (auto &[key, m] : rows) {
        m.key = keyName(key);
        out.push_back(m);
    }
    std::sort(out.begin(), out.end(),
              [](const LatestMetric &a, const LatestMetric &b) { return a.key < b.key; });
    return out;
}

RunDetails TrackingStore::details(RunId id) const
{
    return d->guarded("details", [&] {
        sql::ReadTransaction read(d->db.get());
        RunDetails out;
        auto r = run(id);
        if (!r)
            throw NotFoundError("no run " + std::to_string(id));
        out.run = *r;
        auto readMap = [&](const char *q, QMap<QString, QString> &m) {
            Stmt &s = d->stmt(q);
            s.bind(1, id);
            while (s.step())
                m.insert(qstr(s.text(0)), qstr(s.text(1)));
            s.reset();
        };
        readMap("SELECT key, value FROM params WHERE run_id = ?", out.params);
        readMap("SELECT key, value FROM tags WHERE run_id = ?", out.tags);
        out.metrics = d->latestOf(id);
        Stmt &a =
            d->stmt("SELECT path, kind, step, remote_path, local_path, size FROM artifacts WHERE run_id = ? "
                    "ORDER BY step, path");
        a.bind(1, id);
        while (a.step())
            out.artifacts.push_back(
                {qstr(a.text(0)), qstr(a.text(1)), a.int64(2), qstr(a.text(3)), qstr(a.text(4)), a.int64(5)});
        a.reset();
        return out;
    });
}

void StoreImpl::logParam(qint64 run, std::string_view key, std::string_view value)
{
    Stmt &s =
        stmt("INSERT INTO params (run_id, key, value) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1");
    s.bind(1, run).bind(2, key).bind(3, value);
    const bool inserted = s.step();
    s.reset();
    if (inserted)
        return;
    Stmt &old = stmt("SELECT value FROM params WHERE run_id = ? AND key = ?");
    old.bind(1, run).bind(2, key);
    old.step();
    const std::string existing(old.text(0));
    old.reset();
    if (existing != value)
        throw StoreError("param '" + std::string(key) + "' of run " + std::to_string(run) + " is already '" +
                         existing + "'; params cannot change (got '" + std::string(value) + "')");
}

void StoreImpl::setTag(qint64 run, std::string_view key, std::string_view value)
{
    stmt("INSERT INTO tags (run_id, key, value) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET value = "
         "excluded.value")
        .bind(1, run)
        .bind(2, key)
        .bind(3, value)
        .exec();
}

void TrackingStore::logParams(RunId run, const QList<std::pair<QString, QString>> &params)
{
    d->guarded("logParams", [&] {
        Impl::Tx tx(*d);
        for (const auto &[k, v] : params)
            d->logParam(run, utf8(k), utf8(v));
        tx.commit();
    });
}

void TrackingStore::setTags(RunId run, const QList<std::pair<QString, QString>> &tags)
{
    d->guarded("setTags", [&] {
        Impl::Tx tx(*d);
        for (const auto &[k, v] : tags)
            d->setTag(run, utf8(k), utf8(v));
        tx.commit();
    });
}

void TrackingStore::logMetrics(RunId run, const QList<std::pair<QString, MetricPoint>> &points)
{
    d->guarded("logMetrics", [&] {
        Impl::Tx tx(*d);
        std::map<qint64, std::vector<MetricPoint>> series;
        for (const auto &[k, p] : points)
            series[d->ensureKey(utf8(k))].push_back(p);
        for (auto &[key, pts] : series)
            d->appendSeries(run, key, std::move(pts));
        if (!series.empty())
            d->refreshRunLatest(run);
        tx.commit();
    });
}

void StoreImpl::addArtifact(qint64 run, const Artifact &a)
{
    stmt("INSERT INTO artifacts (run_id, path, kind, step, remote_path, local_path, size, created) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET kind = excluded.kind, step = "
         "excluded.step, "
         "remote_path = excluded.remote_path, local_path = excluded.local_path, size = excluded.size")
        .bind(1, run)
        .bind(2, utf8(a.path))
        .bind(3, utf8(a.kind))
        .bind(4, a.step)
        .bind(5, utf8(a.remotePath))
        .bind(6, utf8(a.localPath))
        .bind(7, a.size)
        .bind(8, nowMs())
        .exec();
}

void TrackingStore::addArtifact(RunId run, const Artifact &artifact)
{
    d->guarded("addArtifact", [&] {
        Impl::Tx tx(*d);
        d->addArtifact(run, artifact);
        tx.commit();
    });
}

void TrackingStore::writeTransaction(const std::function<void()> &f)
{
    d->guarded("transaction", [&] {
        Impl::Tx tx(*d);
        f();
        tx.commit();
    });
}

}  // namespace orrery::core
