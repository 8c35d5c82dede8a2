// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweeprunner.h"

#include "orrery/core/command.h"
#include "orrery/core/earlystop.h"
#include "orrery/core/format.h"
#include "orrery/core/healthreport.h"
#include "orrery/core/runfiles.h"
#include "orrery/core/sweeprules.h"
#include "orrery/core/sweepsearch.h"
#include "orrery/core/tfevents.h"
#include "orrery/core/usage.h"

#include <QDir>
#include <QElapsedTimer>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QMutex>
#include <QMutexLocker>
#include <QRandomGenerator>
#include <QSet>
#include <QSysInfo>

#include <cerrno>
#include <csignal>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace orrery::core {

// The detail of attempts whose launch lost its reply (LaunchInterrupted): relaunched first, whole.
constexpr char kLaunchInterrupted[] = "launch interrupted, launched again next tick: ";

namespace {

const QString kEvents = QStringLiteral("events.jsonl");
constexpr qint64 kExitBytes = 64 * 1024;

QString jsonParams(const TrialParams &params)
{
    return QString::fromUtf8(QJsonDocument(paramsJson(params)).toJson(QJsonDocument::Compact));
}

// The stored params typed again by the spec (JSON does not tell 3 from 3.0).
TrialParams typedParams(const QString &json, const QList<ParamSpec> &space)
{
    const QJsonObject o = QJsonDocument::fromJson(json.toUtf8()).object();
    TrialParams out;
    for (const ParamSpec &p : space) {
        const QJsonValue v = o.value(p.key);
        // A listed value comes back as it was written: a command's values are typed one by one
        // (1, 2.5 and "1e-4" in one list), and may be lists or None.
        if (p.distribution == Distribution::Constant || p.distribution == Distribution::Categorical) {
            const auto same = std::find_if(p.values.begin(), p.values.end(), [&](const QVariant &x) {
                return QJsonValue::fromVariant(x) == v;
            });
            if (same != p.values.end()) {
                out.append({p.key, *same});
                continue;
            }
        }
        switch (p.type) {
        case ConfigKey::Type::Int:
            out.append({p.key, QVariant::fromValue(qint64(std::llround(v.toDouble())))});
            break;
        case ConfigKey::Type::Float:
            out.append({p.key, QVariant(v.toDouble())});
            break;
        case ConfigKey::Type::Bool:
            out.append({p.key, QVariant(v.toBool())});
            break;
        case ConfigKey::Type::String:
            out.append({p.key, QVariant(v.toString())});
            break;
        }
    }
    return out;
}

// A command's metrics by regex: its standard output, read from the stored offset (command.h).
struct StdoutRead {
    qsizetype active = 0, read = 0;  // indexes into Tick::active and Tick::reads
    QString file;
    qint64 offset = 0;
    const SweepSpec *spec = nullptr;
};

// A command run's files found by listing (runfiles.h): its TensorBoard event files, each read
// from its stored offset, and its sample files matched by the spec's `artifacts` rules. A file
// the listing finds is read from the next tick on (the listing and the reads share one round trip).
struct RunFilesRead {
    qsizetype active = 0;  // index into Tick::active
    const SweepSpec *spec = nullptr;
    QList<std::pair<QString, qsizetype>> listings;  // (directory, index into Tick::reads)
    struct Events {
        QString file;  // its ingest key: relative to the run dir
        qint64 offset = 0;
        qsizetype read = 0;
    };
    QList<Events> events;
};

// What one tick found and read, handed from phase to phase (SweepRunner::tick).
struct Tick {
    struct Active {
        Sweep sweep;
        Trial trial;
    };
    QList<Active> active;  // the latest attempts that are queued or running, of every sweep
    QList<Sweep> sweeps;
    // Every attempt as the tick found it (the earlier attempts of a trial do not change during it).
    QHash<SweepId, QList<Trial>> attemptsOf;
    // The sweeps this tick acts on, with the lease it holds on each; the others it only reads.
    QHash<SweepId, SweepLease> acting;
    QHash<QString, TaskStatus> status;  // the poll's answer, by task id
    // One batched read: reads[i] is active[i]'s events.jsonl (from eventOffsets[i]), then the
    // exit.json files (exitReadOf[i]: active[i]'s, or -1) and the command outputs (stdoutReads).
    QList<FileRead> reads;
    QList<qint64> eventOffsets;
    QList<int> exitReadOf;
    QList<StdoutRead> stdoutReads;
    QList<RunFilesRead> runFiles;  // and a command run's listings and event files
    // The health check's verdicts (<run dir>/health.json: healthreport.h), read until an attempt
    // has them: healthReadOf[i] is active[i]'s read, or -1; healthChanged[i]: newly found.
    QList<int> healthReadOf;
    QList<bool> healthChanged;
    QList<FileChunk> chunks;  // one per read; empty: the read failed
    // Progress (docs/sweeps.md "Hangs"): per active attempt, whether anything of it grew this
    // tick (events, stdout metrics, TensorBoard records, its output logs); and the size-only
    // reads of the running attempts' logs (active index, read index).
    QList<bool> progressed;
    QList<std::pair<qsizetype, qsizetype>> logSizeReads;
    QHash<SweepId, QList<Trial>> relaunch;  // the resubmissions decided this tick, by sweep
};

// What this process has seen of the running attempts' progress, shared by its runners (the
// monitor and the window make a runner per tick): each output log's last size, so that its
// growth counts as progress, and each attempt's longest gap between two signs of progress (the
// pace `hang_timeout: auto` derives its limit from). Only what this process saw: a follower that
// starts anew learns the pace again, the floor holding meanwhile.
struct ProgressMemory {
    QMutex mutex;
    QHash<QString, qint64> logSizes;  // by executor name and path
    QHash<qint64, qint64> longestGapMs;  // by trial (attempt) id
};
ProgressMemory &progressMemory()
{
    static ProgressMemory memory;
    return memory;
}

// An attempt's progress is stored at most this often (it is a time, compared against limits of
// minutes): a trial that logs every step writes its trial row every 5 s, not at every tick.
constexpr qint64 kProgressWriteMs = 5'000;

// The latest attempt of each trial index, keyed by it.
QMap<int, Trial> latest(const QList<Trial> &all)
{
    QMap<int, Trial> out;
    for (const Trial &t : latestAttempts(all))
        out.insert(t.index, t);
    return out;
}

// The latest attempt of trial `index` of the sweep; throws when it has no such trial.
Trial latestAttempt(const Sweep &sweep, const QList<Trial> &attempts, int index)
{
    const QMap<int, Trial> byIndex = latest(attempts);
    const auto it = byIndex.find(index);
    if (it == byIndex.end())
        throw std::runtime_error(
            QStringLiteral("sweep %1 has no trial %2").arg(sweep.name).arg(index).toStdString());
    return *it;
}

// What a launch's call of the executor came to: the task ids, or why the attempts wait or failed.
struct LaunchOutcome {
    QStringList ids;
    // Why the attempts from `launched` on wait: "waiting for room under ...", "held: ..." or a
    // lost reply (kLaunchInterrupted); each is recorded pending.
    QString held;
    QString failure;  // not empty: the launch failed, every attempt recorded failed
    qsizetype launched = 0;  // the attempts launched (the others held back)
};

// Attempt `i` of a launch as the outcome leaves it: queued with its task id, pending with why,
// or failed.
void settleAttempt(Trial &t, qsizetype i, const LaunchOutcome &outcome, const QString &keptOut, qint64 now)
{
    if (i >= outcome.launched) {  // held back: recorded pending, launched later
        t.setState(TrialState::Pending);
        t.detail = outcome.held.startsWith(QLatin1String("held: ")) ||
                outcome.held.startsWith(QLatin1String(kLaunchInterrupted))
            ? outcome.held
            : QStringLiteral("held: ") + outcome.held;
    } else if (outcome.failure.isEmpty()) {
        t.submittedMs = now;
        t.detail.clear();
        t.task = outcome.ids[i];
        t.setState(TrialState::Queued);
        if (!keptOut.isEmpty())
            t.detail = keptOut;
        const qsizetype underscore = t.task.indexOf(QLatin1Char('_'));
        if (underscore > 0) {  // a Slurm array task: job id and task id for people
            t.slurmJobId = t.task.left(underscore);
            t.slurmTaskId = t.task.mid(underscore + 1);
        }
    } else {
        t.submittedMs = now;
        t.setState(TrialState::Failed);
        t.exitReason = QStringLiteral("could not be submitted: ") + outcome.failure;
        t.endedMs = now;
    }
}

// An attempt seen running: whether it progressed this tick, remembered (the longest gap, for
// `hang_timeout: auto`) and stored as its progressMs at most every kProgressWriteMs. A hung
// attempt being ended keeps the progress it was judged by (what it prints as it ends is not a
// recovery).
void noteProgress(LiveAttempt &live, const SweepSpec &spec, bool progressed, qint64 now)
{
    Trial &t = live.trial;
    if (!progressed || isHungAttempt(t) || t.startedMs <= 0)
        return;
    if (t.progressMs >= t.startedMs) {
        ProgressMemory &memory = progressMemory();
        const QMutexLocker lock(&memory.mutex);
        qint64 &gap = memory.longestGapMs[t.id];
        gap = std::max(gap, now - t.progressMs);
        // A short hang_timeout (seconds, in tests) is judged at a finer grain.
        const qint64 grain = std::min(kProgressWriteMs, hangLimits(spec.hangTimeoutMs, gap).progressMs / 4);
        if (now - t.progressMs < grain)
            return;
    }
    t.progressMs = now;
    live.changed = true;
}

}  // namespace

QString processFollowerId()
{
    // The random part tells apart two processes that reuse a pid (a follower that crashed and a
    // new one), so a new process never mistakes a dead one's lease for its own.
    static const QString id = QStringLiteral("%1:%2:%3")
                                  .arg(QSysInfo::machineHostName())
                                  .arg(qint64(::getpid()))
                                  .arg(QRandomGenerator::system()->generate(), 8, 16, QLatin1Char('0'));
    return id;
}

bool followerIsGone(const QString &followerId)
{
    const QStringList parts = followerId.split(QLatin1Char(':'));
    if (parts.size() != 3 || parts[0] != QSysInfo::machineHostName())
        return false;
    bool ok = false;
    const qint64 pid = parts[1].toLongLong(&ok);
    if (!ok || pid <= 0 || pid == qint64(::getpid()))
        return false;
    // A pid reused by another process reads as alive: the lease then lapses by its TTL.
    return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

struct SweepRunner::Impl {
    TrackingStore &store;
    Executor &executor;
    TrainerSchema schema;
    Follower follower;
    int quietTicks = 0;
    QHash<SweepId, SweepSpec> specs;
    QHash<SweepId, QList<CompiledMetricRule>> metricRules;  // a command sweep's, compiled once
    // An event file's next record, when it is longer than a read (a large GIF): read it whole.
    QHash<std::pair<RunId, QString>, qint64> tfNeedBytes;
    // The sample files already recorded per run, with the size recorded (a file still being
    // written is recorded again as it grows).
    QHash<RunId, QHash<QString, qint64>> samplesSeen;
    std::optional<SubmitLimits> submitLimits;  // limits(): asked of the executor once
    QHash<SweepId, CodeSnapshot> codeSnapshots;  // codeSnapshot(): asked of the executor once

    Sweep sweepOrThrow(SweepId id) const
    {
        const auto sw = store.sweep(id);
        if (!sw)
            throw std::runtime_error(QStringLiteral("no sweep %1").arg(id).toStdString());
        return *sw;
    }

    // The sweep's spec, or nullptr with why in the report (a stored spec the schema no longer takes:
    // the tick goes on with the other sweeps).
    const SweepSpec *specOrReport(const Sweep &sweep, TickReport &report)
    {
        try {
            return &spec(sweep);
        } catch (const std::exception &e) {
            report.errors << QString::fromUtf8(e.what());
            return nullptr;
        }
    }

    // The sweep's spec for planning reads, or nullptr: a spec that no longer parses is reported
    // where the sweep's decisions are made (specOrReport), once per tick.
    const SweepSpec *specOrSkip(const Sweep &sweep)
    {
        try {
            return &spec(sweep);
        } catch (const std::exception &) {
            return nullptr;
        }
    }

    const SweepSpec &spec(const Sweep &sweep)
    {
        auto it = specs.find(sweep.id);
        if (it == specs.end()) {
            const SpecParse parsed = parseSweepSpec(sweep.spec.toUtf8(), sweep.specFile, schema);
            if (!parsed.spec) {
                QStringList lines;
                for (const SpecError &e : parsed.errors)
                    lines << e.toString();
                throw std::runtime_error(
                    QStringLiteral(
                        "sweep %1: its stored spec no longer parses against the trainer's schema:\n%2")
                        .arg(sweep.name, lines.join(QLatin1Char('\n')))
                        .toStdString());
            }
            it = specs.insert(sweep.id, *parsed.spec);
        }
        return *it;
    }

    // The executor's limits on what may be queued, asked once per runner (one round trip on a
    // cluster); none where it cannot say (the launch's own refusal then holds what does not fit).
    const SubmitLimits &limits()
    {
        if (!submitLimits) {
            try {
                submitLimits = executor.submitLimits();
            } catch (const std::exception &) {
                submitLimits = SubmitLimits{};
            }
        }
        return *submitLimits;
    }

    // Launches attempts (new trials, relaunches or pending ones) as one batch and records them.
    // `attempts` hold index, attempt, run, run dir, params and config (and their id where they
    // are already recorded as pending); on success each gets its task id. What the executor's
    // limits leave no room for (submitRoom), a launch it held back for a limit (Launched::held) or one
    // whose reply was lost (LaunchInterrupted: the batch number stays, so the next launch of it
    // answers the recorded ids) is recorded pending, with why in its detail: launchPending hands
    // it over on a later tick.
    void launch(const Sweep &sweep, const SweepSpec &spec, QList<Trial> attempts)
    {
        const QList<Trial> recorded = store.trials(sweep.id);
        int active = 0, launchedBefore = 0;
        for (const Trial &t : latestAttempts(recorded))
            active += t.isActive() ? 1 : 0;
        for (const Trial &t : recorded)
            launchedBefore += t.trialState() == TrialState::Pending ? 0 : 1;
        QString limitWhy;
        const int room = submitRoom(limits(), active, int(attempts.size()), &limitWhy);
        LaunchBatch batch;
        batch.sweepName = sweep.name;
        batch.sweepDir = sweep.rootDir;
        // Every launch records at least one attempt that is not pending: the number grows.
        batch.batch = launchedBefore;
        batch.healthCheck = healthCheckArgs(spec.healthCheck);
        batch.maxConcurrent = std::max(1, spec.maxConcurrent);
        batch.resources = spec.resources;
        const QString keptOut = excludeSuspects(batch);
        for (const Trial &t : attempts.mid(0, room))
            batch.tasks.append(taskLaunch(spec, t.index, t.attempt, t.runDir,
                                          typedParams(t.params, spec.parameters), t.config.toUtf8(),
                                          sweep.baseConfig.toUtf8()));
        const LaunchOutcome outcome = launchBatch(sweep, spec, batch, limitWhy);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        store.writeTransaction([&] {
            for (qsizetype i = 0; i < attempts.size(); ++i) {
                Trial &t = attempts[i];
                t.sweepId = sweep.id;
                t.gpus = allocatedGpus(spec.resources);
                t.cpus = allocatedCpus(spec.resources);
                settleAttempt(t, i, outcome, keptOut, now);
                if (t.id)
                    store.updateTrial(t);
                else
                    t.id = store.addTrial(t);
                if (t.runId)
                    store.setRunStatus(t.runId,
                                       outcome.failure.isEmpty() ? RunStatus::Scheduled : RunStatus::Failed);
            }
        });
        if (!outcome.failure.isEmpty())
            throw std::runtime_error(outcome.failure.toStdString());
    }

    // The batch handed to the executor (a command sweep's code snapshot made first, where it has
    // none yet); `limitWhy`: the executor's limit that left no room for the attempts not in it.
    LaunchOutcome launchBatch(const Sweep &sweep, const SweepSpec &spec, const LaunchBatch &batch,
                              const QString &limitWhy)
    {
        LaunchOutcome outcome;
        outcome.held =
            limitWhy.isEmpty() ? QString() : QStringLiteral("waiting for room under %1").arg(limitWhy);
        outcome.launched = batch.tasks.size();
        try {
            // A sweep made before code snapshots, or whose first snapshot failed, gets one now: its
            // tasks' directories are made from it.
            if (!batch.tasks.isEmpty())
                codeSnapshot(sweep, spec);
            Launched launched;
            if (!batch.tasks.isEmpty())
                launched = executor.launch(batch);
            outcome.ids = launched.taskIds;
            if (!launched.held.isEmpty()) {
                outcome.held = QStringLiteral("held: %1").arg(launched.held);
                outcome.launched = 0;
            } else if (outcome.ids.size() != batch.tasks.size()) {
                outcome.failure = QStringLiteral("the executor returned %1 task ids for %2 trials")
                                      .arg(outcome.ids.size())
                                      .arg(batch.tasks.size());
            }
        } catch (const LaunchInterrupted &e) {
            outcome.held = QLatin1String(kLaunchInterrupted) + QString::fromUtf8(e.what());
            outcome.launched = 0;
        } catch (const std::exception &e) {
            outcome.failure = QString::fromUtf8(e.what());
        }
        return outcome;
    }

    // The cluster's suspect nodes into `batch` (sbatch --exclude), as many as leave the trial
    // room (excludedNodes). Returns what the attempts' detail says meanwhile: which nodes are
    // kept out, and which are not because the trial would not fit without them.
    QString excludeSuspects(LaunchBatch &batch)
    {
        const QList<SuspectNode> suspects = store.suspectNodes(executor.name());
        if (suspects.isEmpty())
            return {};
        QStringList schedulable;
        QStringList words;
        try {
            schedulable = executor.schedulableNodes(batch.resources);
        } catch (const std::exception &e) {
            // Not known this time: every suspect is excluded (sbatch says so if none is left),
            // and the attempt's detail says why.
            words << QStringLiteral("the partition's nodes are not known (%1)")
                         .arg(QString::fromUtf8(e.what()));
        }
        const Exclusion ex = excludedNodes(suspects, schedulable, batch.resources.nodes);
        batch.excludeNodes = ex.exclude;
        if (!ex.exclude.isEmpty())
            words << QStringLiteral("suspect nodes kept out: %1").arg(ex.exclude.join(QStringLiteral(", ")));
        if (!ex.note.isEmpty())
            words << ex.note;
        return words.join(QStringLiteral("; "));
    }

    // A failure blamed on nodes: each is recorded as the cluster's suspect, kept out of its
    // submissions for kSuspectExpiryMs (the retry of this very trial included).
    void markSuspects(const Sweep &sw, const Trial &t, const NodeFault &fault, qint64 now, TickReport &report)
    {
        for (const QString &node : fault.nodes) {
            store.addSuspectNode(SuspectNode{
                executor.name(), node,
                QStringLiteral("%1 (trial %2 of sweep %3)").arg(fault.reason).arg(t.index).arg(sw.name),
                fault.cause, now, now + kSuspectExpiryMs});
            report.events << QStringLiteral("%1: node %2 of %3 marked suspect (%4): kept out of new "
                                            "submissions for %5 h")
                                 .arg(sw.name, node, executor.name(), fault.cause)
                                 .arg(kSuspectExpiryMs / 3'600'000);
        }
    }

    // The scheduler requeued a running task itself (Slurm's --requeue): where the nodes it ran on
    // have failed, they are the cluster's suspects. The task comes back by itself (its next run
    // resumes from the checkpoint, ORRERY_RESUME), so no attempt is used up.
    void requeuedByScheduler(const Sweep &sw, const Trial &t, const QStringList &nodes, qint64 now,
                             TickReport &report)
    {
        QHash<QString, QString> failed;
        try {
            failed = executor.failedNodes(nodes);
        } catch (const std::exception &e) {
            report.errors << QStringLiteral("%1: the state of %2: %3")
                                 .arg(executor.name(), nodes.join(QLatin1Char(',')),
                                      QString::fromUtf8(e.what()));
        }
        report.events << QStringLiteral("%1: trial %2 requeued by the scheduler from %3")
                             .arg(sw.name)
                             .arg(t.index)
                             .arg(nodes.join(QLatin1Char(',')));
        for (auto it = failed.cbegin(); it != failed.cend(); ++it)
            markSuspects(
                sw, t,
                NodeFault{
                    {it.key()},
                    QStringLiteral("node-fail"),
                    QStringLiteral("the task was requeued when %1 became %2").arg(it.key(), it.value())},
                now, report);
    }

    // The attempts recorded pending (held by the executor's limits or refused for one), launched
    // as room frees: up to max_concurrent active at once, within the budget (laterBatchRoom).
    void launchPending(const Sweep &sweep, const SweepSpec &spec, TickReport &report)
    {
        if (sweep.sweepState() == SweepState::Cancelling)
            return;
        QList<Trial> pending;
        int active = 0;
        for (const Trial &t : latest(store.trials(sweep.id))) {
            if (t.trialState() == TrialState::Cancelled || t.trialState() == TrialState::Cancelling)
                return;
            if (t.trialState() == TrialState::Pending && t.id)
                pending << t;
            active += t.isActive() ? 1 : 0;
        }
        if (pending.isEmpty())
            return;
        // A launch whose reply was lost goes again first, whole and under its batch number, so
        // that the executor's record answers the job ids it got if it was queued after all.
        QList<Trial> interrupted;
        for (const Trial &t : pending)
            if (t.detail.startsWith(QLatin1String(kLaunchInterrupted)))
                interrupted << t;
        if (!interrupted.isEmpty()) {
            launch(sweep, spec, interrupted);
            report.events << QStringLiteral("%1: launched again %2 trial%3 whose launch was interrupted")
                                 .arg(sweep.name)
                                 .arg(interrupted.size())
                                 .arg(interrupted.size() > 1 ? QStringLiteral("s") : QString());
            return;
        }
        QString budgetWhy, why;
        const int room = laterBatchRoom(spec.maxConcurrent, active, budgetRoom(sweep, spec, &budgetWhy),
                                        limits(), int(pending.size()), &why);
        if (room <= 0)
            return;
        launch(sweep, spec, pending.mid(0, room));
        report.events << QStringLiteral("%1: launched %2 pending trial%3 (%4 still pending)")
                             .arg(sweep.name)
                             .arg(room)
                             .arg(room > 1 ? QStringLiteral("s") : QString())
                             .arg(pending.size() - room);
    }

    // The code a command sweep runs, frozen when its first trials are made (at submission);
    // later calls, in this process or another follower's, get the same snapshot's record.
    // nullopt: the bundled trainer, or `code: {snapshot: false}`.
    std::optional<CodeSnapshot> codeSnapshot(const Sweep &sweep, const SweepSpec &spec)
    {
        if (!spec.command || !spec.command->code.snapshot)
            return std::nullopt;
        if (const auto it = codeSnapshots.constFind(sweep.id); it != codeSnapshots.cend())
            return *it;
        const RenderedCommand place =
            renderCommand(spec, {}, {sweep.rootDir, sweep.name, spec.experiment, 0, 0});
        const CodeSnapshot snapshot = executor.snapshotCode(sweep.rootDir, place);
        codeSnapshots.insert(sweep.id, snapshot);
        return snapshot;
    }

    // New trials: runs, and trial rows at attempt 0.
    QList<Trial> newTrials(const Sweep &sweep, const QList<PlannedTrial> &planned, const SweepSpec &spec)
    {
        const bool commandSweep = bool(spec.command);
        const std::optional<CodeSnapshot> code = codeSnapshot(sweep, spec);
        QList<Trial> out;
        store.writeTransaction([&] {
            for (const PlannedTrial &p : planned) {
                Trial t;
                t.sweepId = sweep.id;
                t.index = p.index;
                t.runDir = QDir(sweep.rootDir).filePath(QString::number(p.index));
                t.params = jsonParams(p.params);
                t.config = QString::fromUtf8(p.config);
                t.runId = store.createRun(sweep.experimentId,
                                          QStringLiteral("%1-%2").arg(sweep.name).arg(p.index), 0, t.runDir);
                // The trainer logs its whole config when it starts; a command's params are logged
                // here, as the spec typed them (the program may never say them).
                if (commandSweep) {
                    QList<std::pair<QString, QString>> logged;
                    for (const auto &[key, value] : p.params)
                        logged.append({key, formatParamValue(value)});
                    store.logParams(t.runId, logged);
                }
                store.setTags(t.runId,
                              {{QStringLiteral("orrery.sweep"), sweep.name},
                               {QStringLiteral("orrery.sweep_id"), QString::number(sweep.id)},
                               {QStringLiteral("orrery.trial"), QString::number(p.index)},
                               {QStringLiteral("orrery.executor"), executor.name()}});
                if (code) {  // which code it runs (MLflow's git tags), and the uncommitted diff
                    store.setTags(t.runId, codeSnapshotTags(*code));
                    if (!code->diffPath.isEmpty())
                        store.addArtifact(t.runId,
                                          Artifact{QStringLiteral("code.diff"), QStringLiteral("code"), -1,
                                                   code->diffPath, QString(), -1});
                }
                out.append(t);
            }
        });
        return out;
    }

    // The last value of the metric: what the trial ended with (bayes compares finished trials).
    double metricValue(RunId run, const QString &metric)
    {
        const std::vector<MetricPoint> points = store.allPoints(run, metric);
        return points.empty() ? std::nan("") : points.back().value;
    }

    // A command's metric whose regex matched no line of its output by the end of an attempt:
    // said once per run (an event, and the run's tag orrery.warning.metrics), never silently empty.
    void reportUnmatchedMetrics(const Sweep &sweep, const Trial &t, TickReport &report)
    {
        const SweepSpec *spec = nullptr;
        try {
            spec = &this->spec(sweep);
        } catch (const std::exception &) {
            return;
        }
        if (!spec->command || spec->command->metrics.isEmpty())
            return;
        const QString tag = QStringLiteral("orrery.warning.metrics");
        QStringList unmatched;
        for (const MetricRule &rule : spec->command->metrics)
            if (!store.seriesVersion(t.runId, rule.name))
                unmatched << QStringLiteral("%1 (regex %2)").arg(rule.name, rule.regex);
        if (unmatched.isEmpty() || store.details(t.runId).tags.contains(tag))
            return;
        const QStringList logs = executor.logPaths(sweep.rootDir, t.task, t.runDir);
        const qint64 lines = logs.isEmpty() ? 0 : store.ingestState(t.runId, logs.front()).lines;
        const QString message = QStringLiteral("no line of the output matched %1 (%2 lines read)")
                                    .arg(unmatched.join(QStringLiteral(", ")))
                                    .arg(lines);
        store.setTags(t.runId, {{tag, message}});
        report.events << QStringLiteral("%1: trial %2: %3").arg(sweep.name).arg(t.index).arg(message);
    }

    // How many more attempts the sweep's budget lets the runner launch now (usage.h budgetState;
    // INT_MAX without a budget); *why says what holds them back.
    int budgetRoom(const Sweep &sweep, const SweepSpec &spec, QString *why)
    {
        const auto budget = budgetState(spec, store.trials(sweep.id), QDateTime::currentMSecsSinceEpoch());
        if (!budget)
            return std::numeric_limits<int>::max();
        *why = budget->explain();
        return budget->room();
    }

    // Grid and random under a budget: the planned trials the first batch held back, launched as
    // the budget allows (what has ended used less than its time limit), at most max_concurrent
    // running at once. While the budget holds them back, the sweep's message says so.
    void launchHeldBack(const Sweep &sweep, const SweepSpec &spec, TickReport &report)
    {
        if (!spec.budgetGpuHours || spec.method == SearchMethod::Bayes ||
            sweep.sweepState() == SweepState::Cancelling)
            return;
        const QMap<int, Trial> byIndex = latest(store.trials(sweep.id));
        if (byIndex.size() >= sweep.trialCount)
            return;
        int active = 0;
        for (const Trial &t : byIndex) {
            if (t.trialState() == TrialState::Cancelled || t.trialState() == TrialState::Cancelling)
                return;
            // A pending attempt (held by the executor's limits) is launched before any new trial.
            active += t.isActive() || t.trialState() == TrialState::Pending ? 1 : 0;
        }
        QString held;
        const int budget = budgetRoom(sweep, spec, &held);
        const int room = std::min(std::max(1, spec.maxConcurrent) - active, budget);
        if (budget <= 0) {
            const QString message =
                QStringLiteral("waiting on the budget: %1; %2 of %3 trials not launched yet")
                    .arg(held)
                    .arg(sweep.trialCount - byIndex.size())
                    .arg(sweep.trialCount);
            // Said once (the numbers move while trials run): an event, and the sweep's message.
            if (active > 0 && !sweep.message.startsWith(QLatin1String("waiting on the budget"))) {
                store.setSweepMessage(sweep.id, message);
                report.events << QStringLiteral("%1: %2").arg(sweep.name, message);
            }
            return;
        }
        if (room <= 0)
            return;
        QList<PlannedTrial> planned;
        for (const PlannedTrial &p : planTrials({spec, sweep.spec.toUtf8(), sweep.baseConfig.toUtf8()}))
            if (!byIndex.contains(p.index) && planned.size() < room)
                planned.append(p);
        if (planned.isEmpty())
            return;
        if (sweep.message.startsWith(QLatin1String("waiting on the budget")))
            store.setSweepMessage(sweep.id, QString());
        launch(sweep, spec, newTrials(sweep, planned, spec));
        QStringList indexes;
        for (const PlannedTrial &p : planned)
            indexes << QString::number(p.index);
        report.events << QStringLiteral("%1: launched trial%2 %3 within the budget (%4)")
                             .arg(sweep.name, planned.size() > 1 ? QStringLiteral("s") : QString(),
                                  indexes.join(QStringLiteral(", ")), held);
    }

    // Bayes: suggest and launch trials while there is room.
    void suggestMore(const Sweep &sweep, const SweepSpec &spec, const QMap<int, Trial> &latestByIndex,
                     TickReport &report)
    {
        // A cancelled sweep suggests nothing more (its cancelled trials are what the verdict's
        // moreToCome also looks at).
        if (spec.method != SearchMethod::Bayes || sweep.sweepState() == SweepState::Cancelling)
            return;
        for (const Trial &t : latestByIndex)
            if (t.trialState() == TrialState::Cancelled || t.trialState() == TrialState::Cancelling)
                return;
        int active = 0;
        QList<FinishedTrial> finished;
        for (const Trial &t : latestByIndex) {
            if (t.isActive() || t.trialState() == TrialState::Pending)  // pending: suggested, held
                ++active;
            else if (hasEnded(t.trialState()))
                finished.append(
                    {typedParams(t.params, spec.parameters), metricValue(t.runId, spec.metricName)});
        }
        const int next = latestByIndex.isEmpty() ? 0 : latestByIndex.lastKey() + 1;
        QString held;
        const int room = std::min(
            {std::max(1, spec.maxConcurrent) - active, spec.runCap - next, budgetRoom(sweep, spec, &held)});
        if (room <= 0)
            return;
        QList<PlannedTrial> planned;
        for (int i = next; i < next + room; ++i) {
            SweepRng rng = SweepRng::forTrial(spec.seed, i);
            const TrialParams params = suggestTpe(spec.parameters, finished, spec.goal, rng);
            planned.append({i, params, trialParamsFile(spec, sweep.baseConfig.toUtf8(), params)});
        }
        launch(sweep, spec, newTrials(sweep, planned, spec));
        report.events << QStringLiteral("%1: suggested trial%2 %3 (TPE over %4 finished)")
                             .arg(sweep.name, room > 1 ? QStringLiteral("s") : QString())
                             .arg(room > 1 ? QStringLiteral("%1-%2").arg(next).arg(next + room - 1)
                                           : QString::number(next))
                             .arg(finished.size());
    }

    // The phases of a tick, in order (SweepRunner::tick).
    void takeLeases(const QList<SweepId> &sweepIds, Tick &tick, TickReport &report);
    bool poll(Tick &tick, TickReport &report);
    void planReads(Tick &tick);
    void readAll(Tick &tick, TickReport &report);
    void ingest(Tick &tick, TickReport &report);
    void ingestStdout(const StdoutRead &sr, Tick &tick, TickReport &report);
    void planRunFiles(Tick &tick);
    void planHealthReads(Tick &tick);
    void takeHealth(Tick &tick);
    void ingestRunFiles(const RunFilesRead &rf, Tick &tick, TickReport &report);
    void fence(Tick &tick, TickReport &report);
    void decideAttempts(Tick &tick, TickReport &report);
    void resolveEnded(const Sweep &sw, Trial t, const TaskStatus &st, const FileChunk *exitChunk, Tick &tick,
                      qint64 now, TickReport &report);
    void resubmitOrNot(const Sweep &sw, Trial t, TrialState verdict, Tick &tick, TickReport &report);
    void resubmitStranded(const Sweep &sw, const SweepSpec &spec, Tick &tick, TickReport &report);
    void endHung(const Sweep &sw, const SweepSpec &spec, QMap<int, Trial> &latestByIndex, TickReport &report);
    void notify(const Sweep &sw, Notice::Kind kind, const QString &state, std::optional<int> trial,
                const QString &message, TickReport &report);
    void decideSweep(const Sweep &sw, Tick &tick, TickReport &report);
    void stopEarly(const Sweep &sw, const SweepSpec &spec, const QList<Trial> &attempts,
                   QMap<int, Trial> &latestByIndex, TickReport &report);
    void endIfDone(const Sweep &sw, const SweepSpec &spec, TickReport &report,
                   const QString &targetStop = {});
    QString stopAtTarget(const Sweep &sw, const SweepSpec &spec, QMap<int, Trial> &latestByIndex,
                         TickReport &report);
};

SweepRunner::SweepRunner(TrackingStore &store, Executor &executor, TrainerSchema schema, Follower follower)
    : d(std::make_unique<Impl>(
          Impl{store, executor, std::move(schema), std::move(follower), 0, {}, {}, {}, {}, {}, {}}))
{
    if (d->follower.id.isEmpty())
        d->follower.id = processFollowerId();
}

SweepRunner::~SweepRunner() = default;

QString SweepRunner::followerId() const
{
    return d->follower.id;
}

void SweepRunner::releaseLeases()
{
    d->store.releaseSweepLeases(d->follower.id);
}

QByteArray SweepRunner::describe(const SubmitPlan &plan)
{
    const QList<PlannedTrial> planned = planTrials(plan);
    return describeFirstBatch(d->executor, plan,
                              planned.mid(0, firstBatchSize(plan.spec, int(planned.size()))));
}

SweepId SweepRunner::submit(const SubmitPlan &plan)
{
    const SweepSpec &spec = plan.spec;
    const QList<PlannedTrial> planned = planTrials(plan);
    Sweep sw;
    sw.name = spec.name;
    sw.experimentId = d->store.ensureExperiment(spec.experiment);
    sw.spec = QString::fromUtf8(plan.specYaml);
    sw.method = toString(spec.method);
    sw.metricName = spec.metricName;
    sw.metricGoal = spec.goal;
    sw.cluster = d->executor.name() == QLatin1String("local") ? QString() : d->executor.name();
    sw.state = toText(SweepState::Pending);
    sw.specFile = spec.file;
    sw.baseConfig = QString::fromUtf8(plan.baseConfig);
    sw.rootDir = sweepDirectory(d->executor.defaultRoot(), spec.experiment,
                                sweepDirectoryName(spec.name, QDateTime::currentDateTimeUtc()));
    // The same spec submitted twice in one second (Launch again, `sweep relaunch` right after a
    // submit) named the same directory, and its runs' directories collided: a suffix keeps them apart.
    {
        QSet<QString> taken;
        for (const Sweep &other : d->store.sweeps())
            taken.insert(other.rootDir);
        const QString base = sw.rootDir;
        for (int n = 2; taken.contains(sw.rootDir); ++n)
            sw.rootDir = base + QLatin1Char('-') + QString::number(n);
    }
    sw.trialCount = spec.method == SearchMethod::Grid ? int(planned.size()) : spec.runCap;
    sw.id = d->store.createSweep(sw);
    d->specs.insert(sw.id, spec);
    try {
        // Under a budget, the trials that fit it; the rest as it allows (launchHeldBack).
        d->launch(sw, spec,
                  d->newTrials(sw, planned.mid(0, firstBatchSize(spec, int(planned.size()))), spec));
    } catch (const std::exception &e) {
        d->store.setSweepState(sw.id, toText(SweepState::Failed));
        d->store.setSweepMessage(sw.id,
                                 QStringLiteral("submission failed: %1").arg(QString::fromUtf8(e.what())));
        throw;
    }
    const QList<Trial> trials = d->store.trials(sw.id);
    d->store.setSweepState(sw.id, toText(SweepState::Running),
                           trials.isEmpty() ? QString() : trials.front().slurmJobId);
    return sw.id;
}

void SweepRunner::cancel(SweepId sweepId)
{
    const auto sw = d->store.sweep(sweepId);
    if (!sw)
        throw std::runtime_error(QStringLiteral("no sweep %1").arg(sweepId).toStdString());
    QStringList ids;
    QList<Trial> active, pending;
    for (const Trial &t : latest(d->store.trials(sweepId)))
        if (t.isActive()) {
            if (!t.task.isEmpty())
                ids << t.task;
            active << t;
        } else if (t.trialState() == TrialState::Pending) {
            pending << t;  // never handed to the executor: cancelled here and now
        }
    if (!ids.isEmpty())
        d->executor.cancel(ids);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    d->store.writeTransaction([&] {
        for (Trial t : active) {
            t.setState(TrialState::Cancelling);
            t.exitReason = QStringLiteral("cancelled by the user");
            d->store.updateTrial(t);
        }
        for (Trial t : pending) {
            t.setState(TrialState::Cancelled);
            t.exitReason = QStringLiteral("cancelled by the user before it was submitted");
            t.submittedMs = t.submittedMs > 0 ? t.submittedMs : now;  // no time spent: a span of 0
            t.endedMs = now;
            d->store.updateTrial(t);
            if (t.runId)
                d->store.endRun(t.runId, RunStatus::Killed, now);
        }
        d->store.setSweepState(sweepId,
                               toText(active.isEmpty() ? SweepState::Cancelled : SweepState::Cancelling));
        d->store.setSweepMessage(sweepId, QStringLiteral("cancelled by the user"));
    });
}

void SweepRunner::stopTrial(SweepId sweepId, int index, const QString &reason)
{
    // No lease, as for cancel: stopping is the user's decision. The holder's tick writes its own
    // decisions on an attempt only over the state it read (updateTrialIf), so it neither undoes
    // the stop nor resubmits the attempt the stop ended.
    const Sweep sw = d->sweepOrThrow(sweepId);
    auto stoppable = [&](const Trial &t) {
        const TrialState state = t.trialState();
        if (state != TrialState::Queued && state != TrialState::Running)
            throw std::runtime_error(
                QStringLiteral("trial %1 is %2; only a queued or running trial can be stopped")
                    .arg(index)
                    .arg(t.state)
                    .toStdString());
    };
    Trial t = latestAttempt(sw, d->store.trials(sweepId), index);
    stoppable(t);
    if (!t.task.isEmpty())
        d->executor.cancel({t.task});
    // The state may move on between the read and the write (a follower records it running, or
    // ended): write over the state as read, else read again. It only moves forward, so this ends.
    for (;;) {
        Trial stopping = t;
        stopping.setState(TrialState::Stopping);
        stopping.exitReason = QStringLiteral("stopped by the user");
        if (!reason.isEmpty())
            stopping.exitReason += QStringLiteral(": ") + reason;
        bool written = false;
        d->store.writeTransaction([&] {
            written = d->store.updateTrialIf(t.state, stopping);
            if (written)
                d->store.setTags(t.runId,
                                 {{QStringLiteral("orrery.stopped_early"), QStringLiteral("by the user")}});
        });
        if (written)
            return;
        t = latestAttempt(sw, d->store.trials(sweepId), index);
        stoppable(t);
    }
}

void SweepRunner::retryTrial(SweepId sweepId, int index)
{
    const Sweep sw = d->sweepOrThrow(sweepId);
    const QList<Trial> attempts = d->store.trials(sweepId);
    const Trial t = latestAttempt(sw, attempts, index);
    const TrialState state = t.trialState();
    if (!hasEnded(state) || state == TrialState::Completed)
        throw std::runtime_error(
            QStringLiteral("trial %1 is %2; only a failed, stopped or cancelled trial can be retried")
                .arg(index)
                .arg(t.state)
                .toStdString());
    if (sw.sweepState() == SweepState::Cancelling)
        throw std::runtime_error(
            QStringLiteral("sweep %1 is being cancelled; retry its trials once it has ended")
                .arg(sw.name)
                .toStdString());
    const SweepSpec &spec = d->spec(sw);

    // No lease either. The one decision that could collide with a follower's is its own
    // resubmission of this attempt (two trainers in one run dir): the follower that resolved the
    // attempt resubmits it in the same tick when the retry rule says so, so while someone holds
    // the sweep's lease and the rule says so, that resubmission is under way. An attempt that was
    // never launched (no task) or whose follower is gone (no live lease) is the user's to retry.
    const auto lease = d->store.sweepLease(sweepId);
    const bool followed = isActive(sw.sweepState()) && lease && !lease->holder.isEmpty() &&
        lease->expiresMs > QDateTime::currentMSecsSinceEpoch();
    if (followed && runnerResubmits(attempts, t, spec.retries))
        throw std::runtime_error(
            QStringLiteral(
                "trial %1 %2 and the sweep's follower is resubmitting it%3; retry it if that attempt "
                "fails too")
                .arg(index)
                .arg(state == TrialState::Preempted ? QStringLiteral("was preempted")
                                                    : QStringLiteral("failed"))
                .arg(state == TrialState::Preempted ? QString()
                                                    : QStringLiteral(" (retries: %1)").arg(spec.retries))
                .toStdString());

    QString held;
    if (d->budgetRoom(sw, spec, &held) < 1)
        throw std::runtime_error(
            QStringLiteral("trial %1 not retried: the sweep's budget could be exceeded (%2)")
                .arg(index)
                .arg(held)
                .toStdString());
    Trial next = nextAttempt(t);
    next.userRetry = true;
    d->launch(sw, spec, {next});  // a refusal is recorded as a failed attempt and thrown
    // After the attempt is in the store: a follower deciding the sweep's end from now on sees it
    // (that decision is re-read under the write lock, as this is).
    d->store.writeTransaction([&] {
        const auto now = d->store.sweep(sweepId);
        if (now && !isActive(now->sweepState())) {
            d->store.setSweepState(sweepId, toText(SweepState::Running));
            d->store.setSweepMessage(
                sweepId, QStringLiteral("running again: trial %1 retried by the user").arg(index));
        }
    });
}

bool SweepRunner::isDone(SweepId sweepId) const
{
    const auto sw = d->store.sweep(sweepId);
    return !sw || !isActive(sw->sweepState());
}

Follower followerForPace(qint64 slowestTickMs)
{
    return {processFollowerId(), std::max<qint64>(kSweepLeaseTtlMs, 4 * slowestTickMs)};
}

int nextTickIntervalMs(const TickReport &last, const TickPace &pace, int &quietTicks)
{
    if (last.moreToRead)
        return 0;
    if (!last.events.isEmpty())
        quietTicks = 0;
    else if (last.points > 0)  // trials are logging: progress at least every 4 fast intervals
        quietTicks = std::min(quietTicks + 1, 4);
    else
        quietTicks = std::min(quietTicks + 1, 30);
    const double ms = double(pace.fastMs) * std::pow(2.0, quietTicks / 2.0);
    return int(std::min<double>(ms, pace.slowMs));
}

int SweepRunner::nextIntervalMs(const TickReport &last, const Pace &pace)
{
    return nextTickIntervalMs(last, pace, d->quietTicks);
}

// Leases: takes or renews the lease of each active sweep, and reads its attempts and the active ones.
void SweepRunner::Impl::takeLeases(const QList<SweepId> &sweepIds, Tick &tick, TickReport &report)
{
    for (SweepId id : sweepIds) {
        const auto sw = store.sweep(id);
        if (!sw || !isActive(sw->sweepState()))
            continue;
        // The lease before the trials: what the holder decides on is read while it holds it. A
        // holder killed on this machine (its pid gone) is taken over at once, not after its TTL.
        SweepLease lease = store.acquireSweepLease(id, follower.id, follower.leaseTtlMs);
        if (!lease.heldBy(follower.id) && followerIsGone(lease.holder) &&
            store.expireSweepLease(id, lease.holder))
            lease = store.acquireSweepLease(id, follower.id, follower.leaseTtlMs);
        if (lease.heldBy(follower.id))
            tick.acting.insert(id, lease);
        else
            report.followedElsewhere << lease;
        tick.sweeps << *sw;
        tick.attemptsOf[id] = store.trials(id);
        for (const Trial &t : latest(tick.attemptsOf[id]))
            if (t.isActive())
                tick.active.append({*sw, t});
    }
}

// One poll for every active task of every sweep. False when it failed (said in the report).
bool SweepRunner::Impl::poll(Tick &tick, TickReport &report)
{
    if (tick.active.isEmpty())
        return true;
    QStringList ids;
    for (const Tick::Active &a : tick.active)
        ids << a.trial.task;
    try {
        tick.status = executor.poll(ids);
    } catch (const std::exception &e) {
        report.errors << QStringLiteral("poll: %1").arg(QString::fromUtf8(e.what()));
        report.active = int(tick.active.size());
        return false;
    }
    return true;
}

// What the one read takes: every active run's new events, the exit.json of the attempts that
// ended on the sweeps this follower acts on (their verdicts), and a command's standard output.
void SweepRunner::Impl::planReads(Tick &tick)
{
    for (const Tick::Active &a : tick.active) {
        const qint64 offset = store.ingestState(a.trial.runId, kEvents).offset;
        tick.eventOffsets << offset;
        tick.reads.append({QDir(a.trial.runDir).filePath(kEvents), offset});
    }
    for (const Tick::Active &a : tick.active) {
        const TaskStatus st = tick.status.value(a.trial.task);
        if (tick.acting.contains(a.sweep.id) &&
            (st.state == TaskStatus::State::Ended || st.state == TaskStatus::State::Unknown)) {
            tick.exitReadOf << int(tick.reads.size());
            tick.reads.append({QDir(a.trial.runDir).filePath(QStringLiteral("exit.json")), 0, kExitBytes});
        } else {
            tick.exitReadOf << -1;
        }
    }
    for (qsizetype i = 0; i < tick.active.size(); ++i) {
        const Tick::Active &a = tick.active[i];
        const SweepSpec *spec = specOrSkip(a.sweep);
        if (!spec)
            continue;
        if (!spec->command || spec->command->metrics.isEmpty() || a.trial.task.isEmpty())
            continue;
        const QStringList logs = executor.logPaths(a.sweep.rootDir, a.trial.task, a.trial.runDir);
        if (logs.isEmpty())
            continue;
        const qint64 offset = store.ingestState(a.trial.runId, logs.front()).offset;
        tick.stdoutReads.append({i, tick.reads.size(), logs.front(), offset, spec});
        tick.reads.append({logs.front(), offset});
    }
    planHealthReads(tick);
    // The running attempts' output logs, their sizes only (maxBytes 0): growth is progress.
    for (qsizetype i = 0; i < tick.active.size(); ++i) {
        const Tick::Active &a = tick.active[i];
        if (a.trial.task.isEmpty() || !tick.acting.contains(a.sweep.id) ||
            tick.status.value(a.trial.task).state != TaskStatus::State::Running)
            continue;
        for (const QString &log : executor.logPaths(a.sweep.rootDir, a.trial.task, a.trial.runDir)) {
            tick.logSizeReads.append({i, tick.reads.size()});
            FileRead r{log, 0};
            r.maxBytes = 0;
            tick.reads.append(r);
        }
    }
    planRunFiles(tick);
}

// The health check's verdicts of the attempts that run it (`health_check:`) and do not have
// them yet: a small file, read each tick from the attempt's start until found (also on the tick
// that sees it end, so a check that failed at once is stored with the attempt's verdict).
void SweepRunner::Impl::planHealthReads(Tick &tick)
{
    // Every node's figures and devices, ~1.5 kB a node: room for several hundred nodes.
    constexpr qint64 kHealthBytes = 1 << 20;
    for (const Tick::Active &a : tick.active) {
        const SweepSpec *spec = tick.acting.contains(a.sweep.id) ? specOrSkip(a.sweep) : nullptr;
        if (!spec || !spec->healthCheck.enabled || !a.trial.health.isEmpty() || a.trial.runDir.isEmpty()) {
            tick.healthReadOf << -1;
            continue;
        }
        tick.healthReadOf << int(tick.reads.size());
        tick.reads.append({QDir(a.trial.runDir).filePath(QStringLiteral("health.json")), 0, kHealthBytes});
    }
}

// The verdicts read into the attempts' copies; decideAttempts writes them with the attempt.
void SweepRunner::Impl::takeHealth(Tick &tick)
{
    tick.healthChanged = QList<bool>(tick.active.size(), false);
    for (qsizetype i = 0; i < tick.active.size() && !tick.chunks.isEmpty(); ++i) {
        const int read = tick.healthReadOf.value(i, -1);
        if (read < 0 || !tick.chunks[read].exists)
            continue;
        const QString health = healthFromFile(tick.chunks[read].data);
        if (health.isEmpty() || health == tick.active[i].trial.health)
            continue;
        tick.active[i].trial.health = health;
        tick.healthChanged[i] = true;
    }
}

// A command run's listing of its run dir (and of the spec's TensorBoard dir, when elsewhere) and
// its known event files from their offsets, in the same one read.
void SweepRunner::Impl::planRunFiles(Tick &tick)
{
    // An event file is read this much at most per tick (a catch-up continues next tick).
    constexpr qint64 kTfBytes = 16 << 20;
    for (qsizetype i = 0; i < tick.active.size(); ++i) {
        const Tick::Active &a = tick.active[i];
        const SweepSpec *spec = specOrSkip(a.sweep);
        if (!spec)
            continue;
        if (!spec->command || a.trial.runDir.isEmpty())
            continue;
        RunFilesRead rf;
        rf.active = i;
        rf.spec = spec;
        const QString runDir = QDir::cleanPath(a.trial.runDir);
        const QString tbDir = tensorboardDirOf(*spec->command, runDir);
        for (const QString &dir : tbDir == runDir ? QStringList{runDir} : QStringList{runDir, tbDir}) {
            rf.listings.append({dir, tick.reads.size()});
            tick.reads.append(FileRead::listing(dir));
        }
        for (const auto &[file, state] : store.ingestStates(a.trial.runId)) {
            if (!isTfEventsFile(file.section(QLatin1Char('/'), -1)))
                continue;
            rf.events.append({file, state.offset, tick.reads.size()});
            const qint64 need = tfNeedBytes.value({a.trial.runId, file}, 0);
            tick.reads.append({QDir(runDir).filePath(file), state.offset, std::max(kTfBytes, need)});
        }
        tick.runFiles.append(rf);
    }
}

void SweepRunner::Impl::readAll(Tick &tick, TickReport &report)
{
    if (!tick.reads.isEmpty()) {
        try {
            tick.chunks = executor.readFiles(tick.reads);
        } catch (const std::exception &e) {
            report.errors << QStringLiteral("read: %1").arg(QString::fromUtf8(e.what()));
        }
    }
    if (!tick.chunks.isEmpty() && tick.chunks.size() != tick.reads.size()) {
        report.errors
            << QStringLiteral("read: %1 answers for %2 files").arg(tick.chunks.size()).arg(tick.reads.size());
        tick.chunks.clear();
    }
}

// Every run's new lines in one transaction: one commit per tick, however many runs.
void SweepRunner::Impl::ingest(Tick &tick, TickReport &report)
{
    QElapsedTimer ingestClock;
    ingestClock.start();
    tick.progressed = QList<bool>(tick.active.size(), false);
    if (!tick.chunks.isEmpty()) {
        ProgressMemory &memory = progressMemory();
        const QMutexLocker lock(&memory.mutex);
        for (const auto &[active, read] : tick.logSizeReads) {
            const FileChunk &c = tick.chunks[read];
            if (!c.exists)
                continue;
            const QString key = executor.name() + QLatin1Char('\n') + tick.reads[read].path;
            const auto seen = memory.logSizes.constFind(key);
            if (seen != memory.logSizes.constEnd() && c.size > *seen)
                tick.progressed[active] = true;
            memory.logSizes.insert(key, c.size);
        }
    }
    store.writeTransaction([&] {
        for (qsizetype i = 0; i < tick.active.size() && !tick.chunks.isEmpty(); ++i) {
            const FileChunk &c = tick.chunks[i];
            if (!c.exists || c.data.isEmpty())
                continue;
            report.bytes += c.data.size();
            tick.progressed[i] = true;
            const IngestResult r =
                store.ingestEvents(tick.active[i].trial.runId, kEvents, tick.eventOffsets[i], c.data);
            report.points += r.points;
            if (c.size > tick.eventOffsets[i] + c.data.size())
                report.moreToRead = true;
        }
        for (const StdoutRead &sr : tick.stdoutReads)
            ingestStdout(sr, tick, report);
        for (const RunFilesRead &rf : tick.runFiles)
            ingestRunFiles(rf, tick, report);
    });
    report.ingestMs = double(ingestClock.nsecsElapsed()) / 1e6;
    takeHealth(tick);
}

// A command's new output lines: the metrics its rules match (inside ingest's transaction).
void SweepRunner::Impl::ingestStdout(const StdoutRead &sr, Tick &tick, TickReport &report)
{
    if (tick.chunks.isEmpty() || !tick.chunks[sr.read].exists || tick.chunks[sr.read].data.isEmpty())
        return;
    const FileChunk &c = tick.chunks[sr.read];
    const RunId run = tick.active[sr.active].trial.runId;
    QHash<QString, qint64> lastStep;
    for (const MetricRule &rule : sr.spec->command->metrics)
        if (const auto v = store.seriesVersion(run, rule.name))
            lastStep.insert(rule.name, v->second);
    const SweepId sweep = tick.active[sr.active].sweep.id;
    auto rules = metricRules.find(sweep);
    if (rules == metricRules.end())
        rules = metricRules.insert(sweep, compileMetricRules(sr.spec->command->metrics));
    const StdoutMetrics m = parseMetricLines(c.data, *rules, lastStep, QDateTime::currentMSecsSinceEpoch());
    if (m.consumed == 0)
        return;
    tick.progressed[sr.active] = true;
    report.bytes += m.consumed;
    report.points += store.ingestTextMetrics(run, sr.file, sr.offset, m.consumed, m.lines, m.points).points;
    if (c.size > sr.offset + c.data.size())
        report.moreToRead = true;
}

// A command run's new event records (scalars, images, videos), the event files and sample files
// its listings found (inside ingest's transaction).
void SweepRunner::Impl::ingestRunFiles(const RunFilesRead &rf, Tick &tick, TickReport &report)
{
    if (tick.chunks.isEmpty())
        return;
    const Tick::Active &a = tick.active[rf.active];
    const RunId run = a.trial.runId;
    const QString runDir = QDir::cleanPath(a.trial.runDir);
    QString mediaDir;
    QSet<QString> known;
    for (const RunFilesRead::Events &e : rf.events) {
        known.insert(e.file);
        const FileChunk &c = tick.chunks[e.read];
        if (!c.exists || c.data.isEmpty())
            continue;
        if (mediaDir.isEmpty()) {
            const auto r = store.run(run);
            mediaDir = tensorboardMediaDir(r ? r->uuid : QString::number(run));
        }
        const TfIngest r = ingestTfEventsChunk(store, run, e.file, e.offset, c.data, mediaDir);
        if (r.consumed > 0)
            tick.progressed[rf.active] = true;
        report.bytes += r.consumed;
        report.points += r.points;
        if (r.consumed == 0 && r.needBytes > c.data.size())
            tfNeedBytes.insert({run, e.file}, r.needBytes);
        else
            tfNeedBytes.remove({run, e.file});
        if (c.size > e.offset + c.data.size() || (r.consumed == 0 && r.needBytes > c.data.size()))
            report.moreToRead = true;
        if (!r.warning.isEmpty())
            report.events
                << QStringLiteral("%1: trial %2: %3").arg(a.sweep.name).arg(a.trial.index).arg(r.warning);
    }
    for (const auto &[dir, read] : rf.listings) {
        const FileChunk &c = tick.chunks[read];
        if (!c.exists)
            continue;
        for (const QString &file : tfEventsFiles(c.entries, dir, runDir)) {
            if (known.contains(file))
                continue;
            known.insert(file);
            // Recorded at offset 0: the next tick reads it with the others.
            store.ingestTextMetrics(run, file, 0, 0, 0, {});
            report.moreToRead = true;
        }
        if (dir != runDir || rf.spec->command->artifacts.isEmpty())
            continue;
        QHash<QString, qint64> &seen = samplesSeen[run];
        for (const Artifact &sample : matchArtifacts(rf.spec->command->artifacts, c.entries, runDir)) {
            if (seen.value(sample.path, -1) == sample.size)
                continue;
            store.addArtifact(run, sample);
            seen.insert(sample.path, sample.size);
        }
    }
}

// The fence: renew each lease before acting on what was read. If the poll and the read
// outlasted the lease and another follower took it meanwhile (its acquiredMs changed even if
// this follower holds it again), the state read at the start may be stale: no decisions on
// that sweep this tick.
void SweepRunner::Impl::fence(Tick &tick, TickReport &report)
{
    for (auto it = tick.acting.begin(); it != tick.acting.end();) {
        const SweepLease now = store.acquireSweepLease(it.key(), follower.id, follower.leaseTtlMs);
        if (now.heldBy(follower.id) && now.acquiredMs == it->acquiredMs) {
            ++it;
            continue;
        }
        if (!now.heldBy(follower.id))
            report.followedElsewhere << now;
        it = tick.acting.erase(it);
    }
}

// Decisions on each attempt of the sweeps this follower holds: record the live ones' progress,
// resolve the ones that ended.
void SweepRunner::Impl::decideAttempts(Tick &tick, TickReport &report)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (qsizetype i = 0; i < tick.active.size(); ++i) {
        const Tick::Active &a = tick.active[i];
        if (!tick.acting.contains(a.sweep.id))
            continue;
        const TaskStatus st = tick.status.value(a.trial.task);
        if (st.state == TaskStatus::State::Queued || st.state == TaskStatus::State::Running) {
            LiveAttempt live = liveAttempt(a.trial, st, now);
            if (st.state == TaskStatus::State::Running)
                if (const SweepSpec *spec = specOrSkip(a.sweep))
                    noteProgress(live, *spec, tick.progressed.value(i), now);
            if (live.startedRunning) {
                report.events << QStringLiteral("%1: trial %2 running").arg(a.sweep.name).arg(a.trial.index);
                // Its run says so too: a command that logs nothing Orrery reads (or not yet) left it
                // SCHEDULED in the Runs table while the tree said running.
                if (a.trial.runId)
                    if (const auto run = store.run(a.trial.runId); run && run->status == RunStatus::Scheduled)
                        store.setRunStatus(a.trial.runId, RunStatus::Running);
            }
            if (!live.requeuedFrom.isEmpty())
                requeuedByScheduler(a.sweep, live.trial, live.requeuedFrom, now, report);
            // Written back only over the state read: a user who stopped or cancelled the attempt
            // since the tick read it (stopTrial, cancel: no lease needed) wins, and the next tick
            // settles it.
            if (live.changed || tick.healthChanged.value(i))
                store.updateTrialIf(a.trial.state, live.trial);
            continue;
        }
        // Ended, or unknown to the executor: exit.json says how, if the trainer got to write it.
        const int exitRead = tick.exitReadOf[i];
        const FileChunk *exitChunk = (!tick.chunks.isEmpty() && exitRead >= 0 && tick.chunks[exitRead].exists)
            ? &tick.chunks[exitRead]
            : nullptr;
        resolveEnded(a.sweep, a.trial, st, exitChunk, tick, now, report);
    }
}

// An attempt whose task ended or is unknown: its verdict (attemptVerdict), its run's end and its
// real span (for its GPU-hours, usage.h), then whether it is resubmitted.
void SweepRunner::Impl::resolveEnded(const Sweep &sw, Trial t, const TaskStatus &st,
                                     const FileChunk *exitChunk, Tick &tick, qint64 now, TickReport &report)
{
    // Written back only over this state (as for live attempts).
    const QString storedState = t.state;
    AttemptOutcome outcome;
    outcome.status = st;
    if (exitChunk)
        outcome.exitJson = exitChunk->data;
    outcome.readAnswered = !tick.chunks.isEmpty();
    outcome.before = t.trialState();
    if (!st.nodes.isEmpty())
        t.nodes = st.nodes.join(QLatin1Char(','));
    outcome.nodes = t.nodes.split(QLatin1Char(','), Qt::SkipEmptyParts);
    std::optional<AttemptVerdict> verdict = attemptVerdict(outcome);
    if (!verdict)
        return;  // nothing known yet: ask again next tick
    const std::optional<NodeFault> fault =
        verdict->settled() || !executor.choosesNodes() ? std::nullopt : nodeFault(outcome);
    if (fault && verdict->ended == TrialState::Failed)
        verdict->reason = nodeFaultReason(*fault);  // the retry rule counts it apart (isNodeFault)
    if (!st.detail.isEmpty())
        t.detail = st.detail;
    if (exitChunk)  // the run ends as exit.json says (an unreadable one ends nothing)
        store.applyExit(t.runId, exitChunk->data, now, nullptr);
    else if (verdict->runEnd)
        store.endRun(t.runId, *verdict->runEnd, now);
    const AttemptSpan span =
        endedSpan(t.startedMs, t.submittedMs, st.elapsedMs, verdict->exitMs, store.runPhases(t.runId), now);
    t.startedMs = span.startedMs;
    t.endedMs = span.endedMs;
    reportUnmatchedMetrics(sw, t, report);
    t.setState(verdict->state);
    if (verdict->settled()) {
        // Our own doing: the trainer saw SIGTERM and reported itself preempted.
        store.endRun(t.runId, RunStatus::Killed, now);
        report.events << QStringLiteral("%1: trial %2 %3").arg(sw.name).arg(t.index).arg(t.state);
        store.updateTrial(t);
        return;
    }
    // A hung attempt the runner ended (endHung) keeps its mark as its reason, whatever the
    // trainer said of the SIGTERM: the retry rule counts it as a hang, not a failure.
    const bool hung = isHungAttempt(t) && verdict->ended != TrialState::Completed;
    if (hung)
        t.setState(TrialState::Failed);
    else
        t.exitReason = verdict->exitReason();
    if (!store.updateTrialIf(storedState, t))
        return;  // stopped or cancelled meanwhile: settled as such next tick, not resubmitted
    if (fault && verdict->ended == TrialState::Failed)
        markSuspects(sw, t, *fault, now, report);
    if (hung) {
        resubmitOrNot(sw, t, TrialState::Failed, tick, report);
        return;
    }
    if (verdict->ended == TrialState::Completed) {
        report.events << QStringLiteral("%1: trial %2 completed").arg(sw.name).arg(t.index);
        return;
    }
    resubmitOrNot(sw, t, verdict->ended, tick, report);
}

// `t` failed, was lost or preempted (`verdict`, as recorded): resubmit it, resuming from the
// trial's last checkpoint? The resubmissions are launched per sweep (decideSweep).
void SweepRunner::Impl::resubmitOrNot(const Sweep &sw, Trial t, TrialState verdict, Tick &tick,
                                      TickReport &report)
{
    const SweepSpec *spec = specOrReport(sw, report);
    if (!spec)
        return;
    // A resubmission is a launch like any other: within the budget, counting this tick's.
    QString held;
    const int room = budgetRoom(sw, *spec, &held) - int(tick.relaunch.value(sw.id).size());
    const ResubmitDecision r = decideResubmission(tick.attemptsOf[sw.id], t, spec->retries, room);
    if (r.state != t.trialState() || r.exitReason != t.exitReason) {
        t.setState(r.state);
        t.exitReason = r.exitReason;
        store.updateTrial(t);
    }
    // The notice of a hang is sent as the hung attempt ends, with what became of it; a trial
    // that fails for good (not resubmitted) is noticed too.
    const bool hung = isHungAttempt(t);
    const Notice::Kind kind = hung ? Notice::Kind::TrialHung : Notice::Kind::TrialFailed;
    switch (r.action) {
    case Resubmit::GivenUp:
        report.events << QStringLiteral("%1: trial %2 %3: %4; %5")
                             .arg(sw.name)
                             .arg(t.index)
                             .arg(toText(verdict), t.exitReason, r.why);
        notify(sw, kind, t.state, t.index,
               QStringLiteral("trial %1 %2: %3; %4").arg(t.index).arg(toText(verdict), t.exitReason, r.why),
               report);
        return;
    case Resubmit::OverBudget:
        report.events << QStringLiteral("%1: trial %2 %3: %4 (%5)")
                             .arg(sw.name)
                             .arg(t.index)
                             .arg(toText(verdict), t.exitReason, held);
        notify(sw, kind, t.state, t.index,
               QStringLiteral("trial %1 %2: %3 (%4)").arg(t.index).arg(toText(verdict), t.exitReason, held),
               report);
        return;
    case Resubmit::Yes:
        tick.relaunch[sw.id].append(r.next);
        report.events << QStringLiteral(
                             "%1: trial %2 %3: %4; resubmitted (attempt %5), resuming from its checkpoint")
                             .arg(sw.name)
                             .arg(t.index)
                             .arg(toText(verdict), t.exitReason)
                             .arg(r.next.attempt + 1);
        if (hung)
            notify(sw, kind, t.state, t.index,
                   QStringLiteral("trial %1 %2; resubmitted (attempt %3), resuming from its checkpoint")
                       .arg(t.index)
                       .arg(t.exitReason)
                       .arg(r.next.attempt + 1),
                   report);
        return;
    }
}

// A resubmission decided on an earlier tick but never recorded: the verdict was written, then the
// store's disk was full when the new attempt was to be (or the follower was killed in between).
// Such a trial's latest attempt ended the runner's way with retries left and nothing after it;
// it is decided again here (bench/chaos.py found trials left failed this way). Attempts this
// tick resolved were read as still active, so none is resubmitted twice.
void SweepRunner::Impl::resubmitStranded(const Sweep &sw, const SweepSpec &spec, Tick &tick,
                                         TickReport &report)
{
    const QList<Trial> &attempts = tick.attemptsOf[sw.id];
    QList<Trial> &relaunch = tick.relaunch[sw.id];
    QString held;
    for (const Trial &t : latest(attempts)) {
        if (!runnerResubmits(attempts, t, spec.retries) ||
            std::any_of(relaunch.cbegin(), relaunch.cend(),
                        [&](const Trial &r) { return r.index == t.index; }))
            continue;
        const ResubmitDecision r =
            decideResubmission(attempts, t, spec.retries, budgetRoom(sw, spec, &held) - int(relaunch.size()));
        if (r.action != Resubmit::Yes)
            continue;
        relaunch.append(r.next);
        report.events << QStringLiteral(
                             "%1: trial %2 %3: %4; resubmitted (attempt %5), its earlier resubmission "
                             "not having been recorded")
                             .arg(sw.name)
                             .arg(t.index)
                             .arg(toText(t.trialState()), t.exitReason)
                             .arg(r.next.attempt + 1);
    }
    if (relaunch.isEmpty())
        tick.relaunch.remove(sw.id);
}

// A sweep as a whole: counted only where another follower decides; else its resubmissions
// launched, its trials stopped early, its next trials launched, and its verdict.
void SweepRunner::Impl::decideSweep(const Sweep &sw, Tick &tick, TickReport &report)
{
    if (!tick.acting.contains(sw.id)) {  // another follower decides: count what it has now
        const SweepTally seen = tallyTrials(latest(store.trials(sw.id)));
        report.active += seen.active;
        report.running += seen.running;
        return;
    }
    const SweepSpec *spec = specOrReport(sw, report);
    if (!spec)
        return;
    resubmitStranded(sw, *spec, tick, report);
    try {
        if (auto it = tick.relaunch.find(sw.id); it != tick.relaunch.end())
            launch(sw, *spec, *it);
    } catch (const std::exception &e) {
        report.errors
            << QStringLiteral("%1: resubmission failed: %2").arg(sw.name, QString::fromUtf8(e.what()));
    }
    const QList<Trial> attempts = store.trials(sw.id);
    QMap<int, Trial> latestByIndex = latest(attempts);
    endHung(sw, *spec, latestByIndex, report);
    stopEarly(sw, *spec, attempts, latestByIndex, report);
    // metric.target reached (targetReached): nothing new is launched, and what waits is stopped.
    const QString targetStop = stopAtTarget(sw, *spec, latestByIndex, report);
    if (targetStop.isEmpty()) {
        try {
            suggestMore(sw, *spec, latestByIndex, report);
        } catch (const std::exception &e) {
            report.errors
                << QStringLiteral("%1: next bayes trials: %2").arg(sw.name, QString::fromUtf8(e.what()));
        }
        try {
            launchHeldBack(sw, *spec, report);
        } catch (const std::exception &e) {
            report.errors << QStringLiteral("%1: trials within the budget: %2")
                                 .arg(sw.name, QString::fromUtf8(e.what()));
        }
        try {
            launchPending(sw, *spec, report);
        } catch (const std::exception &e) {
            report.errors
                << QStringLiteral("%1: pending trials: %2").arg(sw.name, QString::fromUtf8(e.what()));
        }
    }
    endIfDone(sw, *spec, report, targetStop);
}

// W&B's metric.target: once a completed trial reached it (targetReached), the trials queued and
// not started are stopped, as W&B creates no new run. Returns the rule's message, empty while the
// target is not reached.
QString SweepRunner::Impl::stopAtTarget(const Sweep &sw, const SweepSpec &spec,
                                        QMap<int, Trial> &latestByIndex, TickReport &report)
{
    if (!spec.metricTarget)
        return {};
    QHash<int, double> lastValues;
    for (const Trial &t : latestByIndex)
        if (t.trialState() == TrialState::Completed)
            lastValues.insert(t.index, metricValue(t.runId, spec.metricName));
    const std::optional<TargetHit> hit = targetReached(spec, latestByIndex, lastValues);
    if (!hit)
        return {};
    const QList<int> waiting = notStartedTrials(latestByIndex);
    QStringList ids;
    for (const int i : waiting)
        ids << latestByIndex[i].task;
    if (ids.isEmpty())
        return hit->message;
    try {
        executor.cancel(ids);
        for (const int i : waiting) {
            Trial &t = latestByIndex[i];
            const QString was = t.state;
            t.setState(TrialState::Stopping);
            t.exitReason = QStringLiteral("not started: %1").arg(hit->message);
            if (store.updateTrialIf(was, t))
                report.events
                    << QStringLiteral("%1: trial %2 not started: %3").arg(sw.name).arg(i).arg(hit->message);
        }
    } catch (const std::exception &e) {
        report.errors << QStringLiteral("%1: metric.target: %2").arg(sw.name, QString::fromUtf8(e.what()));
    }
    return hit->message;
}

// Early stopping (earlyStops): the rule over every trial's history of the sweep's metric; the
// trials it stops become stopping in `latestByIndex` too.
void SweepRunner::Impl::stopEarly(const Sweep &sw, const SweepSpec &spec, const QList<Trial> &attempts,
                                  QMap<int, Trial> &latestByIndex, TickReport &report)
{
    if (!stopsEarly(spec))
        return;
    QHash<int, QList<std::pair<qint64, double>>> points;
    for (const Trial &t : latestByIndex) {
        QList<std::pair<qint64, double>> &history = points[t.index];
        for (const MetricPoint &p : store.allPoints(t.runId, spec.metricName))
            history.append({p.step, p.value});
    }
    const QList<EarlyStop> stops = earlyStops(spec, latestByIndex, attempts, points);
    QStringList ids;
    for (const EarlyStop &s : stops)
        ids << latestByIndex[s.trial].task;
    if (ids.isEmpty())
        return;
    try {
        executor.cancel(ids);
        for (const EarlyStop &s : stops) {
            Trial &t = latestByIndex[s.trial];
            const QString was = t.state;
            t.setState(TrialState::Stopping);
            t.exitReason = s.exitReason;
            if (!store.updateTrialIf(was, t))
                continue;  // a user stopped or cancelled it since it was read
            store.setTags(t.runId, {{QStringLiteral("orrery.stopped_early"), s.reason}});
            report.events
                << QStringLiteral("%1: trial %2 stopped early: %3").arg(sw.name).arg(s.trial).arg(s.reason);
        }
    } catch (const std::exception &e) {
        report.errors << QStringLiteral("%1: early stop: %2").arg(sw.name, QString::fromUtf8(e.what()));
    }
}

// The sweep's verdict (sweepVerdict) once nothing is active and nothing is left to launch.
void SweepRunner::Impl::endIfDone(const Sweep &sw, const SweepSpec &spec, TickReport &report,
                                  const QString &targetStop)
{
    QString budgetStop;
    if (budgetRoom(sw, spec, &budgetStop) > 0)
        budgetStop.clear();
    const SweepTally seen = tallyTrials(latest(store.trials(sw.id)));
    report.active += seen.active;
    report.running += seen.running;
    if (!sweepVerdict(seen, spec, sw.sweepState(), sw.trialCount, budgetStop, targetStop))
        return;
    // Decided again under the write lock on the sweep and its trials as they are now: a user's
    // retry (retryTrial) or cancel may have come in since they were read, and a retry's attempt
    // is in the store before it re-opens an ended sweep.
    std::optional<SweepVerdict> verdict;
    store.writeTransaction([&] {
        const auto current = store.sweep(sw.id);
        if (!current || !isActive(current->sweepState()))
            return;
        verdict = sweepVerdict(tallyTrials(latest(store.trials(sw.id))), spec, current->sweepState(),
                               current->trialCount, budgetStop, targetStop);
        if (!verdict)
            return;
        store.setSweepState(sw.id, toText(verdict->state));
        store.setSweepMessage(sw.id, verdict->message);
    });
    if (!verdict)
        return;
    report.events << QStringLiteral("%1: %2 (%3)").arg(sw.name, toText(verdict->state), verdict->message);
    // The budget's stop is its own notice where it held trials back (the verdict then says so).
    const bool byBudget = verdict->message.startsWith(QLatin1String("stopped by its budget"));
    notify(sw, byBudget ? Notice::Kind::BudgetStopped : Notice::Kind::SweepEnded, toText(verdict->state),
           std::nullopt, QStringLiteral("%1 %2: %3").arg(sw.name, toText(verdict->state), verdict->message),
           report);
}

// Hangs (hungAttempts): a newly hung attempt is marked (its exit reason says why) and ended with
// the executor's cancel (SIGTERM); one still running kHangKillGraceMs past its limit is killed.
// It is resubmitted as it ends (resolveEnded), without using up `retries`.
void SweepRunner::Impl::endHung(const Sweep &sw, const SweepSpec &spec, QMap<int, Trial> &latestByIndex,
                                TickReport &report)
{
    QHash<int, qint64> gaps;
    {
        ProgressMemory &memory = progressMemory();
        const QMutexLocker lock(&memory.mutex);
        for (const Trial &t : latestByIndex)
            if (const auto it = memory.longestGapMs.constFind(t.id); it != memory.longestGapMs.constEnd())
                gaps.insert(t.index, *it);
    }
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (const Hang &h : hungAttempts(latestByIndex, spec.hangTimeoutMs, gaps, now)) {
        Trial &t = latestByIndex[h.trial];
        try {
            if (h.action == Hang::Action::Kill) {
                executor.kill({t.task});
                report.events << QStringLiteral("%1: trial %2 did not end on SIGTERM within %3: killed")
                                     .arg(sw.name)
                                     .arg(t.index)
                                     .arg(formatDuration(kHangKillGraceMs));
                continue;
            }
            const QString was = t.state;
            t.exitReason = QLatin1String(kHungPrefix) + h.message;
            if (!store.updateTrialIf(was, t))
                continue;  // a user stopped or cancelled it since it was read
            executor.cancel({t.task});
            report.events << QStringLiteral("%1: trial %2 hung: %3; ending it")
                                 .arg(sw.name)
                                 .arg(t.index)
                                 .arg(h.message);
        } catch (const std::exception &e) {
            report.errors << QStringLiteral("%1: ending hung trial %2: %3")
                                 .arg(sw.name)
                                 .arg(t.index)
                                 .arg(QString::fromUtf8(e.what()));
        }
    }
}

void SweepRunner::Impl::notify(const Sweep &sw, Notice::Kind kind, const QString &state,
                               std::optional<int> trial, const QString &message, TickReport &report)
{
    Notice n;
    n.kind = kind;
    n.sweepId = sw.id;
    n.sweep = sw.name;
    n.state = state;
    n.trial = trial;
    n.message = message;
    n.timeMs = QDateTime::currentMSecsSinceEpoch();
    if (const SweepSpec *spec = specOrSkip(sw))
        n.target = spec->notify;
    report.notices << n;
}

// One poll, one read and one ingest for every sweep; then, on the sweeps this follower holds the
// lease of, the decisions: each attempt's, then each sweep's.
TickReport SweepRunner::tick(const QList<SweepId> &sweepIds)
{
    TickReport report;
    Tick tick;
    d->takeLeases(sweepIds, tick, report);
    if (!d->poll(tick, report))
        return report;
    d->planReads(tick);
    d->readAll(tick, report);
    d->ingest(tick, report);
    d->fence(tick, report);
    d->decideAttempts(tick, report);
    for (const Sweep &sw : tick.sweeps)
        d->decideSweep(sw, tick, report);
    return report;
}

TickReport
followActiveSweeps(TrackingStore &store, const TrainerSchema &schema,
                   const std::function<Executor *(const QString &cluster, QString *problem)> &executorFor,
                   const Follower &follower)
{
    QMap<QString, QList<SweepId>> byCluster;
    for (const Sweep &sw : store.sweeps())
        if (isActive(sw.sweepState()))
            byCluster[sw.cluster].append(sw.id);
    TickReport total;
    for (auto it = byCluster.begin(); it != byCluster.end(); ++it) {
        QString problem;
        Executor *executor = executorFor(it.key(), &problem);
        if (!executor) {
            total.errors << QStringLiteral("%1: %2").arg(
                it.key().isEmpty() ? QStringLiteral("local") : it.key(), problem);
            continue;
        }
        SweepRunner runner(store, *executor, schema, follower);
        const TickReport r = runner.tick(it.value());
        total.active += r.active;
        total.running += r.running;
        total.points += r.points;
        total.bytes += r.bytes;
        total.moreToRead |= r.moreToRead;
        total.ingestMs += r.ingestMs;
        total.events << r.events;
        total.notices << r.notices;
        total.errors << r.errors;
        total.followedElsewhere << r.followedElsewhere;
    }
    return total;
}

}  // namespace orrery::core
