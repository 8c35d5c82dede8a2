// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/diagnostics.h"

#include "orrery/core/paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>
#include <QtGlobal>

#include <sqlite3.h>

#include <algorithm>
#include <memory>

namespace orrery::core {

namespace {

using Status = Check::Status;

// Proves what the tracking store will need of the data directory: it can be created, and a
// SQLite database in it can switch to WAL (some network filesystems cannot) and take a write.
Check sqliteCheck()
{
    Check check{QStringLiteral("SQLite"), Status::Ok, {}, {}};
    const QString version = QString::fromLatin1(sqlite3_libversion());
    const QString dbPath = defaultDatabasePath();
    const QString dir = QFileInfo(dbPath).absolutePath();
    if (!QDir().mkpath(dir)) {
        check.status = Status::Failed;
        check.detail = QStringLiteral("%1; cannot create %2").arg(version, dir);
        check.hint = QStringLiteral("set ORRERY_DB or --db to a writable location");
        return check;
    }
    const QString probe = QDir(dir).filePath(
        QStringLiteral(".orrery-doctor-%1.sqlite").arg(QCoreApplication::applicationPid()));
    sqlite3 *raw = nullptr;
    const int rc = sqlite3_open_v2(QFile::encodeName(probe).constData(), &raw,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, &sqlite3_close);
    QString error;
    if (rc != SQLITE_OK) {
        error = QString::fromUtf8(sqlite3_errstr(rc));
    } else {
        char *message = nullptr;
        if (sqlite3_exec(db.get(), "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1);",
                         nullptr, nullptr, &message) != SQLITE_OK) {
            error = QString::fromUtf8(message);
            sqlite3_free(message);
        }
    }
    for (const char *suffix : {"", "-wal", "-shm"})
        QFile::remove(probe + QLatin1String(suffix));
    if (!error.isEmpty()) {
        check.status = Status::Failed;
        check.detail = QStringLiteral("%1; a WAL database in %2 failed: %3").arg(version, dir, error);
        check.hint = QStringLiteral("put the database on a local disk (ORRERY_DB or --db)");
        return check;
    }
    check.detail = QStringLiteral("%1; database %2").arg(version, dbPath);
    return check;
}

Check configCheck()
{
    Check check{QStringLiteral("config"), Status::Ok, configDirectory(), {}};
    if (!QDir().mkpath(check.detail)) {
        check.status = Status::Failed;
        check.detail = QStringLiteral("cannot create %1").arg(check.detail);
        check.hint = QStringLiteral("check the permissions of your home directory");
    }
    return check;
}

Check trainerCheck()
{
    Check check{QStringLiteral("trainer"), Status::Ok, {}, {}};
    const QString exe = trainerExecutable();
    if (exe.isEmpty()) {
        check.status = Status::Warning;
        check.detail = QStringLiteral("orrery-train not found");
        check.hint = QStringLiteral(
            "the local executor needs it: build with -DORRERY_BUILD_TRAINER=ON or set ORRERY_TRAINER");
        return check;
    }
    QProcess process;
    process.start(exe, {QStringLiteral("--version"), QStringLiteral("--json")});
    // Loading LibTorch with its CUDA libraries takes a few seconds on a cold cache.
    constexpr int kTimeoutMs = 60'000;
    if (!process.waitForFinished(kTimeoutMs) || process.exitStatus() != QProcess::NormalExit ||
        process.exitCode() != 0) {
        process.kill();
        check.status = Status::Failed;
        check.detail = QStringLiteral("%1 --version failed: %2 %3")
                           .arg(exe, process.errorString(),
                                QString::fromLocal8Bit(process.readAllStandardError()).trimmed());
        check.hint = QStringLiteral("rebuild the trainer (cmake --build --preset dev)");
        return check;
    }
    const QJsonObject info = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
    const QJsonObject cuda = info.value(QLatin1String("cuda")).toObject();
    const QJsonObject nccl = info.value(QLatin1String("nccl")).toObject();
    const int devices = cuda.value(QLatin1String("devices")).toInt();
    QStringList parts{QStringLiteral("LibTorch %1").arg(info.value(QLatin1String("torch")).toString())};
    if (cuda.value(QLatin1String("compiled")).toBool())
        parts << QStringLiteral("CUDA %1 (%2 GPU%3)")
                     .arg(cuda.value(QLatin1String("runtime")).toString())
                     .arg(devices)
                     .arg(devices == 1 ? QString() : QStringLiteral("s"));
    if (nccl.value(QLatin1String("compiled")).toBool())
        parts << QStringLiteral("NCCL %1").arg(nccl.value(QLatin1String("version")).toString());
    if (info.value(QLatin1String("gloo")).toBool())
        parts << QStringLiteral("Gloo");
    parts << (info.value(QLatin1String("ffmpeg")).toBool() ? QStringLiteral("MP4 samples")
                                                           : QStringLiteral("Y4M samples"));
    check.detail = QStringLiteral("%1: %2").arg(exe, parts.join(QStringLiteral(", ")));
    if (!info.value(QLatin1String("gloo")).toBool() && devices == 0) {
        check.status = Status::Warning;
        check.hint = QStringLiteral("no Gloo and no GPU: only single-rank training on this machine");
    }
    return check;
}

// A /proc/meminfo line's value ("MemTotal:  131894908 kB") in GB; 0 when absent.
double meminfoGb(const QByteArray &meminfo, const QByteArray &field)
{
    const QByteArray prefix = QByteArray(field).append(':');
    for (const QByteArray &line : meminfo.split('\n'))
        if (line.startsWith(prefix))
            return line.mid(prefix.size()).trimmed().split(' ').value(0).toDouble() * 1024.0 / 1e9;
    return 0;
}

}  // namespace

MachineInfo readMachine()
{
    MachineInfo m;
    m.cpuCores = QThread::idealThreadCount();
    QFile meminfo(QStringLiteral("/proc/meminfo"));
    if (meminfo.open(QIODevice::ReadOnly)) {
        const QByteArray text = meminfo.readAll();
        m.memoryGb = meminfoGb(text, "MemTotal");
        m.availableGb = meminfoGb(text, "MemAvailable");
    }
    QFile loadavg(QStringLiteral("/proc/loadavg"));
    if (loadavg.open(QIODevice::ReadOnly)) {
        const QList<QByteArray> parts = loadavg.readAll().split(' ');
        bool ok1 = false, ok5 = false, ok15 = false;
        const double l1 = parts.value(0).toDouble(&ok1), l5 = parts.value(1).toDouble(&ok5),
                     l15 = parts.value(2).toDouble(&ok15);
        if (ok1 && ok5 && ok15) {
            m.load1 = l1;
            m.load5 = l5;
            m.load15 = l15;
        }
    }
    const QString smi = QStandardPaths::findExecutable(QStringLiteral("nvidia-smi"));
    m.hasNvidiaSmi = !smi.isEmpty();
    if (!m.hasNvidiaSmi)
        return m;
    QProcess p;
    p.start(smi,
            {QStringLiteral("--query-gpu=name,memory.total,utilization.gpu"),
             QStringLiteral("--format=csv,noheader,nounits")});
    // nvidia-smi answers in well under a second; a wedged driver can hang it for minutes.
    constexpr int kSmiTimeoutMs = 10'000;
    if (!p.waitForFinished(kSmiTimeoutMs) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        p.kill();
        p.waitForFinished(1000);
        m.gpuProblem = QStringLiteral("nvidia-smi failed: %1 %2")
                           .arg(p.errorString(), QString::fromLocal8Bit(p.readAllStandardError()).trimmed());
        return m;
    }
    for (const QByteArray &line : p.readAllStandardOutput().split('\n')) {
        const QList<QByteArray> f = line.split(',');
        if (f.size() < 3)
            continue;
        m.gpus << QStringLiteral("%1, %2 MiB, %3 % busy")
                      .arg(QString::fromUtf8(f[0].trimmed()), QString::fromUtf8(f[1].trimmed()),
                           QString::fromUtf8(f[2].trimmed()));
    }
    return m;
}

QString describeMachine(const MachineInfo &m)
{
    QStringList parts{QStringLiteral("%1 CPU core%2")
                          .arg(m.cpuCores)
                          .arg(m.cpuCores == 1 ? QString() : QStringLiteral("s"))};
    if (m.memoryGb > 0)
        parts << QStringLiteral("%1 GB memory (%2 GB available)")
                     .arg(m.memoryGb, 0, 'f', 1)
                     .arg(m.availableGb, 0, 'f', 1);
    if (!m.gpuProblem.isEmpty())
        parts << QStringLiteral("GPUs: unknown (%1)").arg(m.gpuProblem);
    else
        parts << QStringLiteral("GPUs: %1")
                     .arg(m.gpus.isEmpty() ? QStringLiteral("none") : m.gpus.join(QStringLiteral("; ")));
    if (m.load1)
        parts << QStringLiteral("load %1 %2 %3")
                     .arg(*m.load1, 0, 'f', 2)
                     .arg(*m.load5, 0, 'f', 2)
                     .arg(*m.load15, 0, 'f', 2);
    return parts.join(QStringLiteral(", "));
}

QString statusLabel(Check::Status status)
{
    switch (status) {
    case Status::Ok:
        return QStringLiteral("ok");
    case Status::Warning:
        return QStringLiteral("warn");
    case Status::Failed:
        return QStringLiteral("FAIL");
    }
    return {};
}

bool allPassed(const QList<Check> &checks)
{
    return std::none_of(checks.cbegin(), checks.cend(),
                        [](const Check &c) { return c.status == Status::Failed; });
}

QList<Check> coreChecks()
{
    return {
        Check{QStringLiteral("Qt"),
              Status::Ok,
              QStringLiteral("%1 (built with %2)")
                  .arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR)),
              {}},
        sqliteCheck(),
        configCheck(),
        trainerCheck(),
        Check{QStringLiteral("machine"), Status::Ok, describeMachine(readMachine()), {}},
    };
}

}  // namespace orrery::core
