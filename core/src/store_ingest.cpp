// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ingest of a run's events.jsonl (format: ARCHITECTURE.md) and of run directories.
#include "orrery/core/events.h"
#include "orrery/core/runfiles.h"
#include "orrery/core/wandbrun.h"
#include "storeimpl.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>

namespace orrery::core {

using sql::Stmt;

namespace {

// One transaction takes at most this much of a file: ~4k metrics lines of 20 values, ~20 ms of
// work (measured), so a reader or a second writer never waits long and a kill loses at most that
// much work (which the next run redoes from the stored offset). Larger gains < 5% throughput.
constexpr qint64 kIngestBytes = 1 << 20;
constexpr int kMaxIssues = 100;

void addIssue(IngestResult &r, qint64 line, QString message)
{
    if (r.issues.size() < kMaxIssues)
        r.issues.push_back({line, std::move(message)});
}

}  // namespace

TrackingStore &IngestBook::store()
{
    return static_cast<TrackingStore &>(*this);  // only a TrackingStore makes an IngestBook
}

IngestState IngestBook::ingestState(RunId run, const QString &file) const
{
    return d->guarded("ingestState", [&] {
        IngestState st;
        Stmt &s =
            d->stmt("SELECT offset, lines, malformed FROM ingest_offsets WHERE run_id = ? AND file = ?");
        s.bind(1, run).bind(2, utf8(file));
        if (s.step())
            st = {s.int64(0), s.int64(1), s.int64(2)};
        s.reset();
        return st;
    });
}

QList<std::pair<QString, IngestState>> IngestBook::ingestStates(RunId run) const
{
    return d->guarded("ingestStates", [&] {
        QList<std::pair<QString, IngestState>> out;
        Stmt &s = d->stmt(
            "SELECT file, offset, lines, malformed FROM ingest_offsets WHERE run_id = ? ORDER BY file");
        s.bind(1, run);
        while (s.step())
            out.append({qstr(s.text(0)), IngestState{s.int64(1), s.int64(2), s.int64(3)}});
        s.reset();
        return out;
    });
}

IngestResult IngestBook::ingestEvents(RunId run, const QString &file, qint64 fromOffset, QByteArrayView data)
{
    return d->guarded("ingest", [&] {
        IngestResult r;
        Impl::Tx tx(*d);
        Stmt &st = d->stmt(
            "SELECT offset, lines, malformed, last_step FROM ingest_offsets WHERE run_id = ? AND file = ?");
        st.bind(1, run).bind(2, utf8(file));
        qint64 offset = 0, lines = 0, malformed = 0, lastStep = 0;
        if (st.step()) {
            offset = st.int64(0);
            lines = st.int64(1);
            malformed = st.int64(2);
            lastStep = st.int64(3);
        }
        st.reset();
        r.newOffset = offset;
        if (offset != fromOffset) {
            r.applied = false;
            return r;
        }
        const qsizetype end = data.lastIndexOf('\n') + 1;  // complete lines only
        if (end <= 0)
            return r;

        std::string runDir;
        {
            Stmt &s = d->stmt("SELECT coalesce(run_dir, ''), start_time FROM runs WHERE run_id = ?");
            s.bind(1, run);
            if (!s.step())
                throw NotFoundError("no run " + std::to_string(run));
            runDir = std::string(s.text(0));
            s.reset();
        }

        // The parser reads a little past each line: give the buffer padding.
        std::string buffer;
        buffer.reserve(std::size_t(end) + EventParser::kPadding);
        buffer.assign(data.data(), std::size_t(end));
        buffer.append(EventParser::kPadding, ' ');
        EventParser parser;
        Event ev;
        std::unordered_map<qint64, std::vector<MetricPoint>> series;
        std::optional<double> firstTime;
        const char *base = buffer.data();
        std::size_t pos = 0;
        while (pos < std::size_t(end)) {
            const char *nl = static_cast<const char *>(std::memchr(base + pos, '\n', std::size_t(end) - pos));
            const std::size_t len = std::size_t(nl - (base + pos));
            const std::string_view line(base + pos, len);
            const qint64 lineNo = lines + r.lines + 1;
            pos += len + 1;
            ++r.lines;
            if (line.find_first_not_of(" \t\r") == std::string_view::npos)
                continue;  // blank lines are harmless
            const std::string error = parser.parse(line, buffer.size() - std::size_t(line.data() - base), ev);
            if (!error.empty()) {
                ++r.malformed;
                addIssue(r, lineNo, QString::fromStdString(error));
                continue;
            }
            ++r.events;
            if (!firstTime && ev.time > 0)
                firstTime = ev.time;
            const qint64 timeMs = qint64(std::llround(ev.time * 1000.0));
            for (std::string_view bad : ev.badValues)
                addIssue(r, lineNo, QStringLiteral("value of '%1' is not a number").arg(qstr(bad)));
            switch (ev.kind) {
            case EventKind::Metrics:
                lastStep = ev.step;
                [[fallthrough]];
            case EventKind::System: {
                // System samples have no step of their own: they take the last training step.
                const qint64 step = ev.hasStep ? ev.step : lastStep;
                for (const auto &[name, value] : ev.values)
                    series[d->ensureKey(name)].push_back({step, timeMs, value});
                r.points += qint64(ev.values.size());
                break;
            }
            case EventKind::Start: {
                for (const auto &[k, v] : ev.params) {
                    try {
                        d->logParam(run, k, v);
                    } catch (const StoreError &e) {
                        addIssue(r, lineNo, QString::fromUtf8(e.what()));
                    }
                }
                for (const auto &[k, v] : ev.runInfo)
                    d->setTag(run, "orrery." + k, v);
                d->stmt("UPDATE runs SET status = 'RUNNING', end_time = NULL WHERE run_id = ?")
                    .bind(1, run)
                    .exec();
                break;
            }
            case EventKind::Status: {
                d->setTag(run, "orrery.state", ev.state);
                const char *status = ev.state == "completed" ? "FINISHED"
                    : ev.state == "failed"                   ? "FAILED"
                    : ev.state == "running"                  ? "RUNNING"
                                                             : nullptr;
                if (status && ev.state != "running")
                    d->stmt("UPDATE runs SET status = ?, end_time = ? WHERE run_id = ?")
                        .bind(1, status)
                        .bind(2, timeMs)
                        .bind(3, run)
                        .exec();
                else if (status)
                    d->stmt("UPDATE runs SET status = 'RUNNING', end_time = NULL WHERE run_id = ?")
                        .bind(1, run)
                        .exec();
                if (!ev.message.empty())
                    d->setTag(run, "orrery.message", ev.message);
                break;
            }
            case EventKind::Artifact: {
                Artifact a;
                a.path = qstr(ev.path);
                a.kind = qstr(ev.type);
                a.step = ev.hasStep ? ev.step : -1;
                if (!runDir.empty()) {
                    a.remotePath = QDir(qstr(runDir)).filePath(a.path);
                    const QFileInfo local(a.remotePath);
                    if (local.isFile()) {
                        a.localPath = local.absoluteFilePath();
                        a.size = local.size();
                    }
                }
                d->addArtifact(run, a);
                break;
            }
            case EventKind::Warning:
                // Something the run survived (a corrupt video skipped): the last one is kept.
                d->setTag(run, "orrery.last_warning", ev.message);
                break;
            case EventKind::Tags:
                for (const auto &[k, v] : ev.tags)
                    d->setTag(run, k, v);
                break;
            case EventKind::Phases:
                // Where the trainer's time went (a line per log window, not per point).
                d->recordPhases(run, ev, timeMs);
                break;
            case EventKind::Unknown:
                --r.events;
                ++r.unknownKinds;
                break;
            }
        }
        for (auto &[key, points] : series)
            d->appendSeries(run, key, std::move(points));
        if (!series.empty())
            d->refreshRunLatest(run);
        if (firstTime && lines == 0)  // the first event is when the run started
            d->stmt("UPDATE runs SET start_time = ? WHERE run_id = ?")
                .bind(1, qint64(std::llround(*firstTime * 1000.0)))
                .bind(2, run)
                .exec();
        r.newOffset = offset + end;
        d->stmt("INSERT INTO ingest_offsets (run_id, file, offset, lines, malformed, last_step, updated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, file) DO UPDATE SET offset = "
                "excluded.offset, "
                "lines = excluded.lines, malformed = excluded.malformed, last_step = excluded.last_step, "
                "updated = excluded.updated")
            .bind(1, run)
            .bind(2, utf8(file))
            .bind(3, r.newOffset)
            .bind(4, lines + r.lines)
            .bind(5, malformed + r.malformed)
            .bind(6, lastStep)
            .bind(7, QDateTime::currentMSecsSinceEpoch())
            .exec();
        tx.commit();
        return r;
    });
}

IngestResult IngestBook::ingestTextMetrics(RunId run, const QString &file, qint64 fromOffset, qint64 consumed,
                                           qint64 lines, const QList<std::pair<QString, MetricPoint>> &points)
{
    return d->guarded("ingestTextMetrics", [&] {
        IngestResult r;
        Impl::Tx tx(*d);
        Stmt &st = d->stmt("SELECT offset, lines FROM ingest_offsets WHERE run_id = ? AND file = ?");
        st.bind(1, run).bind(2, utf8(file));
        qint64 offset = 0, before = 0;
        if (st.step()) {
            offset = st.int64(0);
            before = st.int64(1);
        }
        st.reset();
        r.newOffset = offset;
        if (offset != fromOffset) {
            r.applied = false;
            return r;
        }
        // One point per step and series: a step printed twice (every rank printing it) keeps the last.
        // Points come in runs of one name (a catch-up of an event file: a million), so the key is
        // looked up when the name changes, and a series already in step order is not sorted.
        std::map<qint64, std::vector<MetricPoint>> series;
        const QString *lastName = nullptr;
        std::vector<MetricPoint> *into = nullptr;
        for (const auto &[name, p] : points) {
            if (!lastName || name != *lastName) {
                into = &series[d->ensureKey(utf8(name))];
                lastName = &name;
            }
            into->push_back(p);
        }
        auto byStep = [](const MetricPoint &a, const MetricPoint &b) { return a.step < b.step; };
        for (auto &[key, pts] : series) {
            if (!std::is_sorted(pts.begin(), pts.end(), byStep))
                std::stable_sort(pts.begin(), pts.end(), byStep);
            // The last of equal steps wins: copy each point over its predecessor of the same step.
            std::size_t kept = 0;
            for (std::size_t i = 0; i < pts.size(); ++i) {
                if (kept > 0 && pts[kept - 1].step == pts[i].step)
                    pts[kept - 1] = pts[i];
                else
                    pts[kept++] = pts[i];
            }
            pts.resize(kept);
            r.points += qint64(pts.size());
            d->appendSeries(run, key, std::move(pts));
        }
        if (!series.empty())
            d->refreshRunLatest(run);
        r.lines = lines;
        r.newOffset = offset + consumed;
        d->stmt("INSERT INTO ingest_offsets (run_id, file, offset, lines, malformed, last_step, updated) "
                "VALUES (?, ?, ?, ?, 0, 0, ?) ON CONFLICT (run_id, file) DO UPDATE SET offset = "
                "excluded.offset, lines = excluded.lines, updated = excluded.updated")
            .bind(1, run)
            .bind(2, utf8(file))
            .bind(3, r.newOffset)
            .bind(4, before + lines)
            .bind(5, QDateTime::currentMSecsSinceEpoch())
            .exec();
        tx.commit();
        return r;
    });
}

IngestBook::DirectoryIngest
IngestBook::ingestRunDirectory(const QString &runDirIn, const QString &experiment,
                               const std::function<bool()> &cancel,
                               const std::function<void(qint64, qint64)> &progress)
{
    DirectoryIngest out;
    const QFileInfo info(runDirIn);
    if (!info.isDir())
        throw StoreError(utf8(runDirIn) + " is not a directory");
    const QString runDir = info.canonicalFilePath();
    const QString eventsPath = QDir(runDir).filePath(QStringLiteral("events.jsonl"));

    if (auto existing = store().runByDirectory(runDir)) {
        out.run = *existing;
    } else {
        store().writeTransaction([&] {
            if (auto again = store().runByDirectory(runDir)) {  // another process created it meanwhile
                out.run = *again;
                return;
            }
            const ExperimentId exp = store().ensureExperiment(experiment);
            out.run = store().createRun(exp, QFileInfo(runDir).fileName(), 0, runDir);
            d->setTag(out.run, "orrery.run_dir", utf8(runDir));
            out.created = true;
        });
    }

    QFile file(eventsPath);
    if (file.exists() && !file.open(QIODevice::ReadOnly))
        throw StoreError("cannot read " + utf8(eventsPath) + ": " + utf8(file.errorString()));
    out.events.newOffset = ingestState(out.run, QStringLiteral("events.jsonl")).offset;
    qint64 want = kIngestBytes;
    while (file.isOpen()) {
        if (cancel && cancel())
            break;
        const IngestState state = ingestState(out.run, QStringLiteral("events.jsonl"));
        if (file.size() < state.offset)
            throw StoreError(utf8(eventsPath) + " is shorter than what was already ingested (" +
                             std::to_string(state.offset) + " bytes): it was replaced, not appended to");
        if (!file.seek(state.offset))
            break;
        const QByteArray chunk = file.read(want);
        if (chunk.isEmpty())
            break;
        const IngestResult r = ingestEvents(out.run, QStringLiteral("events.jsonl"), state.offset, chunk);
        if (!r.applied)
            continue;  // another writer advanced the offset: read again from the new one
        if (r.lines == 0) {
            if (chunk.size() < want)
                break;  // a partial last line: the writer is still writing it
            want *= 2;  // a line longer than the read size
            continue;
        }
        want = kIngestBytes;
        out.events.newOffset = r.newOffset;
        if (progress)
            progress(r.newOffset, file.size());
        out.events.lines += r.lines;
        out.events.points += r.points;
        out.events.events += r.events;
        out.events.malformed += r.malformed;
        out.events.unknownKinds += r.unknownKinds;
        for (const IngestIssue &issue : r.issues)
            if (out.events.issues.size() < kMaxIssues)
                out.events.issues.push_back(issue);
    }

    // TensorBoard event files under it, and a W&B offline run's records (runfiles.h).
    if (!(cancel && cancel())) {
        const TfIngest tb = ingestTfEventsDirectory(store(), out.run, runDir, runDir, cancel);
        const RunFileIngest wb = ingestWandbRun(store(), out.run, runDir);
        out.filePoints = tb.points + wb.points;
        out.events.points += out.filePoints;
        out.media = tb.media + wb.media;
        if (!tb.warning.isEmpty())
            out.notes << tb.warning;
        out.notes << wb.notes;
        out.exited = wb.exited;
    }

    // exit.json: the trainer's last word on how the run ended (ARCHITECTURE.md).
    QFile exitFile(QDir(runDir).filePath(QStringLiteral("exit.json")));
    if (exitFile.open(QIODevice::ReadOnly)) {
        QString error;
        if (applyExit(out.run, exitFile.readAll(),
                      exitFile.fileTime(QFileDevice::FileModificationTime).toMSecsSinceEpoch(), &error))
            out.exited = true;
        else
            out.events.issues.push_back({0, QStringLiteral("exit.json: %1").arg(error)});
    }
    return out;
}

std::optional<QString> IngestBook::applyExit(RunId run, const QByteArray &exitJson, qint64 timeMs,
                                             QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(exitJson, &parseError);
    const QString state = doc.object().value(QLatin1String("state")).toString();
    if (parseError.error != QJsonParseError::NoError || !doc.isObject() || state.isEmpty()) {
        if (error)
            *error = parseError.error != QJsonParseError::NoError ? parseError.errorString()
                                                                  : QStringLiteral("no \"state\"");
        return std::nullopt;
    }
    // The trainer's own time of the end when it wrote one (a follower may read it much later).
    if (const double t = doc.object().value(QLatin1String("t")).toDouble(); t > 0)
        timeMs = qint64(std::llround(t * 1000.0));
    const RunStatus status = state == QLatin1String("completed") ? RunStatus::Finished
        : state == QLatin1String("failed")                       ? RunStatus::Failed
                                                                 : RunStatus::Killed;
    store().writeTransaction([&] {
        store().setTags(
            run,
            {{QStringLiteral("orrery.exit_state"), state},
             {QStringLiteral("orrery.exit_reason"), doc.object().value(QLatin1String("reason")).toString()}});
        store().endRun(run, status, timeMs);
    });
    return state;
}

// Run directories under `root`: those holding events.jsonl or exit.json.
QStringList findRunDirectories(const QString &root)
{
    QStringList dirs, tensorboardOnly;
    const QFileInfo info(root);
    auto isRunDir = [](const QString &d) {
        return QFileInfo::exists(QDir(d).filePath(QStringLiteral("events.jsonl"))) ||
            QFileInfo::exists(QDir(d).filePath(QStringLiteral("exit.json"))) || !wandbFileIn(d).isEmpty();
    };
    auto holdsEventFiles = [](const QString &d) {
        return !QDir(d).entryList({QStringLiteral("*tfevents*")}, QDir::Files).isEmpty();
    };
    auto visit = [&](const QString &d) {
        if (isRunDir(d))
            dirs.push_back(d);
        else if (holdsEventFiles(d))
            tensorboardOnly.push_back(d);
    };
    visit(root);
    // Not through symbolic links: W&B's wandb/latest-run points at a run already listed.
    QDirIterator it(root, QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks, QDirIterator::Subdirectories);
    while (it.hasNext())
        visit(it.next());
    dirs.sort();
    tensorboardOnly.sort();
    QStringList runs = dirs;
    for (const QString &d : std::as_const(tensorboardOnly)) {
        const bool inside = std::any_of(runs.cbegin(), runs.cend(),
                                        [&](const QString &r) { return d.startsWith(r + QLatin1Char('/')); });
        if (!inside)
            runs.push_back(d);  // sorted, so a directory above it was seen first
    }
    runs.sort();
    return runs;
}

}  // namespace orrery::core
