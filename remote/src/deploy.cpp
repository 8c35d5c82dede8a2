// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/deploy.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"
#include "orrery/remote/shell.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QThread>

#include <algorithm>

namespace orrery::remote {

namespace {

// The source tree this program was built from (remote/CMakeLists.txt): how a developer's build
// deploys without installing.
constexpr const char *kSourceTree = ORRERY_SOURCE_TREE;

// One poll that cannot reach the cluster is retried; this many in a row give up (about a minute
// at the default interval: the Connection has reconnected with backoff in between).
constexpr int kPollFailures = 30;

// The modification time of every uploaded file (2001-09-09): fixed, so re-uploading the same
// source does not make a half-built tree rebuild from scratch.
constexpr qint64 kSourceMtime = 1'000'000'000;

QByteArray hexHash(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

// Dot files and build directories (a developer's trainer/build-*) are not part of the source.
bool skipped(const QFileInfo &entry)
{
    return entry.fileName().startsWith(QLatin1Char('.')) ||
        (entry.isDir() && entry.fileName().startsWith(QLatin1String("build")));
}

QByteArray deployScript()
{
    QFile f(QStringLiteral(":/orrery/deploy/deploy.sh"));
    if (!f.open(QIODevice::ReadOnly))
        throw std::logic_error("deploy.sh is not compiled in (remote/CMakeLists.txt)");
    return f.readAll();
}

QString lastNonEmptyLine(const QByteArray &text)
{
    const QList<QByteArray> lines = text.split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it)
        if (!it->trimmed().isEmpty())
            return QString::fromUtf8(it->trimmed());
    return {};
}

// The last `count` lines of a log.
QString tail(const QByteArray &log, int count)
{
    QList<QByteArray> lines = log.trimmed().split('\n');
    if (lines.size() > count)
        lines = lines.mid(lines.size() - count);
    return QString::fromUtf8(lines.join('\n'));
}

struct Poll {
    bool alive = false;
    std::optional<int> status;
    QString phase;  // build.phase: the last phase started, whatever the log's tail still holds
    QByteArray log;
};

Poll parsePoll(const QByteArray &out)
{
    Poll p;
    const qsizetype sep = out.indexOf("\n---\n");
    const QList<QByteArray> head = out.left(sep < 0 ? out.size() : sep).split('\n');
    p.alive = head.value(0).trimmed() == "alive";
    bool ok = false;
    const int status = head.value(1).trimmed().toInt(&ok);
    if (ok)
        p.status = status;
    if (const QByteArray phase = head.value(2).trimmed(); phase != "-")
        p.phase = QString::fromUtf8(phase);
    if (sep >= 0)
        p.log = out.mid(sep + 5);
    return p;
}

}  // namespace

DeployError::DeployError(const QString &message, QString phase, QString logTail, QString hint)
    : core::Error(phase == QLatin1String("cancelled") ? Kind::Cancelled : Kind::Failed, message),
      m_phase(std::move(phase)), m_logTail(std::move(logTail)), m_hint(std::move(hint))
{ }

QString DeployError::describe() const
{
    QString text = message();
    if (!m_logTail.isEmpty())
        text += QStringLiteral("\n--- the build log's last lines:\n%1\n---").arg(m_logTail);
    if (!m_hint.isEmpty())
        text += QStringLiteral("\nhint: %1").arg(m_hint);
    return text;
}

TrainerSource TrainerSource::read(const QString &root)
{
    TrainerSource source;
    source.root = QDir(root).absolutePath();
    const QDir base(source.root);
    for (const char *top : {"trainer", "cmake"}) {
        // Recursion by hand, so skipped directories are never entered.
        QStringList pending{base.filePath(QLatin1String(top))};
        while (!pending.isEmpty()) {
            const QDir dir(pending.takeFirst());
            for (const QFileInfo &entry :
                 dir.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden)) {
                if (skipped(entry))
                    continue;
                if (entry.isDir()) {
                    pending.append(entry.absoluteFilePath());
                    continue;
                }
                QFile f(entry.absoluteFilePath());
                if (!f.open(QIODevice::ReadOnly))
                    throw std::runtime_error(
                        QStringLiteral("%1: %2").arg(f.fileName(), f.errorString()).toStdString());
                source.files.append({base.relativeFilePath(entry.absoluteFilePath()).toUtf8(), f.readAll(),
                                     entry.isExecutable() ? 0700u : 0600u});
            }
        }
    }
    std::sort(source.files.begin(), source.files.end(),
              [](const TarFile &a, const TarFile &b) { return a.path < b.path; });
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const TarFile &f : std::as_const(source.files)) {
        hash.addData(QByteArray(f.path + '\0' + QByteArray::number(f.data.size()) + '\0'));
        hash.addData(f.data);
    }
    source.hash = hash.result().toHex();
    return source;
}

std::optional<TrainerSource> TrainerSource::locate(QString *problem)
{
    QStringList candidates;
    if (const QString env = qEnvironmentVariable("ORRERY_TRAINER_SOURCE"); !env.isEmpty())
        candidates << env;
    if (QCoreApplication::instance())
        candidates << QDir(QCoreApplication::applicationDirPath())
                          .absoluteFilePath(QStringLiteral("../share/orrery/trainer-source"));
    candidates << QString::fromUtf8(kSourceTree);
    for (const QString &c : std::as_const(candidates)) {
        if (!QFileInfo::exists(QDir(c).filePath(QStringLiteral("trainer/CMakeLists.txt"))))
            continue;
        try {
            return read(c);
        } catch (const std::exception &e) {
            *problem = QString::fromUtf8(e.what());
            return std::nullopt;
        }
    }
    *problem =
        QStringLiteral("the trainer's source is not installed (looked in %1); set ORRERY_TRAINER_SOURCE "
                       "to a directory holding trainer/ and cmake/")
            .arg(candidates.join(QStringLiteral(", ")));
    return std::nullopt;
}

QString deployDirectory(const ClusterProfile &profile, const TrainerSource &source)
{
    if (profile.remoteRoot.isEmpty())
        return {};
    const QByteArray key =
        hexHash(source.hash + '\0' + profile.setup.join(QLatin1Char('\n')).toUtf8()).left(16);
    return profile.remoteRoot + QStringLiteral("/trainer/") + QString::fromLatin1(key);
}

QString deployedTrainerPath(const ClusterProfile &profile, const TrainerSource &source)
{
    const QString dir = deployDirectory(profile, source);
    return dir.isEmpty() ? QString() : dir + QStringLiteral("/bin/orrery-train");
}

QString sweepTrainerPath(const ClusterProfile &profile)
{
    if (!profile.trainerPath.isEmpty())
        return profile.trainerPath;
    QString problem;
    const std::optional<TrainerSource> source = TrainerSource::locate(&problem);
    return source ? deployedTrainerPath(profile, *source) : QString();
}

QByteArray deployBuildScript(const ClusterProfile &profile, const QString &directory)
{
    // deploy.sh start passes the directory as it resolved it ($PWD: a `~` root expanded); the
    // rendered one is the fallback. A setup line may cd elsewhere: the build goes back first.
    QByteArray s = "#!/bin/bash\n"
                   "# Written by `orrery cluster deploy` for the cluster profile " +
        shellQuote(profile.name.toUtf8()) +
        ": its setup lines, each checked,\n"
        "# then the build (deploy.sh build). deploy.sh start runs it with the directory as $1.\n"
        "orrery_dir=${1:-" +
        shellQuote(directory.toUtf8()) +
        "}\n"
        "cd -- \"$orrery_dir\" || exit 1\n"
        "echo 'orrery-deploy: phase setup'\n"
        "echo setup > build.phase\n"
        "orrery_failed() {\n"
        "  echo \"orrery-deploy: failed in setup: $1\"\n"
        "  cd -- \"$orrery_dir\" && echo 1 > build.status.tmp && mv -f build.status.tmp build.status\n"
        "  exit 1\n"
        "}\n";
    for (qsizetype i = 0; i < profile.setup.size(); ++i) {
        const QByteArray line = profile.setup[i].toUtf8();
        // The setup lines are shell by design (the user wrote them to be run, as the sbatch
        // template runs them); what Orrery adds around them is quoted.
        s += "echo " + shellQuote("+ " + line) + "\n" + line + "\n" +
            "orrery_s=$?; [ \"$orrery_s\" = 0 ] || orrery_failed \"line " + QByteArray::number(i + 1) +
            " exited with status $orrery_s: \"" + shellQuote(line) + "\n";
    }
    s += "cd -- \"$orrery_dir\" || orrery_failed \"the setup lines left $orrery_dir unreachable\"\n"
         "source \"$orrery_dir/deploy.sh\" build || orrery_failed \"cannot run deploy.sh\"\n";
    return s;
}

DeployProgress deployProgressFromLog(const QByteArray &logTail)
{
    DeployProgress p;
    static const QRegularExpression phase(QStringLiteral("^orrery-deploy: phase (\\w+)"),
                                          QRegularExpression::MultilineOption);
    static const QRegularExpression makePercent(QStringLiteral("^\\[\\s*(\\d+)%\\]"),
                                                QRegularExpression::MultilineOption);
    static const QRegularExpression ninjaCount(QStringLiteral("^\\[(\\d+)/(\\d+)\\]"),
                                               QRegularExpression::MultilineOption);
    const QString text = QString::fromUtf8(logTail);
    for (auto it = phase.globalMatch(text); it.hasNext();)
        p.phase = it.next().captured(1);
    if (p.phase == QLatin1String("build")) {
        for (auto it = makePercent.globalMatch(text); it.hasNext();)
            p.percent = it.next().captured(1).toInt();
        for (auto it = ninjaCount.globalMatch(text); it.hasNext();) {
            const QRegularExpressionMatch m = it.next();
            p.percent = m.captured(2).toInt() > 0 ? 100 * m.captured(1).toInt() / m.captured(2).toInt() : -1;
        }
    } else if (p.phase == QLatin1String("install") || p.phase == QLatin1String("done")) {
        p.percent = 100;
    }
    p.lastLine = lastNonEmptyLine(logTail);
    return p;
}

QString deployHint(const QString &phase, const QByteArray &log)
{
    const QString text = QString::fromUtf8(log);
    auto has = [&](const char *needle) { return text.contains(QLatin1String(needle), Qt::CaseInsensitive); };
    if (phase == QLatin1String("setup"))
        return QStringLiteral(
            "a setup line of the profile failed (its output is above): fix it with `orrery "
            "cluster add NAME --force ...`; `orrery cluster test NAME` runs the lines alone");
    if (has("cannot import torch") || has("No module named 'torch'"))
        return QStringLiteral("the setup lines must activate a Python environment that has torch (`source "
                              "ENV/bin/activate`, `conda activate ENV`, `module load pytorch`), or set "
                              "ORRERY_PYTHON=/path/to/python in a setup line");
    if (has("no python3 on PATH"))
        return QStringLiteral("no Python after the setup lines: add the line that activates your PyTorch "
                              "environment");
    if (has("no cmake on PATH") || has("cmake: command not found"))
        return QStringLiteral(
            "no CMake on the cluster: `pip install cmake` in the environment the setup lines "
            "activate, or add `module load cmake` to them");
    if (has("CMake 3.25 or higher is required") || has("requires at least CMake"))
        return QStringLiteral("the cluster's CMake is older than 3.25: `pip install -U cmake` in the setup "
                              "lines' environment, or load a newer cmake module");
    if (has("No CMAKE_CXX_COMPILER could be found") || has("CMAKE_CXX_COMPILER not set"))
        return QStringLiteral("no C++ compiler: add `module load gcc` (GCC 11 or newer) to the setup lines");
    if (has("unrecognized command-line option '-std=c++20'") || has("invalid value 'c++20'"))
        return QStringLiteral("the compiler is too old for C++20: load GCC 11 or newer in the setup lines");
    if (has("virtual memory exhausted") || has("Killed signal terminated program") || has("out of memory"))
        return QStringLiteral(
            "the compiler ran out of memory: add `export ORRERY_DEPLOY_JOBS=2` to the setup "
            "lines, or build in a job (`--build-on job`)");
    if ((has("version `GLIBCXX_") || has("version `GLIBC_")) && has("not found"))
        return QStringLiteral("the trainer needs a newer C++ runtime than this node has: load the compiler "
                              "module that built torch in the setup lines");
    if (has("sbatch: error"))
        return QStringLiteral(
            "Slurm refused the build job (above): check the profile's partition and account");
    if (has("undefined reference"))
        return QStringLiteral("a link error against LibTorch: the compiler may not match the one torch was "
                              "built with (load it in the setup lines)");
    if (phase == QLatin1String("ended"))
        return QStringLiteral("the build was killed (time limit, out of memory, or the node went away): run "
                              "the deploy again; it starts from where the build stopped");
    return {};
}

ClusterProfile withAbsoluteRemoteRoot(const ClusterProfile &profile, Connection &connection)
{
    ClusterProfile p = profile;
    if (!p.remoteRoot.isEmpty())  // none: deployDirectory says so
        p.remoteRoot = absoluteRemoteRoot(profile, connection);
    return p;
}

std::optional<QString> findDeployedTrainer(const ClusterProfile &given, Connection &connection,
                                           const TrainerSource &source)
{
    const ClusterProfile profile = withAbsoluteRemoteRoot(given, connection);
    const QString path = deployedTrainerPath(profile, source);
    if (path.isEmpty())
        return std::nullopt;
    const ExecResult r =
        connection.exec(commandLine(QList<QByteArray>{"test", "-x", path.toUtf8()})).result();
    if (r.exitStatus == 0)
        return path;
    return std::nullopt;
}

DeployResult deployTrainer(const ClusterProfile &given, Connection &connection, const TrainerSource &source,
                           const DeployOptions &options)
{
    const ClusterProfile profile = withAbsoluteRemoteRoot(given, connection);
    DeployResult result;
    result.directory = deployDirectory(profile, source);
    result.trainerPath = deployedTrainerPath(profile, source);
    if (result.directory.isEmpty())
        throw DeployError(QStringLiteral("cluster '%1' has no remote root to deploy into").arg(profile.name),
                          QStringLiteral("check"), {},
                          QStringLiteral("set one: `orrery cluster add %1 --force ... --remote-root DIR`")
                              .arg(profile.name));
    auto report = [&](DeployProgress p) {
        if (options.progress)
            options.progress(p);
    };
    const QByteArray dir = result.directory.toUtf8();
    const QByteArray script = dir + "/deploy.sh";

    // 1. Built already, or being built by another deploy? One command.
    report({QStringLiteral("check"), -1, {}});
    const QByteArray check = commandLine(QList<QByteArray>{"test", "-x", result.trainerPath.toUtf8()}) +
        " && echo done || { " + commandLine(QList<QByteArray>{"test", "-f", script}) + " && " +
        commandLine(QList<QByteArray>{"bash", script, "poll"}) + " | head -n 1; } || true";
    const QByteArray state = connection.exec(check).result().out.trimmed();
    if (state == "done") {
        result.cached = true;
        report({QStringLiteral("done"), 100, {}});
        return result;
    }

    // Only a build this deploy started is stopped on cancel; one it joined belongs to another.
    bool started = false;
    const auto cancelledNow = [&] { return options.cancelled && options.cancelled(); };
    if (cancelledNow())
        throw DeployError(QStringLiteral("deploy cancelled before anything was built"),
                          QStringLiteral("cancelled"), {}, {});
    if (state != "alive") {
        // 2. Upload the source with the two scripts, in the stdin of one `tar -x`.
        QList<TarFile> files;
        files.reserve(source.files.size() + 2);
        qint64 bytes = 0;
        for (const TarFile &f : source.files) {
            files.append({"src/" + f.path, f.data, f.mode});
            bytes += f.data.size();
        }
        files.append({"deploy.sh", deployScript(), 0700});
        files.append({"build.sh", deployBuildScript(profile, result.directory), 0700});
        report({QStringLiteral("upload"), -1,
                QStringLiteral("%1 files, %2 KB").arg(files.size()).arg(bytes / 1024)});
        const QByteArray upload = "(umask 077 && " +
            commandLine(QList<QByteArray>{"mkdir", "-p", "--", dir}) + " && " +
            commandLine(QList<QByteArray>{"cd", "--", dir}) + " && " +
            // The archive's own (fixed) times, not extraction time: a second upload of the same
            // source after a failed build leaves make's objects newer than their sources.
            commandLine(QList<QByteArray>{"tar", "-x", "--no-same-owner", "-f", "-"}) + ")";
        const ExecResult up =
            connection.exec(Session::Command{upload, std::chrono::minutes(5), writeTar(files, kSourceMtime)})
                .result();
        if (up.exitStatus != 0)
            throw DeployError(
                QStringLiteral("cannot upload the trainer's source to %1: %2")
                    .arg(result.directory, QString::fromUtf8(up.err).trimmed()),
                QStringLiteral("upload"), QString::fromUtf8(up.err),
                QStringLiteral("check that the remote root is writable (`orrery cluster test %1`)")
                    .arg(profile.name));

        if (cancelledNow())
            throw DeployError(QStringLiteral("deploy cancelled before the build started"),
                              QStringLiteral("cancelled"), {}, {});
        // 3. Start the build, detached on the login node or as a job.
        QList<QByteArray> start{"bash", script, "start"};
        if (profile.buildOn == ClusterProfile::BuildOn::Job) {
            // deploy.sh asks sinfo for the partition's CPUs per node (at most 8 are asked for).
            // No --time: the partition's default (a deploy's limit above the partition's maximum
            // would pend forever); the deploy's own time limit still ends it.
            start << "job" << profile.partition.toUtf8() << "--job-name=orrery-deploy"
                  << "--nodes=1"
                  << "--ntasks=1";
            if (!profile.account.isEmpty())
                start << "--account=" + profile.account.toUtf8();
        } else {
            start << "login";
        }
        const ExecResult startedOut = connection.exec(commandLine(start)).result();
        if (startedOut.exitStatus != 0)
            throw DeployError(QStringLiteral("cannot start the build: %1")
                                  .arg(QString::fromUtf8(startedOut.err + startedOut.out).trimmed()),
                              QStringLiteral("start"), QString::fromUtf8(startedOut.err),
                              deployHint(QStringLiteral("start"), startedOut.err + startedOut.out));
        if (startedOut.out.trimmed() == "done") {
            result.cached = true;
            report({QStringLiteral("done"), 100, {}});
            return result;
        }
        started = startedOut.out.startsWith("started");
    }

    // 4. Follow the log until the build writes its status.
    const QByteArray poll = commandLine(QList<QByteArray>{"bash", script, "poll"});
    const QDateTime deadline = QDateTime::currentDateTimeUtc().addSecs(
        std::chrono::duration_cast<std::chrono::seconds>(options.timeLimit).count());
    int failures = 0, gone = 0;
    // Stops the build when this deploy started it; says so when it cannot (the connection is
    // down: the build goes on, and `deploy.sh cancel` in its directory ends it).
    const auto stop = [&]() -> QString {
        if (!started)
            return QStringLiteral("the build, started by another deploy, goes on");
        try {
            connection.exec(commandLine(QList<QByteArray>{"bash", script, "cancel"})).waitForFinished();
            return QStringLiteral("the build on %1 was stopped").arg(profile.name);
        } catch (const RemoteError &e) {
            return QStringLiteral("could not stop the build (%1): run `bash %2 cancel` on %3")
                .arg(e.message(), QString::fromUtf8(script), profile.name);
        }
    };
    while (true) {
        if (cancelledNow())
            throw DeployError(QStringLiteral("deploy cancelled; %1").arg(stop()), QStringLiteral("cancelled"),
                              {}, {});
        if (QDateTime::currentDateTimeUtc() > deadline)
            throw DeployError(QStringLiteral("the build on %1 ran past %2 minutes; %3")
                                  .arg(profile.name)
                                  .arg(options.timeLimit.count())
                                  .arg(stop()),
                              QStringLiteral("timeout"), {}, {});
        Poll p;
        try {
            p = parsePoll(connection.exec(poll).result().out);
            failures = 0;
        } catch (const RemoteError &e) {
            if (++failures >= kPollFailures)
                throw;
            report({QStringLiteral("reconnecting"), -1, e.message()});
            QThread::msleep(static_cast<unsigned long>(options.pollInterval.count()));
            continue;
        }
        DeployProgress progress = deployProgressFromLog(p.log);
        if (progress.phase.isEmpty())  // the phase line scrolled out of the tail
            progress.phase = p.phase;
        if (progress.phase.isEmpty())
            progress.phase = profile.buildOn == ClusterProfile::BuildOn::Job ? QStringLiteral("queued")
                                                                             : QStringLiteral("starting");
        if (p.status) {
            if (*p.status == 0) {
                const qsizetype from = p.log.lastIndexOf("orrery-deploy: phase install");
                const qsizetype to = p.log.lastIndexOf("orrery-deploy: phase done");
                if (from >= 0 && to > from)
                    result.version =
                        QString::fromUtf8(p.log.mid(from, to - from)).section(QLatin1Char('\n'), 1).trimmed();
                report({QStringLiteral("done"), 100, {}});
                return result;
            }
            // The script says where it failed; that wins over the phase lines the tail holds.
            static const QRegularExpression failedIn(QStringLiteral("orrery-deploy: failed in (\\w+)"));
            const QRegularExpressionMatch f = failedIn.match(QString::fromUtf8(p.log));
            const QString phase = f.hasMatch() ? f.captured(1)
                : *p.status == 130             ? QStringLiteral("cancelled")
                                               : progress.phase;
            throw DeployError(QStringLiteral("the trainer's build on %1 failed in %2 (exit %3)")
                                  .arg(profile.name, phase)
                                  .arg(*p.status),
                              phase, tail(p.log, 25),
                              deployHint(phase, p.log).replace(QLatin1String("NAME"), profile.name));
        }
        // A job Slurm will never start (over a partition's limits, a bad account): say why now.
        static const QRegularExpression never(QStringLiteral(
            "orrery-deploy: job \\S+ PENDING \\(((Partition\\w*Limit|PartitionConfig|Invalid\\w+|"
            "\\w*MaxWall\\w*|AssocMax(Cpu|Node|GRES|Mem)\\w*PerJob\\w*))\\)"));
        if (const QRegularExpressionMatch m = never.match(QString::fromUtf8(p.log)); m.hasMatch()) {
            throw DeployError(
                QStringLiteral("Slurm will not start the build job on %1: %2; %3")
                    .arg(profile.name, m.captured(1), stop()),
                QStringLiteral("queued"), {},
                QStringLiteral("the build job asks for one node and up to 8 CPUs on partition '%1'; "
                               "choose another partition for the profile, or build on the login node "
                               "(`--build-on login`)")
                    .arg(profile.partition.isEmpty() ? QStringLiteral("(default)") : profile.partition));
        }
        // Gone without a status, three polls in a row (the status may be written between the
        // liveness check and its read; squeue may hiccup): it was killed.
        gone = p.alive ? 0 : gone + 1;
        if (gone >= 3)
            throw DeployError(
                QStringLiteral("the trainer's build on %1 ended without finishing").arg(profile.name),
                QStringLiteral("ended"), tail(p.log, 25), deployHint(QStringLiteral("ended"), p.log));
        report(progress);
        QThread::msleep(static_cast<unsigned long>(options.pollInterval.count()));
    }
}

DeployResult deployTrainer(const ClusterProfile &profile, AuthCallbacks prompts, const TrainerSource &source,
                           const DeployOptions &options)
{
    Connection connection(profile.endpoint(), std::move(prompts));
    return deployTrainer(profile, connection, source, options);
}

}  // namespace orrery::remote
