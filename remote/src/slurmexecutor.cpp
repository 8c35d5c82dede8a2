// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/slurmexecutor.h"

#include "logging.h"
#include "orrery/core/capture.h"
#include "orrery/core/sweeprules.h"
#include "orrery/core/usage.h"
#include "orrery/remote/batchread.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/tar.h"

#include <QDateTime>
#include <QDir>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <stdexcept>

namespace orrery::remote {

namespace {

using core::TaskStatus;

// A batch of 1,000 trials is a few hundred KB of tar; extraction and sbatch take seconds at
// most. Past this the command is stopped, and the error says the batch may have been queued.
constexpr std::chrono::minutes kLaunchTimeout{5};
// A launch whose connection dropped is sent again this many times in all (it is idempotent).
constexpr int kLaunchAttempts = 3;
constexpr std::chrono::seconds kCommandTimeout{60};
// sshd hands the command line to the login shell as one argument: Linux caps one argument at
// 128 KiB (MAX_ARG_STRLEN). Run dirs under the sweep dir cost ~16 bytes each, so this only
// bites with thousands of run dirs outside it.
constexpr qsizetype kMaxCommandLine = 120 * 1024;
// Splits submitLimits' one answer into scontrol's and sacctmgr's parts.
constexpr char kLimitsMarker[] = "orrery-limits-part";

[[noreturn]] void refuse(const QString &message)
{
    throw RemoteError(RemoteError::Kind::Slurm, message);
}

QString arrayJobOf(const QString &taskId)
{
    return taskId.section(QLatin1Char('_'), 0, 0);
}

void requireTaskIds(const QStringList &ids)
{
    for (const QString &id : ids)
        if (!slurm::isJobId(id) || id.contains(QLatin1Char('[')))
            refuse(QStringLiteral("'%1' is not a Slurm task id").arg(id));
}

// The last non-empty line: a login script that prints does not hide sbatch's answer.
QByteArray lastLine(const QByteArray &out)
{
    const QList<QByteArray> lines = out.trimmed().split('\n');
    return lines.isEmpty() ? QByteArray() : lines.back().trimmed();
}

QString textOf(const ExecResult &r)
{
    const QString text = QString::fromUtf8(r.err.isEmpty() ? r.out : r.err).trimmed();
    return text.isEmpty() ? QStringLiteral("no message") : text;
}

}  // namespace

// --- pure pieces ----------------------------------------------------------------------------

TaskStatus taskStatusOf(const QString &state, const QString &reason)
{
    static const QSet<QString> queued{
        QStringLiteral("PENDING"),      QStringLiteral("REQUEUED"),    QStringLiteral("REQUEUE_FED"),
        QStringLiteral("REQUEUE_HOLD"), QStringLiteral("CONFIGURING"), QStringLiteral("RESIZING"),
        QStringLiteral("SUSPENDED"),    QStringLiteral("STOPPED"),     QStringLiteral("RESV_DEL_HOLD"),
    };
    static const QSet<QString> running{QStringLiteral("RUNNING"), QStringLiteral("COMPLETING"),
                                       QStringLiteral("STAGE_OUT"), QStringLiteral("SIGNALING")};
    static const QSet<QString> ended{
        QStringLiteral("COMPLETED"),    QStringLiteral("FAILED"),        QStringLiteral("CANCELLED"),
        QStringLiteral("TIMEOUT"),      QStringLiteral("OUT_OF_MEMORY"), QStringLiteral("NODE_FAIL"),
        QStringLiteral("PREEMPTED"),    QStringLiteral("BOOT_FAIL"),     QStringLiteral("DEADLINE"),
        QStringLiteral("SPECIAL_EXIT"), QStringLiteral("REVOKED"),
    };
    // sacct writes "CANCELLED by 1000"; squeue's states are single words.
    const QString word = state.section(QLatin1Char(' '), 0, 0).trimmed();
    TaskStatus status;
    if (queued.contains(word))
        status.state = TaskStatus::State::Queued;
    else if (running.contains(word))
        status.state = TaskStatus::State::Running;
    else if (ended.contains(word))
        status.state = TaskStatus::State::Ended;
    else
        status.state = TaskStatus::State::Unknown;
    status.detail = word;
    if (!reason.isEmpty() && reason != QLatin1String("None") && status.state != TaskStatus::State::Running)
        status.detail += QStringLiteral(" (%1)").arg(reason);
    return status;
}

QStringList expandArrayTasks(const QString &jobId)
{
    if (!slurm::isJobId(jobId))
        return {};
    const qsizetype open = jobId.indexOf(QLatin1String("_["));
    if (open < 0)
        return {jobId};
    const QString array = jobId.left(open);
    // "2-5,7%2": ranges and single indices, then the throttle.
    const QString list = jobId.mid(open + 2, jobId.size() - open - 3).section(QLatin1Char('%'), 0, 0);
    QStringList ids;
    for (const QString &part : list.split(QLatin1Char(','))) {
        bool okFirst = false, okLast = true;
        const qint64 first = part.section(QLatin1Char('-'), 0, 0).toLongLong(&okFirst);
        const qint64 last = part.contains(QLatin1Char('-'))
            ? part.section(QLatin1Char('-'), 1, 1).toLongLong(&okLast)
            : first;
        // Slurm's MaxArraySize is at most 4,000,001: a wider range is not a real answer.
        if (!okFirst || !okLast || last < first || last - first > 4'000'000)
            return {};
        for (qint64 i = first; i <= last; ++i)
            ids << QStringLiteral("%1_%2").arg(array).arg(i);
    }
    return ids;
}

// The sbatch script reads these with `mapfile -d ''` / `read -d ''`: no shell ever parses them,
// so any byte but NUL arrives as it was.
QList<std::pair<QByteArray, QByteArray>> runDirFiles(const core::TaskLaunch &task)
{
    QList<std::pair<QByteArray, QByteArray>> files{{"trial.yaml", task.config}};
    for (const auto &[name, data] : task.files)  // a config-file sweep's config, args.json
        files.append({name.toUtf8(), data});
    if (task.command.argv.isEmpty())
        return files;
    QByteArray argv, env;
    for (const QString &word : task.command.argv)
        argv += word.toUtf8() + '\0';
    for (const auto &[name, value] : task.command.env)
        env += name.toUtf8() + '=' + value.toUtf8() + '\0';
    files.append({"command.argv", argv});
    files.append({"command.env", env});
    files.append({"command.workdir", task.command.workdir.toUtf8() + '\0'});
    // The trial works in a directory of its own made from the sweep's frozen code (the sbatch
    // script runs .orrery/orrery-code.sh view; core/codesnapshot.h). Absent: in `workdir`.
    if (task.command.code)
        files.append({"command.code", QByteArray("code") + '\0'});
    if (!task.command.nodeWords.isEmpty()) {
        // Per word with a node-time placeholder: its index, its piece count, then the pieces
        // (text and placeholder names alternating); the task program in the template fills them.
        QByteArray late;
        for (const core::NodeWord &w : task.command.nodeWords) {
            late += QByteArray::number(w.index) + '\0' + QByteArray::number(w.pieces.size()) + '\0';
            for (const QString &piece : w.pieces)
                late += piece.toUtf8() + '\0';
        }
        files.append({"command.late", late});
    }
    return files;
}

SbatchJob sbatchJobFor(const ClusterProfile &profile, const core::LaunchBatch &batch)
{
    SbatchJob job;
    job.jobName = batch.sweepName;
    job.sweepDir = batch.sweepDir;
    for (const core::TaskLaunch &t : batch.tasks) {
        job.trialDirs << t.runDir;
        job.commands = job.commands || !t.command.argv.isEmpty();
        job.perNode = job.perNode || t.command.perNode;
        job.nodeWords = job.nodeWords || !t.command.nodeWords.isEmpty();
    }
    job.maxConcurrent = batch.maxConcurrent;
    job.resources = batch.resources;
    job.defaultPartition = profile.partition;
    job.defaultAccount = profile.account;
    job.setup = profile.setup;
    job.trainer = profile.trainerPath;
    job.healthCheck = batch.healthCheck;
    return job;
}

QByteArray batchScript(const ClusterProfile &profile, const QString &configDir,
                       const core::LaunchBatch &batch)
{
    try {
        return renderSbatch(sbatchTemplateFor(configDir, profile.name), sbatchJobFor(profile, batch));
    } catch (const std::invalid_argument &e) {  // shellQuote: a NUL byte
        throw SbatchError(QStringLiteral("batch %1 of %2: %3")
                              .arg(batch.batch)
                              .arg(batch.sweepName, QString::fromUtf8(e.what())));
    }
}

QByteArray previewSbatch(const ClusterProfile &profile, const QString &configDir,
                         const core::SubmitPlan &plan, const QList<core::PlannedTrial> &trials,
                         const QString &sweepDirName)
{
    const QString sweepDir = core::sweepDirectory(profile.remoteRoot, plan.spec.experiment, sweepDirName);
    return batchScript(profile, configDir, core::firstBatch(plan, trials, sweepDir));
}

QList<QByteArray> sbatchArguments(const core::LaunchBatch &batch, const QByteArray &scriptName)
{
    QList<QByteArray> argv{"sbatch", "--parsable",
                           // The runner's task ids depend on it, so it is not left to a template override.
                           "--array=0-" + QByteArray::number(batch.tasks.size() - 1) + '%' +
                               QByteArray::number(batch.maxConcurrent)};
    // The cluster's suspect nodes (docs/sweeps.md "Bad nodes kept out"). Names come from Slurm or
    // the user: one argument, quoted by commandLine, and refused when Slurm could not take it.
    if (!batch.excludeNodes.isEmpty()) {
        for (const QString &node : batch.excludeNodes)
            if (const QString error = core::nodeNameError(node); !error.isEmpty())
                refuse(QStringLiteral("--exclude: %1").arg(error));
        argv << "--exclude=" + batch.excludeNodes.join(QLatin1Char(',')).toUtf8();
    }
    argv << scriptName;
    return argv;
}

// --- the executor ---------------------------------------------------------------------------

SlurmExecutor::SlurmExecutor(ClusterProfile profile, Connection &connection, QString configDir)
    : m_profile(std::move(profile)), m_connection(connection), m_configDir(std::move(configDir)),
      m_slurm(connection)
{ }

QString SlurmExecutor::name() const
{
    return m_profile.name;
}

QString SlurmExecutor::defaultRoot()
{
    if (!m_root.isEmpty())
        return m_root;
    m_root = absoluteRemoteRoot(m_profile, m_connection);
    return m_root;
}

QByteArray SlurmExecutor::describe(const core::LaunchBatch &batch)
{
    return batchScript(m_profile, m_configDir, batch);
}

core::Launched SlurmExecutor::launch(const core::LaunchBatch &batch)
{
    const QString sweepDir = QDir::cleanPath(batch.sweepDir);
    if (!sweepDir.startsWith(QLatin1Char('/')) || sweepDir == QLatin1String("/"))
        refuse(
            QStringLiteral("the sweep directory '%1' must be an absolute path below /").arg(batch.sweepDir));
    if (batch.batch < 0 || batch.maxConcurrent < 1)
        refuse(
            QStringLiteral("batch %1: a batch needs a number >= 0 and max_concurrent >= 1").arg(batch.batch));
    const QByteArray script = describe(batch);  // refuses an empty batch and unsafe values
    const QByteArray scriptName = "batch-" + QByteArray::number(batch.batch) + ".sbatch";

    // Run dirs below the sweep dir travel inside the archive ("3/trial.yaml"); any other is
    // staged in the archive and moved into place by the same command.
    QList<TarFile> files;
    QList<QByteArray> prepare;  // shell lines after extraction, each built by commandLine
    QList<QByteArray> staleVerdicts;
    const QString prefix = sweepDir + QLatin1Char('/');
    for (qsizetype i = 0; i < batch.tasks.size(); ++i) {
        const core::TaskLaunch &task = batch.tasks[i];
        const QString runDir = QDir::cleanPath(task.runDir);
        if (!runDir.startsWith(QLatin1Char('/')))
            refuse(QStringLiteral("the run directory '%1' must be an absolute path").arg(task.runDir));
        const QByteArray relative =
            runDir.startsWith(prefix) ? runDir.mid(prefix.size()).toUtf8() : QByteArray();
        const QList<std::pair<QByteArray, QByteArray>> taskFiles = runDirFiles(task);
        if (!relative.isEmpty() && isSafeRelativePath(relative)) {
            for (const auto &[name, data] : taskFiles)
                files.append({relative + '/' + name, data, 0600});
            staleVerdicts << relative + "/exit.json";
            staleVerdicts << relative + "/health.json";  // the health check's, read with the attempt
        } else {
            const QByteArray dir = runDir.toUtf8();
            QByteArray moves = commandLine(QList<QByteArray>{"mkdir", "-p", "--", dir});
            for (const auto &[name, data] : taskFiles) {
                const QByteArray staged = ".orrery-staging/batch-" + QByteArray::number(batch.batch) + '/' +
                    QByteArray::number(i) + '.' + name;
                files.append({staged, data, 0600});
                moves += " && " + commandLine(QList<QByteArray>{"mv", "-f", "--", staged, dir + '/' + name});
            }
            prepare << moves;
            staleVerdicts << dir + "/exit.json";
            staleVerdicts << dir + "/health.json";
        }
    }
    // The W&B capture module, with the batch (a cluster needs no Orrery installation for it).
    if (std::any_of(batch.tasks.begin(), batch.tasks.end(),
                    [](const core::TaskLaunch &t) { return !t.command.argv.isEmpty() && t.command.capture; }))
        for (const auto &[name, data] : core::captureModuleFiles())
            files.append({core::captureDirName().toUtf8() + '/' + name.toUtf8(), data, 0600});
    files.append({scriptName, script, 0600});
    const QByteArray archive = writeTar(files, QDateTime::currentSecsSinceEpoch());

    // mkdir && cd && exec 9>batch-N.lock && flock 9 && if [ -s batch-N.jobid ]; then cat it; else
    // (umask 077 && tar -x [&& mv staged] && rm -f stale exit.json) && trap '' HUP &&
    // sbatch > batch-N.jobid.part && mv batch-N.jobid.part batch-N.jobid && cat batch-N.jobid; fi
    // Idempotent (issue 42): a launch sent again — its reply lost with the connection — finds the
    // job id the first one recorded and queues nothing; the lock makes a second one wait for a
    // first still running; HUP ignored, a dropped connection does not stop it between sbatch and
    // the record. The umask keeps the configs private and stays in the subshell.
    const QByteArray dir = sweepDir.toUtf8();
    const QByteArray stem = "batch-" + QByteArray::number(batch.batch);
    const QByteArray record = stem + ".jobid";
    QByteArray line = commandLine(QList<QByteArray>{"mkdir", "-p", "--", dir, dir + "/logs"}) + " && " +
        commandLine(QList<QByteArray>{"cd", "--", dir}) + " && exec 9>" + stem +
        ".lock && flock 9 && if [ -s " + record + " ]; then cat " + record + "; else (umask 077 && " +
        commandLine(QList<QByteArray>{"tar", "-x", "-m", "--no-same-owner", "-f", "-"});
    for (const QByteArray &p : std::as_const(prepare))
        line += " && " + p;
    line += " && " + commandLine(QList<QByteArray>{"rm", "-f", "--"} + staleVerdicts) + ") && " +
        commandLine(QList<QByteArray>{"cd", "--", dir}) + " && trap '' HUP && " +
        commandLine(sbatchArguments(batch, scriptName)) + " > " + record + ".part && mv -f " + record +
        ".part " + record + " && cat " + record + "; fi";
    if (line.size() > kMaxCommandLine)
        refuse(
            QStringLiteral("batch %1 of %2: %3 run directories outside the sweep directory make the command "
                           "too long; keep run directories under %4")
                .arg(batch.batch)
                .arg(batch.sweepName)
                .arg(prepare.size())
                .arg(sweepDir));

    const QString what = QStringLiteral("%1: batch %2 of sweep %3 (%4 tasks)")
                             .arg(m_profile.name)
                             .arg(batch.batch)
                             .arg(batch.sweepName)
                             .arg(batch.tasks.size());
    ExecResult r;
    // A reply lost with the connection: the same line once more (the connection reconnects with
    // backoff), which answers the recorded job id if the first got as far as queueing it.
    for (int attempt = 1;; ++attempt) {
        try {
            r = m_connection.exec(Session::Command{line, kLaunchTimeout, archive}).result();
            break;
        } catch (const RemoteError &e) {
            const bool mayHaveRun = e.kind() == RemoteError::Kind::Timeout || e.commandStarted();
            // Not after a timeout: the first may still be waiting on sbatch, and a second would
            // only wait behind it on the lock for as long again.
            if (mayHaveRun && e.kind() != RemoteError::Kind::Timeout && attempt < kLaunchAttempts) {
                qCInfo(lcRemote) << what << ":" << e.message() << "- asking again (the launch is idempotent)";
                continue;
            }
            if (mayHaveRun)
                throw core::LaunchInterrupted(QStringLiteral("%1: %2; it may have been queued (%3/%4 holds "
                                                             "its job id if it was)")
                                                  .arg(what, e.message(), sweepDir, QString::fromUtf8(record))
                                                  .toStdString());
            if (e.kind() == RemoteError::Kind::Connect)  // not started: nothing queued
                throw core::LaunchInterrupted(QStringLiteral("%1: %2").arg(what, e.message()).toStdString());
            throw;
        }
    }
    if (r.exitStatus != 0) {
        // A limit that frees as jobs end (the user's submit limit, a full queue, an array over
        // MaxArraySize): the runner holds the batch and tries again later, the sweep goes on.
        if (const QString limit = slurm::limitRefusal(textOf(r)); !limit.isEmpty())
            return core::Launched::heldBack(QStringLiteral("%1 was not queued: sbatch refused it for %2 (%3)")
                                                .arg(what, limit, textOf(r)));
        // The cluster's disk full while the batch's files were written: the chain stopped before
        // sbatch, nothing was queued, and room comes back (bench/chaos.py's cluster-full).
        if (textOf(r).contains(QLatin1String("No space left on device")) ||
            textOf(r).contains(QLatin1String("Disk quota exceeded")))
            return core::Launched::heldBack(
                QStringLiteral("%1 was not queued: the cluster's disk is full (%2)").arg(what, textOf(r)));
        refuse(QStringLiteral("%1 was not queued (exit %2): %3").arg(what).arg(r.exitStatus).arg(textOf(r)));
    }
    const auto submitted = slurm::parseSbatch(lastLine(r.out));
    if (!submitted.ok())
        refuse(QStringLiteral("%1: sbatch answered '%2' (%3); the job may be queued (check `squeue`)")
                   .arg(what, QString::fromUtf8(r.out.trimmed()), submitted.error));
    QStringList ids;
    for (qsizetype i = 0; i < batch.tasks.size(); ++i)
        ids << QStringLiteral("%1_%2").arg(submitted.value.jobId).arg(i);
    qCInfo(lcRemote) << what << "queued as" << submitted.value.jobId;
    return {ids, {}};
}

core::CodeSnapshot SlurmExecutor::snapshotCode(const QString &sweepDir, const core::RenderedCommand &command)
{
    // (umask 077 && mkdir .orrery && cat > script) && cd ~ && bash script snapshot WORKDIR CODE ...
    if (!QDir::isAbsolutePath(sweepDir))
        refuse(QStringLiteral("%1: the sweep directory %2 is not absolute").arg(m_profile.name, sweepDir));
    const QByteArray dir = QDir::cleanPath(sweepDir).toUtf8();
    const QByteArray script = core::codeScriptPath(QString::fromUtf8(dir)).toUtf8();
    QList<QByteArray> snapshot{"bash", script, "snapshot",
                               command.workdir.isEmpty() ? QByteArray(".") : command.workdir.toUtf8(),
                               core::codeSnapshotDir(QString::fromUtf8(dir)).toUtf8()};
    for (const QString &o : core::codeSnapshotOptions(command.code.value_or(core::CommandSpec::Code{})))
        snapshot << o.toUtf8();
    const QByteArray line = "(umask 077 && " +
        commandLine(QList<QByteArray>{"mkdir", "-p", "--", dir + "/.orrery"}) + " && " +
        commandLine(QList<QByteArray>{"cat"}) + " > " + commandLine(QList<QByteArray>{script}) +
        ") && cd && " + commandLine(snapshot);
    const QString what =
        QStringLiteral("%1: freezing the code in %2 for the sweep")
            .arg(m_profile.name, command.workdir.isEmpty() ? QStringLiteral("~") : command.workdir);
    ExecResult r;
    try {
        r = m_connection.exec(Session::Command{line, kLaunchTimeout, core::codeScript()}).result();
    } catch (const RemoteError &e) {
        // Freezing the code again gives the same snapshot's record: the launch that needs it
        // waits for the next tick.
        if (e.kind() == RemoteError::Kind::Connect || e.kind() == RemoteError::Kind::Timeout)
            throw core::LaunchInterrupted(QStringLiteral("%1: %2").arg(what, e.message()).toStdString());
        throw;
    }
    if (r.exitStatus != 0)
        refuse(QStringLiteral("%1 failed (exit %2): %3").arg(what).arg(r.exitStatus).arg(textOf(r)));
    const auto parsed = core::parseCodeSnapshot(r.out);
    if (!parsed)
        refuse(QStringLiteral("%1: %2").arg(what, parsed.problem()));
    return *parsed;
}

QHash<QString, TaskStatus> SlurmExecutor::poll(const QStringList &taskIds)
{
    QHash<QString, TaskStatus> statuses;
    if (taskIds.isEmpty())
        return statuses;
    requireTaskIds(taskIds);
    const QSet<QString> wanted(taskIds.begin(), taskIds.end());
    // By array job: one short --jobs list; every task of those arrays comes back.
    QStringList arrays;
    for (const QString &id : taskIds)
        if (!arrays.contains(arrayJobOf(id)))
            arrays << arrayJobOf(id);
    for (const slurm::Job &job : m_slurm.jobs(arrays)) {
        TaskStatus status = taskStatusOf(job.state, job.reason);
        if (status.state == TaskStatus::State::Running || status.state == TaskStatus::State::Ended)
            status.elapsedMs = core::parseSlurmDuration(job.elapsed).ms;  // "0:00": none yet
        status.nodes = slurm::expandHostList(job.nodeList).value;  // pending: none yet
        for (const QString &id : expandArrayTasks(job.jobId))
            if (wanted.contains(id))
                statuses.insert(id, status);
    }

    expectedStarts(arrays, statuses);

    QStringList missing;
    for (const QString &id : taskIds)
        if (!statuses.contains(id))
            missing << id;
    if (!missing.isEmpty() && m_slurm.hasAccounting()) {
        for (const slurm::Accounting &a : m_slurm.accounting(missing).value_or(QList<slurm::Accounting>())) {
            if (!wanted.contains(a.jobId))
                continue;
            TaskStatus status = taskStatusOf(a.state);
            status.nodes = slurm::expandHostList(a.nodeList).value;
            if (status.state == TaskStatus::State::Ended) {
                status.exitCode = a.exitCode;
                if (a.signal != 0)
                    status.detail += QStringLiteral(" (signal %1)").arg(a.signal);
                else if (a.exitCode != 0)
                    status.detail += QStringLiteral(" (exit %1)").arg(a.exitCode);
            }
            statuses.insert(a.jobId, status);
        }
    }
    // Forgotten by Slurm (MinJobAge passed) with no accounting to ask: the runner reads exit.json.
    for (const QString &id : std::as_const(missing))
        if (!statuses.contains(id)) {
            TaskStatus unknown;
            unknown.detail = QStringLiteral("not in Slurm's queue");
            statuses.insert(id, unknown);
        }
    return statuses;
}

QStringList SlurmExecutor::schedulableNodes(const core::SweepResources &resources)
{
    if (!m_clusterInfo)
        m_clusterInfo = m_slurm.clusterInfo();
    const QString wanted = !resources.partition.isEmpty() ? resources.partition : m_profile.partition;
    for (const slurm::Partition &p : std::as_const(m_clusterInfo->partitions))
        if (wanted.isEmpty() ? p.isDefault : p.name == wanted)
            return p.nodes;
    return {};  // a partition sinfo does not list: sbatch will say so
}

QHash<QString, QString> SlurmExecutor::failedNodes(const QStringList &nodes)
{
    QHash<QString, QString> failed;
    if (nodes.isEmpty())
        return failed;
    m_clusterInfo = m_slurm.clusterInfo();  // now, not as it was: a node just went down
    for (const slurm::Node &n : std::as_const(m_clusterInfo->nodes))
        if (nodes.contains(n.name) && slurm::isNodeUnusable(n.state))
            failed.insert(n.name, n.state);
    return failed;
}

void SlurmExecutor::expectedStarts(const QStringList &arrays, QHash<QString, TaskStatus> &statuses)
{
    if (std::none_of(statuses.cbegin(), statuses.cend(),
                     [](const TaskStatus &s) { return s.state == TaskStatus::State::Queued; }))
        return;
    // One more command, only while something waits: Slurm's expected starts, in the cluster's
    // local time (hence its UTC offset first). A failure costs only the estimate.
    const QByteArray line = "date +%z && " +
        commandLine(QList<QByteArray>{"squeue", "--noheader", "--array", "--start",
                                      "--jobs=" + arrays.join(QLatin1Char(',')).toUtf8(),
                                      "--format=" + slurm::squeueStartFormat()});
    try {
        const ExecResult r = m_connection.exec(line, kCommandTimeout).result();
        const auto starts = slurm::parseSqueueStart(r.out);
        if (r.exitStatus != 0 || !starts.ok()) {
            qCWarning(lcRemote) << m_profile.name << "squeue --start:" << textOf(r) << starts.error;
            return;
        }
        for (auto it = starts.value.cbegin(); it != starts.value.cend(); ++it)
            if (auto st = statuses.find(it.key());
                st != statuses.end() && st->state == TaskStatus::State::Queued)
                st->expectedStartMs = it.value();
    } catch (const RemoteError &e) {
        qCWarning(lcRemote) << m_profile.name << "squeue --start:" << e.message();
    }
}

core::SubmitLimits SlurmExecutor::submitLimits()
{
    if (m_limits)
        return *m_limits;
    // One command: the controller's limits, and where the cluster keeps accounting, the user's
    // associations and their QOS (MaxSubmitJobs, MaxSubmitJobsPerUser). Markers split the parts.
    QByteArray line = "scontrol show config";
    const bool accounting = m_slurm.hasAccounting();
    if (accounting)
        line += "; echo " + QByteArray(kLimitsMarker) +
            "; sacctmgr -n -P show assoc user=\"$(id -un)\" format=MaxSubmitJobs,QOS 2>/dev/null; echo " +
            QByteArray(kLimitsMarker) +
            "; sacctmgr -n -P show qos format=Name,MaxSubmitJobsPerUser 2>/dev/null; true";
    const ExecResult r = m_connection.exec(line, kCommandTimeout).result();
    const QList<QByteArray> parts = r.out.split('\n');
    QList<QByteArray> sections(1);
    for (const QByteArray &l : parts) {
        if (l.trimmed() == kLimitsMarker)
            sections.append(QByteArray());
        else
            sections.back() += l + '\n';
    }
    const auto config = slurm::parseConfigLimits(sections.value(0));
    if (!config.ok())
        refuse(QStringLiteral("%1: `scontrol show config`: %2").arg(m_profile.name, config.error));
    core::SubmitLimits limits{config.value.maxArraySize, config.value.maxJobCount, 0};
    if (accounting)
        limits.maxSubmitJobs = slurm::parseSubmitLimit(sections.value(1), sections.value(2));
    qCInfo(lcRemote) << m_profile.name << "MaxArraySize" << limits.maxArraySize << "MaxJobCount"
                     << limits.maxJobCount << "MaxSubmitJobs" << limits.maxSubmitJobs;
    m_limits = limits;
    return limits;
}

void SlurmExecutor::cancel(const QStringList &taskIds)
{
    if (taskIds.isEmpty())
        return;
    requireTaskIds(taskIds);
    // Every task this executor launched is one array task ("123_4"): a bare job id would cancel
    // the whole array, every other trial of its batch with it.
    for (const QString &id : taskIds)
        if (!id.contains(QLatin1Char('_')))
            refuse(QStringLiteral("'%1' names a whole job array, not one of its tasks: cancel takes task ids "
                                  "such as %1_0")
                       .arg(id));
    QList<QByteArray> ids;
    for (const QString &id : taskIds)
        ids << id.toUtf8();
    // One command, three scancels. Pending (and suspended) tasks are cancelled outright; a
    // task pending at the first cannot start before it. Running tasks get SIGTERM twice over:
    // in their batch shell (--batch: during the setup lines that ends the script; once srun
    // runs, the template traps it and keeps waiting) and in their steps, straight from
    // slurmstepd to the ranks: the trainer checkpoints and exits, srun returns, the script ends
    // with the trainer's status. Not SIGTERM to srun (it would SIGKILL the ranks), and no
    // SIGKILL from us: on the fixture, a killed step left its node draining ("Kill task
    // failed"). scancel reports ids that already ended as errors: those are ignored.
    const QByteArray line = commandLine(QList<QByteArray>{"scancel", "--state=PENDING"} + ids) + "; " +
        commandLine(QList<QByteArray>{"scancel", "--state=SUSPENDED"} + ids) + "; " +
        commandLine(QList<QByteArray>{"scancel", "--batch", "--signal=TERM", "--state=RUNNING"} + ids) +
        "; " + commandLine(QList<QByteArray>{"scancel", "--signal=TERM", "--state=RUNNING"} + ids);
    const ExecResult r = m_connection.exec(line, kCommandTimeout).result();
    static const QRegularExpression benign(
        QStringLiteral("already completing or completed|Invalid job id|Job has already finished|is pending|"
                       "not running|no active jobs"),
        QRegularExpression::CaseInsensitiveOption);
    for (const QByteArray &message : r.err.split('\n')) {
        const QString text = QString::fromUtf8(message).trimmed();
        if (!text.isEmpty() && !benign.match(text).hasMatch())
            refuse(QStringLiteral("%1: cancelling %2: %3")
                       .arg(m_profile.name, taskIds.join(QLatin1Char(',')), text));
    }
}

void SlurmExecutor::kill(const QStringList &taskIds)
{
    if (taskIds.isEmpty())
        return;
    requireTaskIds(taskIds);
    QList<QByteArray> ids;
    for (const QString &id : taskIds)
        ids << id.toUtf8();
    // For a hung task only (sweeprules.h hungAttempts): it already had cancel's SIGTERM and did
    // not end. scancel without a signal is Slurm's job termination: slurmstepd sends SIGCONT and
    // SIGTERM, then SIGKILL after KillWait, through its own process tracking.
    const ExecResult r =
        m_connection.exec(commandLine(QList<QByteArray>{"scancel"} + ids), kCommandTimeout).result();
    static const QRegularExpression benign(
        QStringLiteral("already completing or completed|Invalid job id|Job has already finished"),
        QRegularExpression::CaseInsensitiveOption);
    for (const QByteArray &message : r.err.split('\n')) {
        const QString text = QString::fromUtf8(message).trimmed();
        if (!text.isEmpty() && !benign.match(text).hasMatch())
            refuse(QStringLiteral("%1: ending %2: %3")
                       .arg(m_profile.name, taskIds.join(QLatin1Char(',')), text));
    }
}

QList<core::FileChunk> SlurmExecutor::readFiles(const QList<core::FileRead> &reads)
{
    if (reads.isEmpty())
        return {};
    if (m_perl.value_or(true)) {
        QByteArray input;
        try {
            input = batchReadInput(reads);
        } catch (const std::invalid_argument &e) {
            refuse(QStringLiteral("%1: %2").arg(m_profile.name, QString::fromUtf8(e.what())));
        }
        const ExecResult r =
            m_connection.exec(Session::Command{batchReadCommand(), kCommandTimeout, input}).result();
        if (r.exitStatus == 127 && !m_perl) {
            // "perl: command not found": per-file SFTP from now on.
            qCInfo(lcRemote) << m_profile.name << "has no perl; reading files over SFTP";
            m_perl = false;
        } else {
            if (r.exitStatus != 0)
                refuse(QStringLiteral("%1: reading %2 files failed (exit %3): %4")
                           .arg(m_profile.name)
                           .arg(reads.size())
                           .arg(r.exitStatus)
                           .arg(textOf(r)));
            BatchReadResult parsed = parseBatchRead(r.out, reads);
            if (!parsed.ok())
                refuse(QStringLiteral("%1: reading %2 files: %3")
                           .arg(m_profile.name)
                           .arg(reads.size())
                           .arg(parsed.error));
            m_perl = true;
            return parsed.chunks;
        }
    }
    return readFilesSftp(reads);
}

QList<core::FileChunk> SlurmExecutor::readFilesSftp(const QList<core::FileRead> &reads)
{
    return m_connection
        .run([reads](Session &session) {
            QList<core::FileChunk> chunks;
            for (const core::FileRead &r : reads) {
                core::FileChunk chunk;
                if (r.list) {  // no listing without perl: nothing is discovered (docs/sweeps.md)
                    chunks.append(std::move(chunk));
                    continue;
                }
                const auto info = session.stat(r.path);
                if (info && !info->isDir) {
                    chunk.exists = true;
                    chunk.size = info->size;
                    // Up to the size seen by stat, as the perl reader does.
                    const qint64 want =
                        std::min(info->size - r.offset, r.maxBytes < 0 ? info->size : r.maxBytes);
                    if (want > 0)
                        chunk.data = session.readFile(r.path, r.offset, want);
                }
                chunks.append(std::move(chunk));
            }
            return chunks;
        })
        .result();
}

QStringList SlurmExecutor::logPaths(const QString &sweepDir, const QString &taskId, const QString &runDir)
{
    Q_UNUSED(runDir);  // Slurm's logs are per task under the sweep dir (the template's %A_%a)
    requireTaskIds({taskId});
    const QString base = QStringLiteral("%1/logs/%2").arg(QDir::cleanPath(sweepDir), taskId);
    return {base + QStringLiteral(".out"), base + QStringLiteral(".err")};
}

}  // namespace orrery::remote
