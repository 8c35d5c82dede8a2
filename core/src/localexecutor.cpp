// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/localexecutor.h"

#include "orrery/core/capture.h"
#include "orrery/core/codesnapshot.h"
#include "orrery/core/command.h"
#include "orrery/core/error.h"
#include "orrery/core/runfiles.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSaveFile>
#include <QStandardPaths>
#include <QSysInfo>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace orrery::core {

namespace {

void writeAtomically(const QString &path, const QByteArray &data)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size() || !f.commit())
        fail(QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
}

void writeJson(const QString &path, const QJsonObject &o)
{
    writeAtomically(path, QJsonDocument(o).toJson(QJsonDocument::Compact));
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool alive(qint64 pid)
{
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

// "<sweep dir>/local/<batch>.<i>" → "<sweep dir>/local/batch-<batch>.pid"
QString supervisorPidFile(const QString &taskId)
{
    const QFileInfo info(taskId);
    const QString batch = info.fileName().section(QLatin1Char('.'), 0, 0);
    return info.dir().filePath(QStringLiteral("batch-%1.pid").arg(batch));
}

QStringList trainerArgs(const QString &runDir, int ranks)
{
    QStringList args{QStringLiteral("--config"),  QDir(runDir).filePath(QStringLiteral("trial.yaml")),
                     QStringLiteral("--run-dir"), runDir,
                     QStringLiteral("--resume"),  QStringLiteral("auto")};
    if (ranks > 1)
        args << QStringLiteral("--nproc") << QString::number(ranks);
    return args;
}

// Threads per rank when the user set none: the machine's cores shared by the trials that run
// at once and their ranks.
int threadsPerRank(int concurrent, int ranks)
{
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    return std::max(1, cores / std::max(1, concurrent * ranks));
}

QString signalName(int sig)
{
    const char *name = sigabbrev_np(sig);
    return name ? QStringLiteral("signal %1 (SIG%2)").arg(sig).arg(QString::fromLatin1(name))
                : QStringLiteral("signal %1").arg(sig);
}

}  // namespace

QString defaultLocalRoot()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("runs"));
}

LocalExecutor::LocalExecutor(QString trainer, QString supervisor, QString root)
    : m_trainer(std::move(trainer)), m_supervisor(std::move(supervisor)),
      m_root(root.isEmpty() ? defaultLocalRoot() : std::move(root))
{ }

int LocalExecutor::ranksPerTrial(const SweepResources &r)
{
    return std::max(1, r.nodes) * std::max(1, r.gpusPerNode);
}

QByteArray LocalExecutor::describe(const LaunchBatch &batch)
{
    const int ranks = ranksPerTrial(batch.resources);
    QString text =
        QStringLiteral("# %1 trial(s) on this machine, at most %2 at once, %3 rank(s) each; "
                       "OMP_NUM_THREADS=%4 unless set\n")
            .arg(batch.tasks.size())
            .arg(batch.maxConcurrent)
            .arg(ranks)
            .arg(threadsPerRank(std::min<int>(batch.maxConcurrent, int(batch.tasks.size())), ranks));
    if (!batch.healthCheck.isEmpty())
        text +=
            QStringLiteral("# before each trial: %1\n")
                .arg(displayCommand(QStringList{m_trainer} + batch.healthCheck +
                                    QStringList{QStringLiteral("--run-dir"), QStringLiteral("<run dir>")}));
    for (const TaskLaunch &t : batch.tasks) {
        if (t.command.argv.isEmpty()) {
            text += displayCommand(QStringList{m_trainer} + trainerArgs(t.runDir, ranks)) + QLatin1Char('\n');
            continue;
        }
        // A command shown as a shell would run it, though none does: cd, the parameters'
        // variables (the ORRERY_* run variables are left out for brevity), then the words.
        QString vars;
        for (const auto &[name, value] : t.command.env)
            if (name.startsWith(QLatin1String("ORRERY_PARAM_")))
                vars += name + QLatin1Char('=') + displayCommand({value}) + QLatin1Char(' ');
        text += QStringLiteral("(cd %1 && %2%3)\n")
                    .arg(displayCommand({t.command.localWorkdir}), vars, displayCommand(t.command.argv));
    }
    return text.toUtf8();
}

Launched LocalExecutor::launch(const LaunchBatch &batch)
{
    if (batch.tasks.isEmpty())
        fail(QStringLiteral("nothing to launch"));
    // Only the bundled trainer's trials and the health check run orrery-train: a sweep of the
    // user's own command, its logs and its cancels need none.
    const bool needsTrainer = !batch.healthCheck.isEmpty() ||
        std::any_of(batch.tasks.cbegin(), batch.tasks.cend(),
                    [](const TaskLaunch &t) { return t.command.argv.isEmpty(); });
    if (needsTrainer && m_trainer.isEmpty())
        fail(QStringLiteral("orrery-train is not on this machine (set ORRERY_TRAINER, or build it: "
                            "docs/install.md); a sweep of your own command, or on a cluster, does not "
                            "need it here"));
    const QString localDir = QDir(batch.sweepDir).filePath(QStringLiteral("local"));
    if (!QDir().mkpath(localDir))
        fail(QStringLiteral("cannot create %1").arg(localDir));
    QStringList ids;
    QJsonArray tasks;
    bool capturePlaced = false;  // the W&B capture module, once per batch (core/capture.h)
    for (qsizetype i = 0; i < batch.tasks.size(); ++i) {
        const TaskLaunch &t = batch.tasks[i];
        if (!QDir().mkpath(t.runDir))
            fail(QStringLiteral("cannot create the run directory %1").arg(t.runDir));
        writeAtomically(QDir(t.runDir).filePath(QStringLiteral("trial.yaml")), t.config);
        for (const auto &[name, data] : t.files)  // a config-file sweep's config, args.json
            writeAtomically(QDir(t.runDir).filePath(name), data);
        QFile::remove(QDir(t.runDir).filePath(QStringLiteral("exit.json")));
        // A retry appends to the logs of the attempts before it: its part begins with a marker
        // (runfiles.h linesOfAttempt), written now, before it is queued.
        const QString id = QDir(localDir).filePath(QStringLiteral("%1.%2").arg(batch.batch).arg(i));
        if (t.attempt > 0)
            for (const char *log : {"stdout.log", "stderr.log"}) {
                QFile f(QDir(t.runDir).filePath(QString::fromLatin1(log)));
                if (!f.open(QIODevice::Append) ||
                    f.write(attemptMarker(t.attempt, id, QDateTime::currentDateTimeUtc())) < 0)
                    fail(QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString()));
            }
        // A previous attempt's health check: the runner reads health.json as this attempt's.
        QFile::remove(QDir(t.runDir).filePath(QStringLiteral("health.json")));
        QDir(QDir(t.runDir).filePath(QStringLiteral("health"))).removeRecursively();
        QFile::remove(id + QStringLiteral(".cancel"));
        writeJson(id + QStringLiteral(".json"), {{QStringLiteral("state"), QStringLiteral("queued")}});
        QJsonObject task{{QStringLiteral("id"), id}, {QStringLiteral("run_dir"), t.runDir}};
        if (!t.command.argv.isEmpty()) {
            QJsonArray env;
            for (const auto &[name, value] : t.command.env)
                env.append(QJsonArray{name, value});
            task.insert(QStringLiteral("argv"), QJsonArray::fromStringList(t.command.argv));
            task.insert(QStringLiteral("env"), env);
            task.insert(QStringLiteral("workdir"), t.command.localWorkdir);
            if (t.command.code) {  // its own directory, made from the sweep's frozen code
                task.insert(QStringLiteral("workdir"), trialWorkDir(t.runDir));
                task.insert(QStringLiteral("code_dir"), codeSnapshotDir(batch.sweepDir));
                task.insert(QStringLiteral("code_script"), codeScriptPath(batch.sweepDir));
            }
            QJsonArray nodeWords;
            for (const NodeWord &w : t.command.nodeWords)
                nodeWords.append(QJsonArray{w.index, QJsonArray::fromStringList(w.pieces)});
            task.insert(QStringLiteral("node_words"), nodeWords);
            // Processes of this trial: one per GPU (1 on CPU) on each "node", or one per node.
            const int nodes = std::max(1, batch.resources.nodes);
            task.insert(QStringLiteral("nodes"), nodes);
            task.insert(QStringLiteral("processes_per_node"),
                        t.command.perNode ? 1 : std::max(1, batch.resources.gpusPerNode));
            task.insert(QStringLiteral("distributed"), t.command.distributed);
            if (t.command.capture) {
                const QString captureDir = QDir(batch.sweepDir).filePath(captureDirName());
                if (!capturePlaced) {
                    if (!QDir().mkpath(captureDir))
                        fail(QStringLiteral("cannot create %1").arg(captureDir));
                    for (const auto &[name, data] : captureModuleFiles())
                        writeAtomically(QDir(captureDir).filePath(name), data);
                    capturePlaced = true;
                }
                task.insert(QStringLiteral("python_path"), captureDir);
            }
        }
        tasks.append(task);
        ids << id;
    }
    const int ranks = ranksPerTrial(batch.resources);
    const QString batchFile = QDir(localDir).filePath(QStringLiteral("batch-%1.json").arg(batch.batch));
    writeJson(batchFile,
              {{QStringLiteral("trainer"), m_trainer},
               {QStringLiteral("max_concurrent"), std::max(1, batch.maxConcurrent)},
               {QStringLiteral("health_check"), QJsonArray::fromStringList(batch.healthCheck)},
               {QStringLiteral("ranks"), ranks},
               {QStringLiteral("threads"),
                threadsPerRank(std::min<int>(batch.maxConcurrent, int(tasks.size())), ranks)},
               {QStringLiteral("tasks"), tasks}});

    // A detached supervisor: fork, setsid, fork again (so init reaps it), exec. The pipe brings
    // the grandchild's pid back, or the errno of a failed exec.
    const QByteArray program = QFile::encodeName(m_supervisor);
    const QByteArray batchArg = QFile::encodeName(batchFile);
    const QByteArray logFile =
        QFile::encodeName(QDir(localDir).filePath(QStringLiteral("batch-%1.log").arg(batch.batch)));
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0)
        fail(QStringLiteral("cannot start the local supervisor: %1")
                 .arg(QString::fromLocal8Bit(std::strerror(errno))));
    const pid_t child = ::fork();
    if (child < 0)
        fail(QStringLiteral("cannot start the local supervisor: %1")
                 .arg(QString::fromLocal8Bit(std::strerror(errno))));
    if (child == 0) {
        ::close(pipefd[0]);
        ::setsid();
        const pid_t grandchild = ::fork();
        if (grandchild != 0) {
            const pid_t sent = grandchild;
            [[maybe_unused]] const auto n = ::write(pipefd[1], &sent, sizeof sent);
            ::_exit(0);
        }
        const int log = ::open(logFile.constData(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (log >= 0) {
            ::dup2(log, STDOUT_FILENO);
            ::dup2(log, STDERR_FILENO);
        }
        if (devnull >= 0)
            ::dup2(devnull, STDIN_FILENO);
        char *argv[] = {const_cast<char *>(program.constData()), const_cast<char *>("sweep"),
                        const_cast<char *>("supervise"), const_cast<char *>(batchArg.constData()), nullptr};
        ::execv(program.constData(), argv);
        const int error = -errno;
        [[maybe_unused]] const auto n = ::write(pipefd[1], &error, sizeof error);
        ::_exit(127);
    }
    ::close(pipefd[1]);
    pid_t supervisor = 0;
    const auto n = ::read(pipefd[0], &supervisor, sizeof supervisor);
    int status = 0;
    ::waitpid(child, &status, 0);
    int execError = 0;
    if (n == sizeof supervisor && ::read(pipefd[0], &execError, sizeof execError) != sizeof execError)
        execError = 0;
    ::close(pipefd[0]);
    if (n != sizeof supervisor || supervisor <= 0 || execError < 0) {
        for (const QString &id : ids)
            QFile::remove(id + QStringLiteral(".json"));
        fail(QStringLiteral("cannot start the local supervisor %1: %2")
                 .arg(m_supervisor,
                      QString::fromLocal8Bit(std::strerror(execError < 0 ? -execError : ECHILD))));
    }
    writeAtomically(QDir(localDir).filePath(QStringLiteral("batch-%1.pid").arg(batch.batch)),
                    QByteArray::number(qint64(supervisor)));
    return {ids, {}};
}

CodeSnapshot LocalExecutor::snapshotCode(const QString &sweepDir, const RenderedCommand &command)
{
    const QString script = codeScriptPath(sweepDir);
    if (!QDir().mkpath(QFileInfo(script).absolutePath()))
        fail(QStringLiteral("cannot create %1").arg(QFileInfo(script).absolutePath()));
    writeAtomically(script, codeScript());
    QProcess p;
    p.setProgram(QStringLiteral("bash"));
    p.setArguments(
        QStringList{script, QStringLiteral("snapshot"), command.localWorkdir, codeSnapshotDir(sweepDir)} +
        codeSnapshotOptions(command.code.value_or(CommandSpec::Code{})));
    p.start();
    // A code directory is copied in seconds (bench/RESULTS.md "Code snapshot"); ten minutes is a
    // disk that hangs, not a slow copy.
    if (!p.waitForFinished(10 * 60 * 1000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        p.kill();
        const QString said = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
        fail(QStringLiteral("cannot freeze the code in %1 for the sweep: %2")
                 .arg(command.localWorkdir, said.isEmpty() ? p.errorString() : said));
    }
    const auto snapshot = parseCodeSnapshot(p.readAllStandardOutput());
    if (!snapshot)
        fail(snapshot.problem());
    return *snapshot;
}

QHash<QString, TaskStatus> LocalExecutor::poll(const QStringList &taskIds)
{
    QHash<QString, TaskStatus> out;
    for (const QString &id : taskIds) {
        TaskStatus st;
        const QJsonObject o = readJson(id + QStringLiteral(".json"));
        const QString state = o.value(QLatin1String("state")).toString();
        bool supervisorAlive = true;
        if (state == QLatin1String("queued") || state == QLatin1String("running")) {
            QFile pidFile(supervisorPidFile(id));
            supervisorAlive =
                pidFile.open(QIODevice::ReadOnly) && alive(pidFile.readAll().trimmed().toLongLong());
        }
        if (state == QLatin1String("queued")) {
            st.state = supervisorAlive ? TaskStatus::State::Queued : TaskStatus::State::Ended;
            if (!supervisorAlive)
                st.detail = QStringLiteral("the local supervisor is gone (see %1)")
                                .arg(QString(supervisorPidFile(id))
                                         .replace(QLatin1String(".pid"), QLatin1String(".log")));
        } else if (state == QLatin1String("running")) {
            const qint64 pid = o.value(QLatin1String("pid")).toInteger();
            if (alive(pid) || supervisorAlive) {
                st.state = TaskStatus::State::Running;
                st.detail = QStringLiteral("pid %1").arg(pid);
                st.nodes = QStringList{QSysInfo::machineHostName()};  // the one node it has
                if (const qint64 started = o.value(QLatin1String("started")).toInteger(); started > 0)
                    st.elapsedMs = std::max<qint64>(0, QDateTime::currentMSecsSinceEpoch() - started);
            } else {
                st.state = TaskStatus::State::Ended;
                st.detail = QStringLiteral("the task and its supervisor are gone");
            }
        } else if (state == QLatin1String("ended")) {
            st.state = TaskStatus::State::Ended;
            st.detail = o.value(QLatin1String("detail")).toString();
            st.nodes = QStringList{QSysInfo::machineHostName()};
            if (o.contains(QLatin1String("exit_code")))
                st.exitCode = o.value(QLatin1String("exit_code")).toInt();
            if (o.contains(QLatin1String("elapsed_ms")))
                st.elapsedMs = std::max<qint64>(0, o.value(QLatin1String("elapsed_ms")).toInteger());
        }
        out.insert(id, st);
    }
    return out;
}

void LocalExecutor::cancel(const QStringList &taskIds)
{
    // Every mark first: a slot freed by the first SIGTERM must not start a task cancelled with it.
    for (const QString &id : taskIds)
        writeAtomically(id + QStringLiteral(".cancel"), "cancel\n");
    for (const QString &id : taskIds) {
        const QJsonObject o = readJson(id + QStringLiteral(".json"));
        if (o.value(QLatin1String("state")).toString() == QLatin1String("running")) {
            const qint64 pid = o.value(QLatin1String("pid")).toInteger();
            if (pid > 0)
                ::kill(-pid_t(pid), SIGTERM);  // the task's process group: the launcher and its ranks
        }
    }
}

void LocalExecutor::kill(const QStringList &taskIds)
{
    for (const QString &id : taskIds)
        writeAtomically(id + QStringLiteral(".cancel"), "cancel\n");
    for (const QString &id : taskIds) {
        const QJsonObject o = readJson(id + QStringLiteral(".json"));
        if (o.value(QLatin1String("state")).toString() != QLatin1String("running"))
            continue;
        const qint64 pid = o.value(QLatin1String("pid")).toInteger();
        if (pid <= 0)
            continue;
        // SIGKILL ends a stopped process as well; the SIGCONT first lets a stopped process's
        // parent (the launcher of its ranks) see the group's end without waiting on it.
        ::kill(-pid_t(pid), SIGCONT);
        ::kill(-pid_t(pid), SIGKILL);
    }
}

namespace {

// A file of a trial's working directory that is a hard link of the sweep's frozen code
// (codesnapshot.h): the program's own source, not something it wrote. The listing leaves them
// out, so a code directory of thousands of files never crowds out the event files and samples
// (remote/batchread.cpp's lister has the same rule).
bool isFrozenCodeFile(const QString &relative, const QString &absolute)
{
    if (!relative.startsWith(trialWorkDirName() + QLatin1Char('/')) &&
        !relative.startsWith(trialWorkDirName() + QLatin1String(".tmp.")))  // a view cut short
        return false;
    struct stat st { };
    return ::lstat(QFile::encodeName(absolute).constData(), &st) == 0 && st.st_nlink > 1;
}

}  // namespace

FileChunk listDirectory(const QString &dir, qint64 maxEntries)
{
    FileChunk c;
    const QFileInfo info(dir);
    if (!info.isDir() || info.isSymLink())
        return c;
    c.exists = true;
    const QString root = info.absoluteFilePath();
    // Depth-first by hand: QDirIterator follows no limit on depth and would walk a deep tree.
    QList<std::pair<QString, int>> pending{{root, 0}};
    while (!pending.isEmpty() && c.entries.size() < maxEntries) {
        const auto [current, depth] = pending.takeLast();
        const QFileInfoList children = QDir(current).entryInfoList(QDir::AllEntries | QDir::Hidden |
                                                                   QDir::System | QDir::NoDotAndDotDot);
        for (const QFileInfo &child : children) {
            if (child.isSymLink())
                continue;
            if (child.isDir()) {
                if (depth + 1 < FileRead::kMaxListDepth)
                    pending.append({child.absoluteFilePath(), depth + 1});
            } else if (child.isFile() && c.entries.size() < maxEntries) {
                const QString relative = child.absoluteFilePath().mid(root.size() + 1);
                if (isFrozenCodeFile(relative, child.absoluteFilePath()))
                    continue;
                c.entries.append({relative, child.size()});
            }
        }
    }
    std::sort(c.entries.begin(), c.entries.end(),
              [](const FileEntry &a, const FileEntry &b) { return a.path < b.path; });
    c.size = c.entries.size();
    return c;
}

QList<FileChunk> LocalExecutor::readFiles(const QList<FileRead> &reads)
{
    QList<FileChunk> out;
    for (const FileRead &r : reads) {
        FileChunk c;
        if (r.list) {
            out.append(listDirectory(r.path, r.maxBytes));
            continue;
        }
        QFile f(r.path);
        if (f.open(QIODevice::ReadOnly)) {
            c.exists = true;
            c.size = f.size();
            if (c.size > r.offset && f.seek(r.offset))
                c.data = f.read(std::min(r.maxBytes, c.size - r.offset));
        }
        out.append(c);
    }
    return out;
}

QStringList LocalExecutor::logPaths(const QString &sweepDir, const QString &taskId, const QString &runDir)
{
    Q_UNUSED(sweepDir);
    Q_UNUSED(taskId);
    return {QDir(runDir).filePath(QStringLiteral("stdout.log")),
            QDir(runDir).filePath(QStringLiteral("stderr.log"))};
}

// --- the supervisor --------------------------------------------------------------------------

namespace {

volatile std::sig_atomic_t g_terminate = 0;

void onTerminate(int)
{
    g_terminate = 1;
}

struct SupervisedTask {
    QString id, runDir;
    // A command sweep's: the program and its arguments, its ORRERY_* variables, where it runs.
    QStringList argv;
    QList<std::pair<QString, QString>> env;
    QString workdir;
    // A frozen code snapshot (codesnapshot.h) and the script that makes `workdir` from it; empty:
    // the trial runs in `workdir` as it is.
    QString codeDir, codeScript;
    // Its processes, laid out as on a cluster (docs/sweeps.md "Launchers"): `nodes` × `perNode`
    // ranks on this one machine, each with the rendezvous variables and its node's words.
    RenderedCommand layout;  // argv and nodeWords only
    int nodes = 1, perNode = 1;
    bool distributed = true;  // RenderedCommand::distributed
    QString pythonPath;  // the W&B capture module's directory, or empty
    qint64 startedMs = 0;  // when it was started (unix ms): its elapsed time in the task file
};

// A TCP port nothing listens on now, for a trial's rendezvous (MASTER_PORT). The kernel picks it
// from its ephemeral range; the ports handed out by this supervisor are not handed out again.
int freePort()
{
    static QList<int> given;
    for (int attempt = 0; attempt < 16; ++attempt) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            break;
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        int port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0)
            port = ntohs(addr.sin_port);
        ::close(fd);
        if (port > 0 && !given.contains(port)) {
            given.append(port);
            return port;
        }
    }
    return 29500;  // torch.distributed's customary default
}

// One process of a command trial: its words and the variables that say which rank it is.
struct RankLaunch {
    std::vector<QByteArray> args;
    std::vector<std::pair<QByteArray, QByteArray>> env;
};

std::vector<RankLaunch> commandRanks(const SupervisedTask &t)
{
    const int world = std::max(1, t.nodes) * std::max(1, t.perNode);
    const QString port = QString::number(freePort());
    std::vector<RankLaunch> out;
    for (int rank = 0; rank < world; ++rank) {
        const QString node = QString::number(rank / std::max(1, t.perNode));
        RankLaunch r;
        const QHash<QString, QString> values{{QStringLiteral("node_rank"), node},
                                             {QStringLiteral("master_addr"), QStringLiteral("127.0.0.1")},
                                             {QStringLiteral("master_port"), port}};
        for (const QString &a : fillNodeWords(t.layout, values))
            r.args.push_back(a.toUtf8());
        for (const auto &[name, value] : t.env)
            r.env.emplace_back(name.toUtf8(), value.toUtf8());
        // A trial of one process gets none of these (docs/sweeps.md "Launchers": a set RANK
        // reads as "torchrun started me" to many scripts); its node words are filled all the same.
        if (t.distributed) {
            r.env.emplace_back("MASTER_ADDR", "127.0.0.1");
            r.env.emplace_back("MASTER_PORT", port.toUtf8());
            r.env.emplace_back("WORLD_SIZE", QByteArray::number(world));
            r.env.emplace_back("RANK", QByteArray::number(rank));
            r.env.emplace_back("LOCAL_RANK", QByteArray::number(rank % std::max(1, t.perNode)));
            r.env.emplace_back("NODE_RANK", node.toUtf8());
            r.env.emplace_back("NNODES", QByteArray::number(std::max(1, t.nodes)));
        }
        if (!t.pythonPath.isEmpty()) {
            // Before the spec's own PYTHONPATH (`env:`), else the one this process was given.
            QByteArray before = qgetenv("PYTHONPATH");
            for (const auto &[name, value] : t.env)
                if (name == QLatin1String("PYTHONPATH"))
                    before = value.toUtf8();
            r.env.emplace_back("PYTHONPATH",
                               QFile::encodeName(t.pythonPath) +
                                   (before.isEmpty() ? QByteArray() : ':' + before));
        }
        out.push_back(std::move(r));
    }
    return out;
}

volatile std::sig_atomic_t g_leaderTerm = 0;

void onLeaderTerm(int)
{
    g_leaderTerm = 1;
}

// In the child: becomes this rank's program (never returns).
[[noreturn]] void execRank(RankLaunch &r)
{
    for (const auto &[name, value] : r.env)
        ::setenv(name.constData(), value.constData(), 1);
    std::vector<char *> argv;
    for (QByteArray &a : r.args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());  // a command's program is looked up on PATH, as a shell would
    std::fprintf(stderr, "orrery: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
}

// In the task's process (its group's leader), for a trial of several processes: what srun is on
// a cluster. Starts every rank in the group, waits for all, and exits as the first that failed
// (its status, or its signal), else 0; when one fails the others get SIGTERM (srun's
// --kill-on-bad-exit: a rank left alone would wait in a collective forever). A SIGTERM to the
// group (a cancel) reaches the ranks directly; the leader keeps waiting for them.
[[noreturn]] void leadRanks(std::vector<RankLaunch> &ranks)
{
    struct sigaction sa { };
    sa.sa_handler = onLeaderTerm;  // reset to the default by exec in each rank
    ::sigaction(SIGTERM, &sa, nullptr);
    sigset_t term, previous;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    int running = 0;
    for (RankLaunch &r : ranks) {
        ::sigprocmask(SIG_BLOCK, &term, &previous);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::signal(SIGTERM, SIG_DFL);
            ::sigprocmask(SIG_SETMASK, &previous, nullptr);
            execRank(r);
        }
        ::sigprocmask(SIG_SETMASK, &previous, nullptr);
        if (pid > 0)
            ++running;
    }
    int first = 0;  // the first failure's wait status
    bool failed = false;
    while (running > 0) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        --running;
        const bool bad = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        if (bad && !failed) {
            failed = true;
            first = status;
            if (running > 0)
                ::kill(0, SIGTERM);  // the group: the other ranks (this one only notes it)
        }
    }
    if (!failed)
        ::_exit(0);
    if (WIFSIGNALED(first)) {
        ::signal(WTERMSIG(first), SIG_DFL);
        ::raise(WTERMSIG(first));
    }
    ::_exit(WIFEXITED(first) ? WEXITSTATUS(first) : 1);
}

void markEnded(const SupervisedTask &t, const QString &detail, std::optional<int> exitCode)
{
    QJsonObject o{{QStringLiteral("state"), QStringLiteral("ended")}, {QStringLiteral("detail"), detail}};
    if (exitCode)
        o.insert(QStringLiteral("exit_code"), *exitCode);
    if (t.startedMs > 0)
        o.insert(QStringLiteral("elapsed_ms"), QDateTime::currentMSecsSinceEpoch() - t.startedMs);
    writeJson(t.id + QStringLiteral(".json"), o);
}

// In a task's child: the attempt's exit.json saying it failed and why (`reason` is plain text
// without quotes or backslashes), unless the program left one. `cause` may be null.
void writeFailedVerdict(const QByteArray &runDir, const char *reason, const char *cause)
{
    const QByteArray exitJson = runDir + "/exit.json";
    if (::access(exitJson.constData(), F_OK) == 0)
        return;
    const QByteArray tmp = exitJson + ".tmp";
    if (FILE *f = std::fopen(tmp.constData(), "w")) {
        std::fprintf(f, "{\"state\":\"failed\",\"reason\":\"%s\"%s%s%s,\"t\":%lld}\n", reason,
                     cause ? ",\"cause\":\"" : "", cause ? cause : "", cause ? "\"" : "",
                     static_cast<long long>(::time(nullptr)));
        std::fclose(f);
        ::rename(tmp.constData(), exitJson.constData());
    }
}

// In a task's child: runs `args` (the program looked up on PATH) in a child of its own and waits
// for it; true when it exited 0. Its output goes where the task's does.
bool runToEnd(std::vector<QByteArray> args, const char *what)
{
    std::vector<char *> argv;
    for (QByteArray &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "orrery: cannot run %s (%s): %s\n", what, argv[0], std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The deep health check before a task's program (docs/sweeps.md "Health check"): here one node,
// so one orrery-train --health-check, in the task's process group (a cancel ends it too) with the
// task's output files. Returns only when it passed; otherwise the task ends with status 1 and
// the check's exit.json (cause "health"), or one written here when the check could not say.
void runHealthCheckOrExit(const std::vector<QByteArray> &health, const QByteArray &trainer,
                          const QByteArray &runDir)
{
    if (health.empty())
        return;
    const char *why = "the health check failed without naming a node: see health/ and stderr.log";
    if (!trainer.isEmpty()) {
        std::vector<QByteArray> args{trainer};
        args.insert(args.end(), health.begin(), health.end());
        args.push_back("--run-dir");
        args.push_back(runDir);
        if (runToEnd(args, "the health check"))
            return;
    } else {
        why = "health_check is on, and orrery-train (which runs it) was not found: install it next to "
              "orrery, or set health_check: false";
    }
    writeFailedVerdict(runDir, why, "health");
    ::_exit(1);
}

// In a task's child, before it enters its working directory: the trial's own directory made from
// the sweep's frozen code (orrery-code.sh view; kept as it is when a retry finds it). Returns
// only when it is there; otherwise the task ends with status 126, the script's reason in stderr.log.
void makeTrialWorkdirOrExit(const QByteArray &script, const QByteArray &codeDir, const QByteArray &workdir)
{
    if (runToEnd({"bash", script, "view", codeDir, workdir}, "the trial's directory"))
        return;
    std::fprintf(stderr, "orrery: cannot make the trial's directory %s from the sweep's code %s\n",
                 workdir.constData(), codeDir.constData());
    writeFailedVerdict(QFile::encodeName(QFileInfo(QFile::decodeName(workdir)).absolutePath()),
                       "cannot make the trial's directory from the sweep's code (see stderr.log)", nullptr);
    ::_exit(126);
}

pid_t spawnTask(const SupervisedTask &t, const QByteArray &trainer, int ranks, int threads,
                const std::vector<QByteArray> &health)
{
    std::vector<QByteArray> args;
    if (t.argv.isEmpty()) {
        args.push_back(trainer);
        for (const QString &a : trainerArgs(t.runDir, ranks))
            args.push_back(QFile::encodeName(a));
    } else {
        for (const QString &a : t.argv)
            args.push_back(a.toUtf8());
    }
    std::vector<std::pair<QByteArray, QByteArray>> env;
    for (const auto &[name, value] : t.env)
        env.emplace_back(name.toUtf8(), value.toUtf8());
    std::vector<RankLaunch> ranksOfCommand;
    if (!t.argv.isEmpty())
        ranksOfCommand = commandRanks(t);
    const QByteArray workdir = QFile::encodeName(t.workdir.isEmpty() ? t.runDir : t.workdir);
    const bool command = !t.argv.isEmpty();
    const QByteArray out = QFile::encodeName(QDir(t.runDir).filePath(QStringLiteral("stdout.log")));
    const QByteArray err = QFile::encodeName(QDir(t.runDir).filePath(QStringLiteral("stderr.log")));
    const QByteArray omp = QByteArray::number(threads);
    std::vector<char *> argv;
    for (QByteArray &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    // SIGTERM is blocked across the fork: a cancel that reaches the new process group before the
    // child has dropped the supervisor's handler (which only sets a flag) must still end it.
    sigset_t term, previous;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &term, &previous);
    const pid_t pid = ::fork();
    if (pid != 0) {
        ::sigprocmask(SIG_SETMASK, &previous, nullptr);
        return pid;
    }
    ::setpgid(0, 0);
    ::signal(SIGTERM, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    const int o = ::open(out.constData(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int e = ::open(err.constData(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (o >= 0)
        ::dup2(o, STDOUT_FILENO);
    if (e >= 0)
        ::dup2(e, STDERR_FILENO);
    if (!t.codeDir.isEmpty())
        makeTrialWorkdirOrExit(QFile::encodeName(t.codeScript), QFile::encodeName(t.codeDir), workdir);
    if (::chdir(workdir.constData()) != 0) {
        std::fprintf(stderr, "orrery: cannot enter %s: %s\n", workdir.constData(), std::strerror(errno));
        ::_exit(126);
    }
    ::setenv("OMP_NUM_THREADS", omp.constData(), 0);  // the user's own setting wins
    runHealthCheckOrExit(health, trainer, QFile::encodeName(t.runDir));
    if (command && ranksOfCommand.size() > 1)
        leadRanks(ranksOfCommand);
    if (command)
        execRank(ranksOfCommand.front());
    for (const auto &[name, value] : env)
        ::setenv(name.constData(), value.constData(), 1);
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "orrery: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
}

}  // namespace

int runLocalSupervisor(const QString &batchFile)
{
    const QJsonObject batch = readJson(batchFile);
    const QByteArray trainer = QFile::encodeName(batch.value(QLatin1String("trainer")).toString());
    const int maxConcurrent = std::max(1, batch.value(QLatin1String("max_concurrent")).toInt());
    const int ranks = std::max(1, batch.value(QLatin1String("ranks")).toInt());
    const int threads = std::max(1, batch.value(QLatin1String("threads")).toInt());
    std::vector<QByteArray> health;
    for (const QJsonValue w : batch.value(QLatin1String("health_check")).toArray())
        health.push_back(w.toString().toUtf8());
    QList<SupervisedTask> pending;
    for (const QJsonValue v : batch.value(QLatin1String("tasks")).toArray()) {
        const QJsonObject t = v.toObject();
        SupervisedTask task;
        task.id = t.value(QLatin1String("id")).toString();
        task.runDir = t.value(QLatin1String("run_dir")).toString();
        task.workdir = t.value(QLatin1String("workdir")).toString();
        task.codeDir = t.value(QLatin1String("code_dir")).toString();
        task.codeScript = t.value(QLatin1String("code_script")).toString();
        for (const QJsonValue a : t.value(QLatin1String("argv")).toArray())
            task.argv << a.toString();
        for (const QJsonValue e : t.value(QLatin1String("env")).toArray())
            task.env.append({e.toArray().at(0).toString(), e.toArray().at(1).toString()});
        task.layout.argv = task.argv;
        for (const QJsonValue w : t.value(QLatin1String("node_words")).toArray())
            task.layout.nodeWords.append(
                {w.toArray().at(0).toInt(), w.toArray().at(1).toVariant().toStringList()});
        task.nodes = std::max(1, t.value(QLatin1String("nodes")).toInt(1));
        task.perNode = std::max(1, t.value(QLatin1String("processes_per_node")).toInt(1));
        task.pythonPath = t.value(QLatin1String("python_path")).toString();
        task.distributed = t.value(QLatin1String("distributed")).toBool(true);
        if (task.id.isEmpty() || task.runDir.isEmpty() || (task.argv.isEmpty() && trainer.isEmpty()))
            continue;
        if (readJson(task.id + QStringLiteral(".json")).value(QLatin1String("state")).toString() ==
            QLatin1String("queued"))
            pending.append(task);
    }
    if (pending.isEmpty()) {
        std::fprintf(stderr, "orrery sweep supervise: %s holds no trainer or no queued task\n",
                     QFile::encodeName(batchFile).constData());
        return 1;
    }

    struct sigaction sa { };
    sa.sa_handler = onTerminate;  // no SA_RESTART: waitpid returns EINTR
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    ::signal(SIGHUP, SIG_IGN);

    QHash<pid_t, SupervisedTask> running;
    bool forwarded = false;
    while (!pending.isEmpty() || !running.isEmpty()) {
        if (g_terminate && !forwarded) {
            forwarded = true;
            for (auto it = running.begin(); it != running.end(); ++it)
                ::kill(-it.key(), SIGTERM);
            for (const SupervisedTask &t : pending)
                markEnded(t, QStringLiteral("cancelled before it started"), std::nullopt);
            pending.clear();
        }
        while (!g_terminate && running.size() < maxConcurrent && !pending.isEmpty()) {
            const SupervisedTask t = pending.takeFirst();
            if (QFileInfo::exists(t.id + QStringLiteral(".cancel"))) {
                markEnded(t, QStringLiteral("cancelled before it started"), std::nullopt);
                continue;
            }
            const pid_t pid = spawnTask(t, trainer, ranks, threads, health);
            if (pid < 0) {
                markEnded(
                    t, QStringLiteral("cannot start: %1").arg(QString::fromLocal8Bit(std::strerror(errno))),
                    std::nullopt);
                continue;
            }
            ::setpgid(pid, pid);
            const qint64 started = QDateTime::currentMSecsSinceEpoch();
            writeJson(t.id + QStringLiteral(".json"),
                      {{QStringLiteral("state"), QStringLiteral("running")},
                       {QStringLiteral("pid"), qint64(pid)},
                       {QStringLiteral("started"), started}});
            running.insert(pid, t);
            running[pid].startedMs = started;
            // A cancel marks the task first and then reads its state: one that read "queued" just
            // before the line above wrote "running" sent no signal, but its mark is there by now.
            if (QFileInfo::exists(t.id + QStringLiteral(".cancel")))
                ::kill(-pid, SIGTERM);
        }
        if (running.isEmpty())
            continue;
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;  // ECHILD: nothing left to wait for
        }
        const auto it = running.find(pid);
        if (it == running.end())
            continue;
        if (WIFEXITED(status))
            markEnded(*it, QStringLiteral("exit %1").arg(WEXITSTATUS(status)), WEXITSTATUS(status));
        else
            markEnded(*it, signalName(WTERMSIG(status)), 128 + WTERMSIG(status));
        running.erase(it);
    }
    return 0;
}

}  // namespace orrery::core
