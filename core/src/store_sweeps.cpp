// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sweeps, trials and the MLflow mirror's bookkeeping.
#include "storeimpl.h"

#include <QDateTime>
#include <QHash>
#include <QMap>

namespace orrery::core {

using sql::Stmt;

namespace {

constexpr const char kSweepColumns[] =
    "SELECT sweep_id, name, experiment_id, spec, method, metric_name, metric_goal, cluster, array_job_id, "
    "state, spec_file, base_config, root_dir, trial_count, message FROM sweeps ";
constexpr const char kTrialColumns[] =
    "SELECT trial_id, sweep_id, trial_index, attempt, coalesce(run_id, 0), "
    "slurm_job_id, slurm_task_id, run_dir, state, exit_reason, params, config, task, detail, submitted, "
    "ended, user_retry, started, gpus, cpus, nodes, health, progress, expected_start FROM trials ";

Sweep readSweep(const Stmt &s)
{
    Sweep w;
    w.id = s.int64(0);
    w.name = qstr(s.text(1));
    w.experimentId = s.int64(2);
    w.spec = qstr(s.text(3));
    w.method = qstr(s.text(4));
    w.metricName = qstr(s.text(5));
    w.metricGoal = goalFromText(qstr(s.text(6))).value_or(Goal::Minimize);
    w.cluster = qstr(s.text(7));
    w.arrayJobId = qstr(s.text(8));
    w.state = qstr(s.text(9));
    w.specFile = qstr(s.text(10));
    w.baseConfig = qstr(s.text(11));
    w.rootDir = qstr(s.text(12));
    w.trialCount = int(s.int64(13));
    w.message = qstr(s.text(14));
    return w;
}

}  // namespace

const TrackingStore &SweepBook::store() const
{
    return static_cast<const TrackingStore &>(*this);  // only a TrackingStore makes a SweepBook
}

SweepId SweepBook::createSweep(const Sweep &sw)
{
    return d->guarded("createSweep", [&] {
        Impl::Tx tx(*d);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        d->stmt(
             "INSERT INTO sweeps (name, experiment_id, spec, method, metric_name, metric_goal, cluster, "
             "array_job_id, state, created, updated, spec_file, base_config, root_dir, trial_count, message) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(1, utf8(sw.name))
            .bind(2, sw.experimentId)
            .bind(3, utf8(sw.spec))
            .bind(4, utf8(sw.method))
            .bind(5, utf8(sw.metricName))
            .bind(6, utf8(toString(sw.metricGoal)))
            .bind(7, utf8(sw.cluster))
            .bind(8, utf8(sw.arrayJobId))
            .bind(9, utf8(sw.state.isEmpty() ? toText(SweepState::Pending) : sw.state))
            .bind(10, now)
            .bind(11, now)
            .bind(12, utf8(sw.specFile))
            .bind(13, utf8(sw.baseConfig))
            .bind(14, utf8(sw.rootDir))
            .bind(15, sw.trialCount)
            .bind(16, utf8(sw.message))
            .exec();
        const SweepId id = sqlite3_last_insert_rowid(d->db.get());
        tx.commit();
        return id;
    });
}

std::optional<Sweep> SweepBook::sweep(SweepId id) const
{
    return d->guarded("sweep", [&]() -> std::optional<Sweep> {
        Stmt &s = d->stmt(std::string(kSweepColumns) + "WHERE sweep_id = ?");
        s.bind(1, id);
        std::optional<Sweep> out;
        if (s.step())
            out = readSweep(s);
        s.reset();
        return out;
    });
}

std::optional<Sweep> SweepBook::findSweep(const QString &ref) const
{
    bool isNumber = false;
    const qint64 id = ref.toLongLong(&isNumber);
    if (isNumber)
        if (auto s = sweep(id))
            return s;
    return d->guarded("findSweep", [&]() -> std::optional<Sweep> {
        // The newest sweep of that name (names repeat as people rerun a spec).
        Stmt &s = d->stmt(std::string(kSweepColumns) + "WHERE name = ? ORDER BY sweep_id DESC LIMIT 1");
        s.bind(1, utf8(ref));
        std::optional<Sweep> out;
        if (s.step())
            out = readSweep(s);
        s.reset();
        return out;
    });
}

QList<Sweep> SweepBook::sweeps() const
{
    return d->guarded("sweeps", [&] {
        QList<Sweep> out;
        Stmt &s = d->stmt(std::string(kSweepColumns) + "ORDER BY sweep_id");
        while (s.step())
            out.push_back(readSweep(s));
        s.reset();
        return out;
    });
}

void SweepBook::setSweepMessage(SweepId id, const QString &message)
{
    d->guarded("setSweepMessage", [&] {
        Impl::Tx tx(*d);
        d->stmt("UPDATE sweeps SET message = ?, updated = ? WHERE sweep_id = ?")
            .bind(1, utf8(message))
            .bind(2, QDateTime::currentMSecsSinceEpoch())
            .bind(3, id)
            .exec();
        tx.commit();
    });
}

void SweepBook::setSweepState(SweepId id, const QString &state, const QString &arrayJobId)
{
    d->guarded("setSweepState", [&] {
        Impl::Tx tx(*d);
        d->stmt("UPDATE sweeps SET state = ?, array_job_id = CASE WHEN ? = '' THEN array_job_id ELSE ? END, "
                "updated = ? WHERE sweep_id = ?")
            .bind(1, utf8(state))
            .bind(2, utf8(arrayJobId))
            .bind(3, utf8(arrayJobId))
            .bind(4, QDateTime::currentMSecsSinceEpoch())
            .bind(5, id)
            .exec();
        tx.commit();
    });
}

static void bindTrial(Stmt &s, const Trial &t)
{
    s.bind(1, t.sweepId).bind(2, t.index).bind(3, t.attempt);
    if (t.runId)
        s.bind(4, t.runId);
    else
        s.bindNull(4);
    s.bind(5, utf8(t.slurmJobId))
        .bind(6, utf8(t.slurmTaskId))
        .bind(7, utf8(t.runDir))
        .bind(8, utf8(t.state.isEmpty() ? toText(TrialState::Pending) : t.state))
        .bind(9, utf8(t.exitReason))
        .bind(10, utf8(t.params.isEmpty() ? QStringLiteral("{}") : t.params))
        .bind(11, utf8(t.config))
        .bind(12, utf8(t.task))
        .bind(13, utf8(t.detail))
        .bind(14, t.submittedMs)
        .bind(15, t.endedMs)
        .bind(16, t.userRetry ? 1 : 0)
        .bind(17, t.startedMs)
        .bind(18, t.gpus)
        .bind(19, t.cpus)
        .bind(20, utf8(t.nodes))
        .bind(21, utf8(t.health))
        .bind(22, t.progressMs)
        .bind(23, t.expectedStartMs);
}

qint64 SweepBook::addTrial(const Trial &trial)
{
    return d->guarded("addTrial", [&] {
        Impl::Tx tx(*d);
        Stmt &s = d->stmt(
            "INSERT INTO trials (sweep_id, trial_index, attempt, run_id, slurm_job_id, slurm_task_id, "
            "run_dir, state, exit_reason, params, config, task, detail, submitted, ended, user_retry, "
            "started, gpus, cpus, nodes, health, progress, expected_start) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        bindTrial(s, trial);
        s.exec();
        const qint64 id = sqlite3_last_insert_rowid(d->db.get());
        tx.commit();
        return id;
    });
}

namespace {
// Both updates write every column in bindTrial's order (the trial id is parameter 24); the
// conditional one only over the state its caller read (parameter 25).
const std::string kUpdateTrial =
    "UPDATE trials SET sweep_id = ?, trial_index = ?, attempt = ?, run_id = ?, slurm_job_id = ?, "
    "slurm_task_id = ?, run_dir = ?, state = ?, exit_reason = ?, params = ?, config = ?, task = ?, "
    "detail = ?, submitted = ?, ended = ?, user_retry = ?, started = ?, gpus = ?, cpus = ?, nodes = ?, "
    "health = ?, progress = ?, expected_start = ? "
    "WHERE trial_id = ?";
const std::string kUpdateTrialIf = kUpdateTrial + " AND state = ?";
}  // namespace

void SweepBook::updateTrial(const Trial &trial)
{
    d->guarded("updateTrial", [&] {
        Impl::Tx tx(*d);
        Stmt &s = d->stmt(kUpdateTrial);
        bindTrial(s, trial);
        s.bind(24, trial.id).exec();
        tx.commit();
    });
}

bool SweepBook::updateTrialIf(const QString &expectedState, const Trial &trial)
{
    return d->guarded("updateTrialIf", [&] {
        Impl::Tx tx(*d);
        Stmt &s = d->stmt(kUpdateTrialIf);
        bindTrial(s, trial);
        s.bind(24, trial.id).bind(25, utf8(expectedState)).exec();
        const bool written = sqlite3_changes(d->db.get()) > 0;
        tx.commit();
        return written;
    });
}

namespace {
Trial readTrial(Stmt &s)
{
    Trial t;
    t.id = s.int64(0);
    t.sweepId = s.int64(1);
    t.index = int(s.int64(2));
    t.attempt = int(s.int64(3));
    t.runId = s.int64(4);
    t.slurmJobId = qstr(s.text(5));
    t.slurmTaskId = qstr(s.text(6));
    t.runDir = qstr(s.text(7));
    t.state = qstr(s.text(8));
    t.exitReason = qstr(s.text(9));
    t.params = qstr(s.text(10));
    t.config = qstr(s.text(11));
    t.task = qstr(s.text(12));
    t.detail = qstr(s.text(13));
    t.submittedMs = s.int64(14);
    t.endedMs = s.int64(15);
    t.userRetry = s.int64(16) != 0;
    t.startedMs = s.int64(17);
    t.gpus = int(s.int64(18));
    t.cpus = int(s.int64(19));
    t.nodes = qstr(s.text(20));
    t.health = qstr(s.text(21));
    t.progressMs = s.int64(22);
    t.expectedStartMs = s.int64(23);
    return t;
}

QList<Trial> readTrials(TrackingStore::Impl &d, const char *whereOrder, qint64 id)
{
    QList<Trial> out;
    Stmt &s = d.stmt(std::string(kTrialColumns) + whereOrder);
    s.bind(1, id);
    while (s.step())
        out.push_back(readTrial(s));
    s.reset();
    return out;
}
}  // namespace

QList<Trial> SweepBook::trials(SweepId sweepId) const
{
    return d->guarded("trials", [&] {
        return readTrials(*d, "WHERE sweep_id = ? ORDER BY trial_index, attempt", sweepId);
    });
}

QList<Trial> SweepBook::attemptsOfRun(RunId run) const
{
    return d->guarded("attemptsOfRun",
                      [&] { return readTrials(*d, "WHERE run_id = ? ORDER BY attempt", run); });
}

QList<Trial> latestAttempts(const QList<Trial> &attempts)
{
    QMap<int, Trial> latest;
    for (const Trial &t : attempts) {
        auto it = latest.find(t.index);
        if (it == latest.end() || t.attempt >= it->attempt)
            latest.insert(t.index, t);
    }
    return latest.values();
}

std::optional<Trial> latestAttempt(const QList<Trial> &attempts, int index)
{
    std::optional<Trial> latest;
    for (const Trial &t : attempts)
        if (t.index == index && (!latest || t.attempt >= latest->attempt))
            latest = t;
    return latest;
}

PhaseCounts countPhases(const QList<Trial> &attempts)
{
    PhaseCounts c;
    for (const Trial &t : latestAttempts(attempts)) {
        ++c.total;
        switch (phaseOf(t.trialState())) {
        case Phase::Queued:
            ++c.queued;
            break;
        case Phase::Running:
            ++c.running;
            break;
        case Phase::Done:
            ++c.done;
            break;
        case Phase::Failed:
            ++c.failed;
            break;
        case Phase::Stopped:
            ++c.stopped;
            break;
        }
    }
    return c;
}

QList<TrialSummary> summarizeTrials(const Sweep &sweep, const QList<Trial> &attempts,
                                    const std::function<const RunRow *(RunId)> &runOf)
{
    QHash<int, int> attemptCount;
    for (const Trial &t : attempts)
        ++attemptCount[t.index];
    const bool maximize = sweep.metricGoal == Goal::Maximize;
    QList<TrialSummary> out;
    for (const Trial &t : latestAttempts(attempts)) {
        TrialSummary s{t, attemptCount.value(t.index), -1, std::nullopt, std::nullopt};
        if (const RunRow *run = t.runId ? runOf(t.runId) : nullptr) {
            for (const LatestMetric &m : run->latest)
                s.step = std::max<qint64>(s.step, m.last.step);
            if (const LatestMetric *m = run->metric(sweep.metricName)) {
                s.latest = m->last.value;
                s.best = maximize ? m->max : m->min;
            }
        }
        out.append(s);
    }
    return out;
}

QList<TrialSummary> SweepBook::trialSummaries(SweepId sweepId) const
{
    const auto sw = sweep(sweepId);
    if (!sw)
        return {};
    RunQuery q;
    q.sweep = sweepId;
    QHash<RunId, RunRow> runs;
    for (RunRow &row : store().queryRuns(q))
        runs.insert(row.run.id, std::move(row));
    return summarizeTrials(*sw, trials(sweepId), [&runs](RunId run) -> const RunRow * {
        const auto it = runs.constFind(run);
        return it == runs.constEnd() ? nullptr : &*it;
    });
}

std::optional<RunRow> SweepBook::bestRun(SweepId sweepId) const
{
    const auto sw = sweep(sweepId);
    if (!sw || sw->metricName.isEmpty())
        return std::nullopt;
    RunQuery q;
    q.sweep = sweepId;
    q.orderByMetric = sw->metricName;
    q.descending = sw->metricGoal == Goal::Maximize;
    q.limit = 1;
    q.conditions = {{RunCondition::Scope::Attribute, QStringLiteral("status"), RunCondition::Op::Ne,
                     toString(RunStatus::Killed)},
                    {RunCondition::Scope::Attribute, QStringLiteral("status"), RunCondition::Op::Ne,
                     toString(RunStatus::Failed)}};
    QList<RunRow> rows = store().queryRuns(q);
    if (rows.isEmpty() || !rows.front().metric(sw->metricName)) {
        q.conditions.clear();
        rows = store().queryRuns(q);
    }
    if (rows.isEmpty() || !rows.front().metric(sw->metricName))
        return std::nullopt;
    return rows.front();
}

SweepLease SweepBook::acquireSweepLease(SweepId sweep, const QString &follower, qint64 ttlMs, qint64 nowMs)
{
    if (follower.isEmpty())
        throw StoreError("acquireSweepLease: a follower needs an id");
    const qint64 now = nowMs ? nowMs : QDateTime::currentMSecsSinceEpoch();
    return d->guarded("acquireSweepLease", [&] {
        Impl::Tx tx(*d);
        // Insert, or take over when the lease is ours or has lapsed; otherwise leave it as it is.
        d->stmt("INSERT INTO sweep_leases (sweep_id, holder, acquired, expires) VALUES (?1, ?2, ?3, ?4) "
                "ON CONFLICT (sweep_id) DO UPDATE SET "
                "acquired = CASE WHEN holder = excluded.holder AND expires > ?3 THEN acquired "
                "ELSE excluded.acquired END, "
                "holder = excluded.holder, expires = excluded.expires "
                "WHERE holder = excluded.holder OR expires <= ?3")
            .bind(1, sweep)
            .bind(2, utf8(follower))
            .bind(3, now)
            .bind(4, now + std::max<qint64>(ttlMs, 1))
            .exec();
        Stmt &s = d->stmt("SELECT holder, acquired, expires FROM sweep_leases WHERE sweep_id = ?");
        s.bind(1, sweep);
        SweepLease lease{sweep, {}, 0, 0};
        if (s.step())
            lease = {sweep, qstr(s.text(0)), s.int64(1), s.int64(2)};
        s.reset();
        tx.commit();
        return lease;
    });
}

bool SweepBook::expireSweepLease(SweepId sweep, const QString &holder)
{
    return d->guarded("expireSweepLease", [&] {
        Impl::Tx tx(*d);
        Stmt &s = d->stmt("UPDATE sweep_leases SET expires = 0 WHERE sweep_id = ? AND holder = ?");
        s.bind(1, sweep).bind(2, utf8(holder)).exec();
        const bool done = sqlite3_changes(d->db.get()) > 0;
        tx.commit();
        return done;
    });
}

std::optional<SweepLease> SweepBook::sweepLease(SweepId sweep) const
{
    return d->guarded("sweepLease", [&]() -> std::optional<SweepLease> {
        Stmt &s = d->stmt("SELECT holder, acquired, expires FROM sweep_leases WHERE sweep_id = ?");
        s.bind(1, sweep);
        std::optional<SweepLease> out;
        if (s.step())
            out = SweepLease{sweep, qstr(s.text(0)), s.int64(1), s.int64(2)};
        s.reset();
        return out;
    });
}

int SweepBook::releaseSweepLeases(const QString &follower, SweepId sweep)
{
    return d->guarded("releaseSweepLeases", [&] {
        Impl::Tx tx(*d);
        d->stmt("DELETE FROM sweep_leases WHERE holder = ? AND (? = 0 OR sweep_id = ?)")
            .bind(1, utf8(follower))
            .bind(2, sweep)
            .bind(3, sweep)
            .exec();
        const int n = sqlite3_changes(d->db.get());
        tx.commit();
        return n;
    });
}

TrackingStore::MirrorState TrackingStore::mirrorState(const QString &server, RunId run) const
{
    return d->guarded("mirrorState", [&] {
        MirrorState st;
        Stmt &s =
            d->stmt("SELECT remote_run_id, params_sent FROM mlflow_mirror WHERE server = ? AND run_id = ?");
        s.bind(1, utf8(server)).bind(2, run);
        if (s.step()) {
            st.remoteRunId = qstr(s.text(0));
            st.paramsSent = s.int64(1) != 0;
        }
        s.reset();
        Stmt &m = d->stmt("SELECT k.name, m.last_step FROM mlflow_mirror_metrics m JOIN metric_keys k ON "
                          "k.key_id = m.key_id WHERE m.server = ? AND m.run_id = ?");
        m.bind(1, utf8(server)).bind(2, run);
        while (m.step())
            st.lastStep.insert(qstr(m.text(0)), m.int64(1));
        m.reset();
        return st;
    });
}

void TrackingStore::saveMirrorState(const QString &server, RunId run, const MirrorState &st)
{
    d->guarded("saveMirrorState", [&] {
        Impl::Tx tx(*d);
        d->stmt("INSERT INTO mlflow_mirror (server, run_id, remote_run_id, params_sent) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO UPDATE SET remote_run_id = excluded.remote_run_id, params_sent = "
                "excluded.params_sent")
            .bind(1, utf8(server))
            .bind(2, run)
            .bind(3, utf8(st.remoteRunId))
            .bind(4, st.paramsSent ? 1 : 0)
            .exec();
        for (auto it = st.lastStep.begin(); it != st.lastStep.end(); ++it)
            d->stmt(
                 "INSERT INTO mlflow_mirror_metrics (server, run_id, key_id, last_step) VALUES (?, ?, ?, ?) "
                 "ON CONFLICT DO UPDATE SET last_step = excluded.last_step")
                .bind(1, utf8(server))
                .bind(2, run)
                .bind(3, d->ensureKey(utf8(it.key())))
                .bind(4, it.value())
                .exec();
        tx.commit();
    });
}

}  // namespace orrery::core
