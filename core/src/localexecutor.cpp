// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/localexecutor.h"

#include "orrery/core/command.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace orrery::core {

namespace {

[[noreturn]] void fail(const QString &message)
{
    throw std::runtime_error(message.toStdString());
}

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

QStringList LocalExecutor::launch(const LaunchBatch &batch)
{
    if (batch.tasks.isEmpty())
        fail(QStringLiteral("nothing to launch"));
    const QString localDir = QDir(batch.sweepDir).filePath(QStringLiteral("local"));
    if (!QDir().mkpath(localDir))
        fail(QStringLiteral("cannot create %1").arg(localDir));
    QStringList ids;
    QJsonArray tasks;
    for (qsizetype i = 0; i < batch.tasks.size(); ++i) {
        const TaskLaunch &t = batch.tasks[i];
        if (!QDir().mkpath(t.runDir))
            fail(QStringLiteral("cannot create the run directory %1").arg(t.runDir));
        writeAtomically(QDir(t.runDir).filePath(QStringLiteral("trial.yaml")), t.config);
        QFile::remove(QDir(t.runDir).filePath(QStringLiteral("exit.json")));
        const QString id = QDir(localDir).filePath(QStringLiteral("%1.%2").arg(batch.batch).arg(i));
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
        }
        tasks.append(task);
        ids << id;
    }
    const int ranks = ranksPerTrial(batch.resources);
    const QString batchFile = QDir(localDir).filePath(QStringLiteral("batch-%1.json").arg(batch.batch));
    writeJson(batchFile,
              {{QStringLiteral("trainer"), m_trainer},
               {QStringLiteral("max_concurrent"), std::max(1, batch.maxConcurrent)},
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
    return ids;
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
                if (const qint64 started = o.value(QLatin1String("started")).toInteger(); started > 0)
                    st.elapsedMs = std::max<qint64>(0, QDateTime::currentMSecsSinceEpoch() - started);
            } else {
                st.state = TaskStatus::State::Ended;
                st.detail = QStringLiteral("the task and its supervisor are gone");
            }
        } else if (state == QLatin1String("ended")) {
            st.state = TaskStatus::State::Ended;
            st.detail = o.value(QLatin1String("detail")).toString();
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

QList<FileChunk> LocalExecutor::readFiles(const QList<FileRead> &reads)
{
    QList<FileChunk> out;
    for (const FileRead &r : reads) {
        FileChunk c;
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
    qint64 startedMs = 0;  // when it was started (unix ms): its elapsed time in the task file
};

void markEnded(const SupervisedTask &t, const QString &detail, std::optional<int> exitCode)
{
    QJsonObject o{{QStringLiteral("state"), QStringLiteral("ended")}, {QStringLiteral("detail"), detail}};
    if (exitCode)
        o.insert(QStringLiteral("exit_code"), *exitCode);
    if (t.startedMs > 0)
        o.insert(QStringLiteral("elapsed_ms"), QDateTime::currentMSecsSinceEpoch() - t.startedMs);
    writeJson(t.id + QStringLiteral(".json"), o);
}

pid_t spawnTask(const SupervisedTask &t, const QByteArray &trainer, int ranks, int threads)
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
    if (::chdir(workdir.constData()) != 0) {
        std::fprintf(stderr, "orrery: cannot enter %s: %s\n", workdir.constData(), std::strerror(errno));
        ::_exit(126);
    }
    ::setenv("OMP_NUM_THREADS", omp.constData(), 0);  // the user's own setting wins
    for (const auto &[name, value] : env)
        ::setenv(name.constData(), value.constData(), 1);
    if (command)
        ::execvp(argv[0], argv.data());  // a command's program is looked up on PATH, as a shell would
    else
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
    QList<SupervisedTask> pending;
    for (const QJsonValue v : batch.value(QLatin1String("tasks")).toArray()) {
        const QJsonObject t = v.toObject();
        SupervisedTask task{t.value(QLatin1String("id")).toString(),
                            t.value(QLatin1String("run_dir")).toString(),
                            {},
                            {},
                            t.value(QLatin1String("workdir")).toString()};
        for (const QJsonValue a : t.value(QLatin1String("argv")).toArray())
            task.argv << a.toString();
        for (const QJsonValue e : t.value(QLatin1String("env")).toArray())
            task.env.append({e.toArray().at(0).toString(), e.toArray().at(1).toString()});
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
            const pid_t pid = spawnTask(t, trainer, ranks, threads);
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
