// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/mlflowstore.h"
#include "orrery/core/error.h"

#include "orrery/core/runfiles.h"
#include "orrery/core/store.h"

#include "sqlite.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace orrery::core {

namespace {

bool isSqliteFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) && f.read(16) == QByteArray("SQLite format 3\0", 16);
}

// An mlruns file store: experiment directories holding meta.yaml (0 is MLflow's Default).
bool isFileStore(const QString &dir)
{
    const QFileInfoList children = QDir(dir).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot);
    return std::any_of(children.cbegin(), children.cend(), [](const QFileInfo &c) {
        return QFileInfo::exists(QDir(c.absoluteFilePath()).filePath(QStringLiteral("meta.yaml")));
    });
}

// An artifact URI as a local directory: file:///x, or a plain path; empty for s3://, http://, ...
QString localDirOf(const QString &uri, const QString &base)
{
    if (uri.isEmpty())
        return {};
    if (uri.startsWith(QLatin1String("file:")))
        return QUrl(uri).toLocalFile();
    if (uri.contains(QLatin1String("://")))
        return {};
    return QDir(base).absoluteFilePath(uri);
}

QString statusName(int code)  // the file store's RunStatus numbers (mlflow/protos/service.proto)
{
    switch (code) {
    case 1:
        return QStringLiteral("RUNNING");
    case 2:
        return QStringLiteral("SCHEDULED");
    case 3:
        return QStringLiteral("FINISHED");
    case 4:
        return QStringLiteral("FAILED");
    case 5:
        return QStringLiteral("KILLED");
    default:
        return QStringLiteral("RUNNING");
    }
}

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

MlflowStore readSqlite(const QString &file)
{
    MlflowStore out{QStringLiteral("sqlite"), file, {}, {}};
    sqlite3 *raw = nullptr;
    const QByteArray name = QFile::encodeName(file);
    const int rc = sqlite3_open_v2(name.constData(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sql::DbHandle db(raw);
    if (rc != SQLITE_OK)
        fail(QStringLiteral("%1: cannot open the MLflow database: %2")
                 .arg(file, QString::fromUtf8(sqlite3_errmsg(raw))));
    sqlite3_busy_timeout(db.get(), 5000);  // MLflow may be writing it
    try {
        const sql::ReadTransaction tx(db.get());
        std::map<std::string, QString> experiments;
        sql::Stmt e(db.get(), "SELECT experiment_id, name FROM experiments");
        while (e.step())
            experiments[std::string(e.text(0))] = qs(e.text(1));
        QHash<QString, qsizetype> index;
        sql::Stmt r(db.get(),
                    "SELECT run_uuid, name, status, start_time, end_time, artifact_uri, experiment_id "
                    "FROM runs WHERE lifecycle_stage IS NULL OR lifecycle_stage != 'deleted' "
                    "ORDER BY start_time, run_uuid");
        while (r.step()) {
            MlflowRun run;
            run.uuid = qs(r.text(0));
            run.name = qs(r.text(1));
            run.status = qs(r.text(2));
            run.startMs = r.int64(3);
            run.endMs = r.isNull(4) ? 0 : r.int64(4);
            run.artifactDir = localDirOf(qs(r.text(5)), QFileInfo(file).absolutePath());
            run.runDir = run.artifactDir.isEmpty() ? QStringLiteral("%1#%2").arg(file, run.uuid)
                                                   : QFileInfo(run.artifactDir).absolutePath();
            run.experiment = experiments[std::string(r.text(6))];
            index.insert(run.uuid, out.runs.size());
            out.runs.append(run);
        }
        sql::Stmt p(db.get(), "SELECT run_uuid, key, value FROM params ORDER BY run_uuid, key");
        while (p.step())
            if (const qsizetype i = index.value(qs(p.text(0)), -1); i >= 0)
                out.runs[i].params.append({qs(p.text(1)), qs(p.text(2))});
        sql::Stmt t(db.get(), "SELECT run_uuid, key, value FROM tags ORDER BY run_uuid, key");
        while (t.step())
            if (const qsizetype i = index.value(qs(t.text(0)), -1); i >= 0)
                out.runs[i].tags.append({qs(t.text(1)), qs(t.text(2))});
        sql::Stmt m(db.get(),
                    "SELECT run_uuid, key, value, timestamp, step, is_nan FROM metrics "
                    "ORDER BY run_uuid, key, timestamp, step");
        while (m.step())
            if (const qsizetype i = index.value(qs(m.text(0)), -1); i >= 0)
                out.runs[i].metrics.append({qs(m.text(1)),
                                            m.int64(5) ? std::numeric_limits<double>::quiet_NaN() : m.real(2),
                                            m.int64(3), m.int64(4)});
    } catch (const sql::Error &e) {
        fail(QStringLiteral("%1: not an MLflow database this Orrery can read: %2")
                 .arg(file, QString::fromUtf8(e.what())));
    }
    return out;
}

QString readSmall(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.read(1 << 20)) : QString();
}

// key → file under dir (metrics/, params/, tags/); a key with '/' is a path of directories.
QList<std::pair<QString, QString>> keyFiles(const QString &dir)
{
    QList<std::pair<QString, QString>> out;
    QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        out.append({QDir(dir).relativeFilePath(path), path});
    }
    std::sort(out.begin(), out.end());
    return out;
}

double metricValue(const QString &text, bool *ok)
{
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("nan")) {
        *ok = true;
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (t == QLatin1String("inf") || t == QLatin1String("infinity")) {
        *ok = true;
        return std::numeric_limits<double>::infinity();
    }
    if (t == QLatin1String("-inf") || t == QLatin1String("-infinity")) {
        *ok = true;
        return -std::numeric_limits<double>::infinity();
    }
    return t.toDouble(ok);
}

MlflowStore readFileStore(const QString &root)
{
    MlflowStore out{QStringLiteral("file"), root, {}, {}};
    const QFileInfoList experiments = QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QFileInfo &exp : experiments) {
        const QString expMeta = QDir(exp.absoluteFilePath()).filePath(QStringLiteral("meta.yaml"));
        if (!QFileInfo::exists(expMeta))
            continue;  // .trash, models/, ...
        QString expName = exp.fileName();
        try {
            const YAML::Node m = YAML::LoadFile(QFile::encodeName(expMeta).toStdString());
            if (m["lifecycle_stage"] && m["lifecycle_stage"].as<std::string>() == "deleted")
                continue;
            if (m["name"])
                expName = QString::fromStdString(m["name"].as<std::string>());
        } catch (const YAML::Exception &e) {
            out.problems << QStringLiteral("%1: %2").arg(expMeta, QString::fromUtf8(e.what()));
            continue;
        }
        for (const QFileInfo &rd :
             QDir(exp.absoluteFilePath()).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            const QString dir = rd.absoluteFilePath();
            const QString meta = QDir(dir).filePath(QStringLiteral("meta.yaml"));
            if (!QFileInfo::exists(meta))
                continue;
            MlflowRun run;
            run.experiment = expName;
            run.runDir = dir;
            try {
                const YAML::Node m = YAML::LoadFile(QFile::encodeName(meta).toStdString());
                if (m["lifecycle_stage"] && m["lifecycle_stage"].as<std::string>() == "deleted")
                    continue;
                run.uuid = QString::fromStdString(m["run_uuid"] ? m["run_uuid"].as<std::string>()
                                                                : rd.fileName().toStdString());
                if (m["run_name"])
                    run.name = QString::fromStdString(m["run_name"].as<std::string>());
                run.status = m["status"] ? statusName(m["status"].as<int>()) : QStringLiteral("RUNNING");
                run.startMs = m["start_time"] && !m["start_time"].IsNull() ? m["start_time"].as<qint64>() : 0;
                run.endMs = m["end_time"] && !m["end_time"].IsNull() ? m["end_time"].as<qint64>() : 0;
                if (m["artifact_uri"])
                    run.artifactDir =
                        localDirOf(QString::fromStdString(m["artifact_uri"].as<std::string>()), dir);
            } catch (const YAML::Exception &e) {
                out.problems << QStringLiteral("%1: %2").arg(meta, QString::fromUtf8(e.what()));
                continue;
            }
            if (run.artifactDir.isEmpty() &&
                QFileInfo(QDir(dir).filePath(QStringLiteral("artifacts"))).isDir())
                run.artifactDir = QDir(dir).filePath(QStringLiteral("artifacts"));
            for (const auto &[key, path] : keyFiles(QDir(dir).filePath(QStringLiteral("params"))))
                run.params.append({key, readSmall(path)});
            for (const auto &[key, path] : keyFiles(QDir(dir).filePath(QStringLiteral("tags"))))
                run.tags.append({key, readSmall(path)});
            for (const auto &[key, path] : keyFiles(QDir(dir).filePath(QStringLiteral("metrics")))) {
                QFile f(path);
                if (!f.open(QIODevice::ReadOnly))
                    continue;
                int lineNo = 0;
                while (!f.atEnd()) {
                    const QList<QByteArray> parts = f.readLine().trimmed().split(' ');
                    ++lineNo;
                    if (parts.size() < 2) {
                        if (!(parts.size() == 1 && parts[0].isEmpty()))
                            out.problems << QStringLiteral("%1:%2: not \"timestamp value step\"")
                                                .arg(path)
                                                .arg(lineNo);
                        continue;
                    }
                    bool okT = false, okV = false, okS = true;
                    MlflowPoint pt{key, metricValue(QString::fromUtf8(parts[1]), &okV),
                                   parts[0].toLongLong(&okT), 0};
                    if (parts.size() > 2)
                        pt.step = parts[2].toLongLong(&okS);
                    if (okT && okV && okS)
                        run.metrics.append(pt);
                    else
                        out.problems
                            << QStringLiteral("%1:%2: not \"timestamp value step\"").arg(path).arg(lineNo);
                }
            }
            out.runs.append(run);
        }
    }
    return out;
}

}  // namespace

std::optional<QString> findMlflowStore(const QString &path)
{
    const QFileInfo info(path);
    if (info.isFile())
        return isSqliteFile(path) ? std::optional(info.absoluteFilePath()) : std::nullopt;
    if (!info.isDir())
        return std::nullopt;
    const QDir dir(info.absoluteFilePath());
    if (const QString db = dir.filePath(QStringLiteral("mlflow.db")); isSqliteFile(db))
        return db;
    if (info.fileName() == QLatin1String("mlruns") && isFileStore(dir.path()))
        return dir.path();
    if (const QString mlruns = dir.filePath(QStringLiteral("mlruns")); isFileStore(mlruns))
        return mlruns;
    return std::nullopt;
}

MlflowStore readMlflowStore(const QString &storePath)
{
    return QFileInfo(storePath).isFile() ? readSqlite(storePath) : readFileStore(storePath);
}

ImportSources importSources(const QString &path)
{
    ImportSources out;
    out.mlflowStore = findMlflowStore(path);
    if (QFileInfo(path).isDir())
        out.runDirectories = findRunDirectories(path);
    else if (!out.mlflowStore)
        fail(QStringLiteral("%1 is neither a directory nor an MLflow store (mlflow.db, mlruns/)").arg(path));
    return out;
}

MlflowImport importMlflowRuns(TrackingStore &store, const MlflowStore &mlflow)
{
    MlflowImport out;
    out.notes = mlflow.problems;
    for (const MlflowRun &r : mlflow.runs) {
        const QString experiment = r.experiment.isEmpty() ? QStringLiteral("Default") : r.experiment;
        std::optional<RunId> id = store.runByDirectory(r.runDir);
        if (!id) {
            id = store.createRun(store.ensureExperiment(experiment), r.name.isEmpty() ? r.uuid : r.name,
                                 r.startMs, r.runDir);
            ++out.created;
        }
        ++out.runs;
        try {
            store.logParams(*id, r.params);
        } catch (const std::exception &e) {  // a value changed since the last import: params are immutable
            out.notes << QStringLiteral("%1: %2").arg(r.uuid, QString::fromUtf8(e.what()));
        }
        QList<std::pair<QString, QString>> tags = r.tags;
        tags.append({QStringLiteral("orrery.mlflow.run_id"), r.uuid});
        tags.append({QStringLiteral("orrery.mlflow.store"), mlflow.path});
        store.setTags(*id, tags);
        QList<std::pair<QString, MetricPoint>> points;
        points.reserve(r.metrics.size());
        for (const MlflowPoint &p : r.metrics)
            points.append({p.key, MetricPoint{p.step, p.timestampMs, p.value}});
        store.logMetrics(*id, points);
        out.points += points.size();
        if (!r.artifactDir.isEmpty()) {
            QDirIterator it(r.artifactDir, QDir::Files, QDirIterator::Subdirectories);
            // As the capture reads a step from a name: log_image's +step+N+ first, then step-N.
            static const QRegularExpression imageStep(QStringLiteral("\\+step\\+(\\d+)\\+"));
            static const QRegularExpression nameStep(QStringLiteral("(?:global_)?step[-_=]?(\\d+)"),
                                                     QRegularExpression::CaseInsensitiveOption);
            while (it.hasNext()) {
                const QString file = it.next();
                const QString kind = sampleKindOf(file);
                if (kind == QLatin1String("file") || file.contains(QLatin1String("+compressed")))
                    continue;
                Artifact a;
                a.path = QDir(r.runDir).relativeFilePath(file);
                a.kind = kind;
                const QString name = QFileInfo(file).fileName();
                QRegularExpressionMatch m = imageStep.match(name);
                if (!m.hasMatch())
                    m = nameStep.match(name);
                a.step = m.hasMatch() ? m.captured(1).toLongLong() : -1;
                a.remotePath = a.localPath = file;
                a.size = QFileInfo(file).size();
                store.addArtifact(*id, a);
                ++out.media;
            }
        }
        if (const auto status = runStatusFromString(r.status);
            status && *status != RunStatus::Running && *status != RunStatus::Scheduled)
            store.endRun(*id, *status, r.endMs);
    }
    return out;
}

}  // namespace orrery::core
