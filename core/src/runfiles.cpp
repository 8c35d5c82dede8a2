// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/runfiles.h"

#include "orrery/core/paths.h"
#include "orrery/core/tfevents.h"
#include "orrery/core/wandbrun.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>

#include <algorithm>

namespace orrery::core {

namespace {

// An event file is read this much at a time when catching up; a record longer than that (a
// large GIF) is read whole.
constexpr qint64 kChunkBytes = 32 << 20;

QString safeName(const QString &tag)
{
    QString out;
    for (const QChar c : tag)
        out +=
            (c.isLetterOrNumber() || c == QLatin1Char('.') || c == QLatin1Char('-') || c == QLatin1Char('_'))
            ? c
            : QLatin1Char('_');
    return out.isEmpty() || out.startsWith(QLatin1Char('.')) ? QLatin1Char('_') + out : out;
}

QString relativeTo(const QString &path, const QString &dir)
{
    const QString clean = QDir::cleanPath(path), base = QDir::cleanPath(dir);
    if (clean.startsWith(base + QLatin1Char('/')))
        return clean.mid(base.size() + 1);
    return clean;
}

}  // namespace

QString tensorboardMediaDir(const QString &runUuid)
{
    return QDir(cacheDirectory()).filePath(QStringLiteral("tensorboard/") + runUuid);
}

QStringList tfEventsFiles(const QList<FileEntry> &entries, const QString &listedDir, const QString &runDir)
{
    QStringList out;
    for (const FileEntry &e : entries)
        if (isTfEventsFile(e.path.section(QLatin1Char('/'), -1)))
            out << relativeTo(QDir(listedDir).filePath(e.path), runDir);
    out.sort();
    return out;
}

QString tensorboardDirOf(const CommandSpec &command, const QString &runDir)
{
    if (command.tensorboardDir.isEmpty())
        return runDir;
    return QDir::cleanPath(QDir(runDir).filePath(command.tensorboardDir));
}

QByteArray attemptMarker(int attempt, const QString &task, const QDateTime &when)
{
    return QStringLiteral("==> orrery: attempt %1 (task %2) started at %3\n")
        .arg(attempt)
        .arg(task, when.toUTC().toString(Qt::ISODate))
        .toUtf8();
}

QStringList linesOfAttempt(const QStringList &lines, int attempt)
{
    static const QRegularExpression marker(QStringLiteral("^==> orrery: attempt (\\d+) \\("));
    QList<std::pair<qsizetype, int>> markers;  // (line, attempt)
    for (qsizetype i = 0; i < lines.size(); ++i)
        if (const QRegularExpressionMatch m = marker.match(lines[i]); m.hasMatch())
            markers.append({i, m.captured(1).toInt()});
    if (markers.isEmpty() || attempt < markers.front().second)
        return lines.mid(0, markers.isEmpty() ? lines.size() : markers.front().first);
    for (qsizetype k = markers.size() - 1; k >= 0; --k)
        if (markers[k].second == attempt) {
            const qsizetype from = markers[k].first + 1;
            const qsizetype to = k + 1 < markers.size() ? markers[k + 1].first : lines.size();
            return lines.mid(from, to - from);
        }
    return {};  // its output is not in these lines
}

QString errorLineOf(const QStringList &lines)
{
    // The cause before what reports it: a Python exception, a C++ what(), running out of memory
    // or being killed say why; a line with "error:" may (argparse's), unless the launcher wrote it
    // (srun's "error: node1: task 0: Exited with exit code 3" after the traceback).
    static const QRegularExpression cause(QStringLiteral(
        "^(\\w+\\.)*\\w*(Error|Exception|Interrupt|Exit)\\b.*|.*\\bwhat\\(\\):.*|^terminate called.*|"
        ".*\\bout of memory\\b.*|^Killed\\b.*|.*\\bSegmentation fault\\b.*|^Aborted\\b.*|"
        "^(FATAL|Fatal|fatal|ERROR)\\b.*"));
    static const QRegularExpression error(QStringLiteral(".*\\berror:\\s.*"));
    static const QRegularExpression launcher(QStringLiteral("^(srun|slurmstepd|mpirun|torchrun)\\b"));
    for (const QRegularExpression *pattern : {&cause, &error})
        for (qsizetype i = lines.size() - 1; i >= 0; --i) {
            const QString line = lines[i].trimmed();
            if (!line.isEmpty() && !launcher.match(line).hasMatch() && pattern->match(line).hasMatch())
                return line;
        }
    for (qsizetype i = lines.size() - 1; i >= 0; --i)  // only the launcher says anything
        if (const QString line = lines[i].trimmed(); error.match(line).hasMatch())
            return line;
    return {};
}

QString sampleKindOf(const QString &path)
{
    static const QStringList videos{QStringLiteral("mp4"), QStringLiteral("webm"), QStringLiteral("mkv"),
                                    QStringLiteral("mov"), QStringLiteral("avi"),  QStringLiteral("gif"),
                                    QStringLiteral("y4m")};
    static const QStringList images{QStringLiteral("png"), QStringLiteral("jpg"), QStringLiteral("jpeg"),
                                    QStringLiteral("webp")};
    const QString ext = path.section(QLatin1Char('.'), -1).toLower();
    return images.contains(ext) ? QStringLiteral("image")
        : videos.contains(ext)  ? QStringLiteral("video")
                                : QStringLiteral("file");
}

QList<Artifact> matchArtifacts(const QList<ArtifactRule> &rules, const QList<FileEntry> &entries,
                               const QString &runDir)
{
    QList<Artifact> out;
    if (rules.isEmpty())
        return out;
    QList<std::pair<QRegularExpression, QRegularExpression>> compiled;
    for (const ArtifactRule &r : rules)
        compiled.append({QRegularExpression(QRegularExpression::wildcardToRegularExpression(r.glob)),
                         r.stepRegex.isEmpty() ? QRegularExpression() : QRegularExpression(r.stepRegex)});
    for (const FileEntry &e : entries) {
        for (const auto &[glob, step] : compiled) {
            if (!glob.match(e.path).hasMatch())
                continue;
            Artifact a;
            a.path = e.path;
            a.kind = sampleKindOf(e.path);
            if (step.isValid() && !step.pattern().isEmpty()) {
                const auto m = step.match(e.path);
                bool ok = false;
                const qint64 s = m.hasMatch() ? m.captured(1).toLongLong(&ok) : -1;
                a.step = ok ? s : -1;
            }
            a.remotePath = QDir(runDir).filePath(e.path);
            a.size = e.size;
            out.append(a);
            break;
        }
    }
    return out;
}

TfIngest ingestTfEventsChunk(TrackingStore &store, RunId run, const QString &file, qint64 fromOffset,
                             QByteArrayView data, const QString &mediaDir)
{
    TfIngest out;
    const TfEventsChunk chunk = parseTfEvents(data);
    out.needBytes = chunk.needBytes;
    out.records = chunk.records;
    if (chunk.consumed == 0)
        return out;
    store.writeTransaction([&] {
        const IngestResult r =
            store.ingestTextMetrics(run, file, fromOffset, chunk.consumed, chunk.records, chunk.points);
        out.applied = r.applied;
        if (!r.applied)
            return;
        out.consumed = chunk.consumed;
        out.points = r.points;
        for (const TfMedia &m : chunk.media) {
            const QString name =
                QStringLiteral("%1/step-%2.%3").arg(safeName(m.tag)).arg(m.step).arg(m.extension);
            const QString local = QDir(mediaDir).filePath(name);
            QDir().mkpath(QFileInfo(local).path());
            QSaveFile f(local);
            if (!f.open(QIODevice::WriteOnly) || f.write(m.data) != m.data.size() || !f.commit())
                throw StoreError("cannot write " + local.toStdString() + ": " +
                                 f.errorString().toStdString());
            Artifact a;
            a.path = QStringLiteral("tensorboard/") + name;
            a.kind = m.kind;
            a.step = m.step;
            a.remotePath = local;
            a.localPath = local;
            a.size = m.data.size();
            store.addArtifact(run, a);
            ++out.media;
        }
        if (!chunk.problems.isEmpty()) {
            QStringList parts;
            for (auto it = chunk.problems.cbegin(); it != chunk.problems.cend(); ++it)
                parts << QStringLiteral("%1 × %2").arg(it.value()).arg(it.key());
            out.warning = QStringLiteral("%1: skipped %2").arg(file, parts.join(QStringLiteral(", ")));
            const QString tag = QLatin1String(kTensorBoardWarningTag);
            if (!store.details(run).tags.contains(tag))
                store.setTags(run, {{tag, out.warning}});
        }
    });
    return out;
}

TfIngest ingestTfEventsDirectory(TrackingStore &store, RunId run, const QString &dir, const QString &runDir,
                                 const std::function<bool()> &cancel)
{
    TfIngest total;
    const auto r = store.run(run);
    const QString mediaDir = tensorboardMediaDir(r ? r->uuid : QString::number(run));
    const FileChunk listing = listDirectory(dir);
    for (const QString &file : tfEventsFiles(listing.entries, dir, runDir)) {
        QFile f(QDir(runDir).filePath(file));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        qint64 want = kChunkBytes;
        while (!(cancel && cancel())) {
            const qint64 offset = store.ingestState(run, file).offset;
            if (!f.seek(offset))
                break;
            const QByteArray data = f.read(want);
            if (data.isEmpty())
                break;
            const TfIngest t = ingestTfEventsChunk(store, run, file, offset, data, mediaDir);
            if (!t.applied)
                continue;
            total.records += t.records;
            total.points += t.points;
            total.media += t.media;
            if (!t.warning.isEmpty())
                total.warning = t.warning;
            if (t.consumed == 0) {
                if (t.needBytes <= data.size() || data.size() < want)
                    break;  // a record the writer is still writing
                want = t.needBytes;
                continue;
            }
            want = std::max(kChunkBytes, t.needBytes);
        }
    }
    return total;
}

RunFileIngest ingestWandbRun(TrackingStore &store, RunId run, const QString &runDir)
{
    RunFileIngest out;
    const QString path = wandbFileIn(runDir);
    if (path.isEmpty())
        return out;
    const QString key = QFileInfo(path).fileName();
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        out.notes << QStringLiteral("%1: %2").arg(path, f.errorString());
        return out;
    }
    const qint64 offset = store.ingestState(run, key).offset;
    if (!f.seek(offset))
        return out;
    const QByteArray data = f.readAll();
    const WandbLog log = readWandbLog(data, offset);
    WandbRun w;
    for (const QByteArray &record : log.records)
        applyWandbRecord(record, w);
    auto counted = [](const QMap<QString, qint64> &m) {
        QStringList parts;
        for (auto it = m.cbegin(); it != m.cend(); ++it)
            parts << QStringLiteral("%1 × %2").arg(it.value()).arg(it.key());
        return parts.join(QStringLiteral(", "));
    };
    QMap<QString, qint64> problems = log.problems;
    for (auto it = w.problems.cbegin(); it != w.problems.cend(); ++it)
        problems[it.key()] += it.value();
    if (!problems.isEmpty())
        out.notes << QStringLiteral("%1: skipped %2").arg(key, counted(problems));
    if (!w.ignored.isEmpty())
        out.notes << QStringLiteral("%1: ignored (not numbers) %2").arg(key, counted(w.ignored));
    if (log.consumed == 0)
        return out;
    store.writeTransaction([&] {
        const IngestResult r =
            store.ingestTextMetrics(run, key, offset, log.consumed, log.records.size(), w.points);
        if (!r.applied)
            return;
        out.points = r.points;
        const RunDetails details = store.details(run);
        QList<std::pair<QString, QString>> params;
        for (const auto &[k, v] : w.params)
            if (!details.params.contains(k))
                params.append({k, v});
        if (!params.isEmpty())
            store.logParams(run, params);
        if (w.startMs > 0)
            store.setRunStart(run, w.startMs);
        QList<std::pair<QString, QString>> tags;
        if (!w.runId.isEmpty())
            tags.append({QStringLiteral("wandb.run_id"), w.runId});
        if (!w.project.isEmpty())
            tags.append({QStringLiteral("wandb.project"), w.project});
        if (!w.displayName.isEmpty())
            tags.append({QStringLiteral("wandb.name"), w.displayName});
        for (const auto &[k, v] : w.summary)
            tags.append({QStringLiteral("wandb.summary.") + k, v});
        if (!w.ignored.isEmpty())
            tags.append({QStringLiteral("orrery.wandb.ignored"), counted(w.ignored)});
        if (!problems.isEmpty())
            tags.append({QStringLiteral("orrery.warning.wandb"), counted(problems)});
        if (!tags.isEmpty())
            store.setTags(run, tags);
        for (Artifact a : w.media) {
            a.remotePath = QDir(runDir).filePath(a.path);
            a.size = QFileInfo(a.remotePath).size();
            store.addArtifact(run, a);
            ++out.media;
        }
        if (w.exitCode) {
            QJsonObject exit{{QStringLiteral("state"),
                              *w.exitCode == 0 ? QStringLiteral("completed") : QStringLiteral("failed")},
                             {QStringLiteral("reason"), QStringLiteral("W&B exit code %1").arg(*w.exitCode)}};
            if (w.startMs > 0)
                exit.insert(QStringLiteral("t"), double(w.startMs) / 1000.0 + double(w.runtimeS));
            out.exited = store
                             .applyExit(run, QJsonDocument(exit).toJson(QJsonDocument::Compact),
                                        QFileInfo(path).lastModified().toMSecsSinceEpoch(), nullptr)
                             .has_value();
        }
    });
    return out;
}

}  // namespace orrery::core
