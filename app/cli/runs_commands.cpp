// SPDX-License-Identifier: GPL-3.0-or-later
#include "runs_commands.h"

#include "commands.h"
#include "goodput_command.h"
#include "interrupt.h"
#include "output.h"
#include "statusblock.h"

#include "orrery/core/format.h"
#include "orrery/core/healthreport.h"
#include "orrery/core/mlflowstore.h"
#include "orrery/core/params.h"
#include "orrery/core/store.h"
#include "orrery/core/usage.h"
#include "orrery/remote/mlflow.h"
#include "orrery/remote/profile.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <cmath>
#include <functional>

#include <unistd.h>

namespace orrery::cli {

using namespace orrery::core;

namespace {

QString timeText(qint64 ms)
{
    return ms ? QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
              : QString();
}

QString durationText(const Run &r)
{
    if (!r.startTimeMs)
        return {};
    const qint64 end = r.endTimeMs ? r.endTimeMs : QDateTime::currentMSecsSinceEpoch();
    const qint64 s = std::max<qint64>(0, (end - r.startTimeMs) / 1000);
    if (s < 3600)
        return QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1h%2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QCommandLineOption jsonOption()
{
    return QCommandLineOption(QStringLiteral("json"), QStringLiteral("one JSON document for scripts"));
}

QCommandLineOption quietOption()
{
    return QCommandLineOption(QStringLiteral("quiet"), QStringLiteral("no progress bar, no line per run"));
}

QJsonObject runJson(const Run &r)
{
    return QJsonObject{{QStringLiteral("id"), r.id},
                       {QStringLiteral("uuid"), r.uuid},
                       {QStringLiteral("experiment"), r.experimentName},
                       {QStringLiteral("name"), r.name},
                       {QStringLiteral("status"), toString(r.status)},
                       {QStringLiteral("start_time"), r.startTimeMs},
                       {QStringLiteral("end_time"), r.endTimeMs ? QJsonValue(r.endTimeMs) : QJsonValue()},
                       {QStringLiteral("run_dir"), r.runDir},
                       {QStringLiteral("archived"), r.archived}};
}

// A run's name as lists show it: ★ before the experiment's baseline (docs/store.md "Run
// housekeeping"), "(archived)" after an archived run (listed only with --archived).
QString markedName(const Run &r, bool baseline)
{
    QString name = r.name;
    if (baseline)
        name = QStringLiteral("\u2605 ") + name;
    if (r.archived)
        name += QStringLiteral(" (archived)");
    return name;
}

// What a run's attempts held (a sweep's trial: its attempts; any other run: none, nullopt) and
// the price of the cluster its sweep ran on. `clusters` caches sweep id → cluster.
struct RunUsage {
    Usage usage;
    std::optional<Price> price;
};
std::optional<RunUsage> runUsage(const TrackingStore &store, RunId run, QHash<SweepId, QString> &clusters)
{
    const QList<Trial> attempts = store.attemptsOfRun(run);
    if (attempts.isEmpty())
        return std::nullopt;
    const SweepId sweep = attempts.front().sweepId;
    if (!clusters.contains(sweep)) {
        const auto sw = store.sweep(sweep);
        clusters.insert(sweep, sw ? sw->cluster : QString());
    }
    return RunUsage{usageOf(attempts, QDateTime::currentMSecsSinceEpoch()),
                    remote::clusterPrice(clusters[sweep])};
}

QJsonValue runUsageJson(const std::optional<RunUsage> &u)
{
    return u ? QJsonValue(usageJson(u->usage, u->price)) : QJsonValue();
}

QJsonObject latestJson(const LatestMetric &m)
{
    return QJsonObject{
        {QStringLiteral("step"), qint64(m.last.step)},       {QStringLiteral("time"), qint64(m.last.timeMs)},
        {QStringLiteral("value"), jsonNumber(m.last.value)}, {QStringLiteral("min"), jsonNumber(m.min)},
        {QStringLiteral("max"), jsonNumber(m.max)},          {QStringLiteral("count"), m.count}};
}

QJsonObject mapJson(const QMap<QString, QString> &m)
{
    QJsonObject o;
    for (auto it = m.begin(); it != m.end(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

// The runs a listing, an export or a push selects: --experiment, --sweep, --filter (repeatable),
// --status; sorted by --sort METRIC [--desc]; --limit N.
struct Selection {
    QCommandLineOption experiment{QStringLiteral("experiment"),
                                  QStringLiteral("only runs of this experiment"), QStringLiteral("NAME")};
    QCommandLineOption sweep{QStringLiteral("sweep"), QStringLiteral("only runs of this sweep (id or name)"),
                             QStringLiteral("SWEEP")};
    QCommandLineOption filter{
        QStringLiteral("filter"),
        QStringLiteral("SCOPE.KEY OP VALUE [and ...], e.g. \"params.optim.lr >= 1e-3 and metrics.eval/loss < "
                       "0.2\" (repeatable: all must hold)"),
        QStringLiteral("EXPR")};
    QCommandLineOption status{QStringLiteral("status"),
                              QStringLiteral("only runs in this state: RUNNING, FINISHED, FAILED, KILLED"),
                              QStringLiteral("STATUS")};
    QCommandLineOption sort{QStringLiteral("sort"), QStringLiteral("order by a metric's latest value"),
                            QStringLiteral("METRIC")};
    QCommandLineOption desc{QStringLiteral("desc"), QStringLiteral("descending order (with --sort)")};
    QCommandLineOption limit{QStringLiteral("limit"), QStringLiteral("at most N runs"), QStringLiteral("N")};

    QList<QCommandLineOption> options() const
    {
        return {experiment, sweep, filter, status, sort, desc, limit};
    }

    // Returns false (after printing why) on a bad option value.
    bool query(const QCommandLineParser &p, const TrackingStore &store, RunQuery &q) const
    {
        if (p.isSet(experiment))
            q.experiment = p.value(experiment);
        if (p.isSet(sweep)) {
            const auto s = store.findSweep(p.value(sweep));
            if (!s) {
                err(QStringLiteral("orrery: no sweep '%1'\n").arg(p.value(sweep)));
                return false;
            }
            q.sweep = s->id;
        }
        // The GUI's filter box's syntax: terms joined by AND, the same parser (core::parseRunFilter).
        for (const QString &f : p.values(filter)) {
            const auto terms = parseRunFilter(f);
            if (!terms) {
                err(QStringLiteral("orrery: --filter: %1\n").arg(terms.problem()));
                return false;
            }
            q.conditions += *terms;
        }
        if (p.isSet(status)) {
            const auto st = runStatusFromString(p.value(status));
            if (!st) {
                err(QStringLiteral("orrery: unknown status '%1'\n").arg(p.value(status)));
                return false;
            }
            q.conditions.push_back({RunCondition::Scope::Attribute, QStringLiteral("status"),
                                    RunCondition::Op::Eq, toString(*st)});
        }
        q.orderByMetric = p.value(sort);
        q.descending = p.isSet(desc);
        if (p.isSet(limit)) {
            bool ok = false;
            q.limit = p.value(limit).toInt(&ok);
            if (!ok || q.limit < 0) {
                err(QStringLiteral("orrery: --limit takes a number\n"));
                return false;
            }
        }
        return true;
    }
};

// The metric columns of a run table: the ones asked for, else the sort metric and the keys
// most runs have (at most 4).
QStringList metricColumns(const QList<RunRow> &rows, const QString &requested, const QString &sortMetric)
{
    if (!requested.isEmpty())
        return requested.split(QLatin1Char(','), Qt::SkipEmptyParts);
    QMap<QString, int> seen;
    for (const RunRow &r : rows)
        for (const LatestMetric &m : r.latest)
            ++seen[m.key];
    QStringList keys = seen.keys();
    std::stable_sort(keys.begin(), keys.end(),
                     [&](const QString &a, const QString &b) { return seen[a] > seen[b]; });
    QStringList out;
    if (!sortMetric.isEmpty())
        out.push_back(sortMetric);
    for (const QString &k : keys)
        if (out.size() < 4 && !out.contains(k))
            out.push_back(k);
    return out;
}

// The options of a verb whose only option is --json (experiments list, runs show).
struct JsonOptions {
    QCommandLineOption json = jsonOption();

    QList<QCommandLineOption> options() const { return {json}; }
};

int experimentsList(const Context &ctx, const QCommandLineParser &p)
{
    const JsonOptions opt;
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
    const QList<Experiment> list = store->experiments();
    if (p.isSet(opt.json)) {
        QJsonArray a;
        for (const Experiment &e : list)
            a.append(QJsonObject{{QStringLiteral("id"), e.id},
                                 {QStringLiteral("name"), e.name},
                                 {QStringLiteral("runs"), e.runCount},
                                 {QStringLiteral("creation_time"), e.creationTimeMs},
                                 {QStringLiteral("tags"), mapJson(e.tags)}});
        printJson(a);
        return kOk;
    }
    QList<QStringList> rows;
    for (const Experiment &e : list)
        rows.push_back(
            {QString::number(e.id), e.name, QString::number(e.runCount), timeText(e.creationTimeMs)});
    out(formatTable(
        {QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("RUNS"), QStringLiteral("CREATED")},
        rows));
    return kOk;
}

struct ListOptions {
    Selection selection;
    QCommandLineOption metrics{
        QStringLiteral("metrics"),
        QStringLiteral("these metric columns (default: the sort metric and the commonest)"),
        QStringLiteral("K1,K2")};
    QCommandLineOption archived{QStringLiteral("archived"),
                                QStringLiteral("archived runs too (hidden by default), marked (archived)")};
    QCommandLineOption json = jsonOption();

    QList<QCommandLineOption> options() const { return selection.options() + QList{metrics, archived, json}; }
};

int runsList(const Context &ctx, const QCommandLineParser &p)
{
    const ListOptions opt;
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
    RunQuery q;
    if (!opt.selection.query(p, *store, q))
        return kUsage;
    q.includeArchived = p.isSet(opt.archived);
    const QList<RunRow> rows = store->queryRuns(q);
    if (p.isSet(opt.json)) {
        QJsonArray a;
        QHash<SweepId, QString> clusters;
        for (const RunRow &r : rows) {
            QJsonObject o = runJson(r.run);
            o.insert(QStringLiteral("baseline"), r.isBaseline());
            o.insert(QStringLiteral("usage"), runUsageJson(runUsage(*store, r.run.id, clusters)));
            QJsonObject m;
            for (const LatestMetric &lm : r.latest)
                m.insert(lm.key, jsonNumber(lm.last.value));
            o.insert(QStringLiteral("metrics"), m);
            a.append(o);
        }
        printJson(a);
        return kOk;
    }
    const QStringList keys = metricColumns(rows, p.value(opt.metrics), q.orderByMetric);
    QStringList header{QStringLiteral("ID"),      QStringLiteral("RUN"),    QStringLiteral("EXPERIMENT"),
                       QStringLiteral("NAME"),    QStringLiteral("STATUS"), QStringLiteral("STARTED"),
                       QStringLiteral("DURATION")};
    header += keys;
    QList<QStringList> table;
    for (const RunRow &r : rows) {
        QStringList row{QString::number(r.run.id), r.run.uuid.left(8),
                        r.run.experimentName,      markedName(r.run, r.isBaseline()),
                        toString(r.run.status),    timeText(r.run.startTimeMs),
                        durationText(r.run)};
        for (const QString &k : keys)
            row.push_back(r.metric(k) ? formatNumber(r.metric(k)->last.value) : QStringLiteral("-"));
        table.push_back(row);
    }
    out(formatTable(header, table));
    return kOk;
}

std::optional<Run> resolveRun(const TrackingStore &store, const QString &ref)
{
    auto r = store.findRun(ref);
    if (!r)
        err(QStringLiteral(
                "orrery: no run '%1' (use an id, a uuid or its prefix, or a name; see `orrery runs list`)\n")
                .arg(ref));
    return r;
}

bool isBaseline(const RunDetails &d)
{
    return d.tags.value(QLatin1String(kBaselineTag)) == QLatin1String("true");
}

QJsonObject metricsJson(const QList<LatestMetric> &metrics)
{
    QJsonObject o;
    for (const LatestMetric &m : metrics)
        o.insert(m.key, latestJson(m));
    return o;
}

QJsonArray artifactsJson(const QList<Artifact> &artifacts)
{
    QJsonArray a;
    for (const Artifact &artifact : artifacts)
        a.append(QJsonObject{{QStringLiteral("path"), artifact.path},
                             {QStringLiteral("kind"), artifact.kind},
                             {QStringLiteral("step"), artifact.step},
                             {QStringLiteral("remote_path"), artifact.remotePath},
                             {QStringLiteral("local_path"), artifact.localPath},
                             {QStringLiteral("size"), artifact.size}});
    return a;
}

// The health check's verdicts of each attempt that ran one (docs/sweeps.md "Health check").
QJsonArray healthJson(const TrackingStore &store, RunId run)
{
    QJsonArray health;
    for (const Trial &t : store.attemptsOfRun(run))
        if (!t.health.isEmpty())
            health.append(
                QJsonObject{{QStringLiteral("attempt"), t.attempt},
                            {QStringLiteral("nodes"), QJsonDocument::fromJson(t.health.toUtf8()).object()}});
    return health;
}

void printRunJson(const TrackingStore &store, RunId run, const RunDetails &d,
                  const std::optional<RunUsage> &held)
{
    QJsonObject o = runJson(d.run);
    o.insert(QStringLiteral("baseline"), isBaseline(d));
    o.insert(QStringLiteral("note"), d.tags.value(QLatin1String(kNoteTag)));
    o.insert(QStringLiteral("usage"), runUsageJson(held));
    o.insert(QStringLiteral("params"), mapJson(d.params));
    o.insert(QStringLiteral("tags"), mapJson(d.tags));
    o.insert(QStringLiteral("metrics"), metricsJson(d.metrics));
    o.insert(QStringLiteral("artifacts"), artifactsJson(d.artifacts));
    o.insert(QStringLiteral("health"), healthJson(store, run));
    printJson(o);
}

// The lines above the tables: id, names, status, times; the baseline mark, note, run dir, usage.
QString runSummaryText(const RunDetails &d, const std::optional<RunUsage> &held)
{
    QString text = QStringLiteral("run %1 (%2)  %3 / %4\nstatus %5  started %6  duration %7\n")
                       .arg(d.run.id)
                       .arg(d.run.uuid, d.run.experimentName, markedName(d.run, isBaseline(d)),
                            toString(d.run.status), timeText(d.run.startTimeMs), durationText(d.run));
    if (isBaseline(d))
        text += QStringLiteral("baseline of experiment %1 (every chart and table shows it first)\n")
                    .arg(d.run.experimentName);
    if (const QString note = d.tags.value(QLatin1String(kNoteTag)); !note.isEmpty())
        text += QStringLiteral("note: %1\n").arg(note);
    if (!d.run.runDir.isEmpty())
        text += QStringLiteral("run dir %1\n").arg(d.run.runDir);
    if (held)
        text += QStringLiteral("usage %1\n").arg(describeUsage(held->usage, held->price));
    return text;
}

QString healthText(const TrackingStore &store, RunId run)
{
    QString text;
    for (const Trial &t : store.attemptsOfRun(run)) {
        const QStringList lines = healthLines(t.health);
        if (lines.isEmpty())
            continue;
        text += QStringLiteral("\nhealth check, attempt %1\n").arg(t.attempt);
        for (const QString &line : lines)
            text += QStringLiteral("  ") + line + QLatin1Char('\n');
    }
    return text;
}

// A KEY VALUE table of a map, under its title and size.
QString mapSectionText(const QString &title, const QMap<QString, QString> &map)
{
    QList<QStringList> rows;
    for (auto it = map.begin(); it != map.end(); ++it)
        rows.push_back({it.key(), it.value()});
    return QStringLiteral("\n%1 (%2)\n").arg(title).arg(map.size()) +
        formatTable({QStringLiteral("KEY"), QStringLiteral("VALUE")}, rows);
}

QString metricsSectionText(const QList<LatestMetric> &metrics)
{
    QList<QStringList> rows;
    for (const LatestMetric &m : metrics)
        rows.push_back({m.key, QString::number(m.last.step), formatNumber(m.last.value), formatNumber(m.min),
                        formatNumber(m.max), QString::number(m.count)});
    return QStringLiteral("\nmetrics (%1)\n").arg(metrics.size()) +
        formatTable({QStringLiteral("KEY"), QStringLiteral("STEP"), QStringLiteral("LATEST"),
                     QStringLiteral("MIN"), QStringLiteral("MAX"), QStringLiteral("POINTS")},
                    rows);
}

QString artifactsSectionText(const QList<Artifact> &artifacts)
{
    QList<QStringList> rows;
    for (const Artifact &a : artifacts)
        rows.push_back({a.kind, a.step >= 0 ? QString::number(a.step) : QString(),
                        a.localPath.isEmpty() ? a.remotePath : a.localPath,
                        a.size >= 0 ? QString::number(a.size) : QString()});
    return QStringLiteral("\nartifacts (%1)\n").arg(artifacts.size()) +
        formatTable({QStringLiteral("KIND"), QStringLiteral("STEP"), QStringLiteral("PATH"),
                     QStringLiteral("BYTES")},
                    rows);
}

int runsShow(const Context &ctx, const QCommandLineParser &p)
{
    const JsonOptions opt;
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
    const auto r = resolveRun(*store, p.positionalArguments().first());
    if (!r)
        return kFailed;
    const RunDetails d = store->details(r->id);
    QHash<SweepId, QString> clusters;
    const std::optional<RunUsage> held = runUsage(*store, r->id, clusters);
    if (p.isSet(opt.json)) {
        printRunJson(*store, r->id, d, held);
        return kOk;
    }
    out(runSummaryText(d, held) + healthText(*store, r->id) +
        mapSectionText(QStringLiteral("params"), d.params) + metricsSectionText(d.metrics) +
        artifactsSectionText(d.artifacts) + mapSectionText(QStringLiteral("tags"), d.tags));
    return kOk;
}

struct CompareOptions {
    QCommandLineOption all{QStringLiteral("all"), QStringLiteral("show params that are equal too")};
    QCommandLineOption json = jsonOption();

    QList<QCommandLineOption> options() const { return {all, json}; }
};

// The param keys and the metric keys any of `runs` has, each sorted.
struct RunKeys {
    QStringList params, metrics;
};
RunKeys unionKeys(const QList<RunDetails> &runs)
{
    RunKeys keys;
    for (const RunDetails &d : runs) {
        for (auto it = d.params.begin(); it != d.params.end(); ++it)
            if (!keys.params.contains(it.key()))
                keys.params.push_back(it.key());
        for (const LatestMetric &m : d.metrics)
            if (!keys.metrics.contains(m.key))
                keys.metrics.push_back(m.key);
    }
    keys.params.sort();
    keys.metrics.sort();
    return keys;
}

const LatestMetric *latestOf(const RunDetails &d, const QString &key)
{
    for (const LatestMetric &m : d.metrics)
        if (m.key == key)
            return &m;
    return nullptr;
}

void printCompareJson(const QList<RunDetails> &runs, const QStringList &differing)
{
    QJsonArray a;
    for (const RunDetails &d : runs) {
        QJsonObject o = runJson(d.run);
        o.insert(QStringLiteral("params"), mapJson(d.params));
        o.insert(QStringLiteral("metrics"), metricsJson(d.metrics));
        a.append(o);
    }
    printJson(QJsonObject{{QStringLiteral("runs"), a},
                          {QStringLiteral("differing_params"), QJsonArray::fromStringList(differing)}});
}

// The params table: those that differ, or (with --all) every one; the title counts both.
QString compareParamsText(const QList<RunDetails> &runs, const QStringList &header, const QStringList &keys,
                          const QStringList &differing, bool all)
{
    QList<QStringList> rows;
    int same = 0;
    for (const QString &k : keys) {
        if (!all && !differing.contains(k)) {
            ++same;
            continue;
        }
        QStringList row{k};
        for (const RunDetails &d : runs)
            row.push_back(d.params.value(k, QStringLiteral("-")));
        rows.push_back(row);
    }
    return QStringLiteral("params that differ (%1; %2 equal%3)\n")
               .arg(rows.size())
               .arg(same)
               .arg(all ? QString() : QStringLiteral(", --all shows them")) +
        formatTable(header, rows);
}

QString compareMetricsText(const QList<RunDetails> &runs, const QStringList &header, const QStringList &keys)
{
    QList<QStringList> rows;
    for (const QString &k : keys) {
        QStringList row{k};
        for (const RunDetails &d : runs) {
            const LatestMetric *m = latestOf(d, k);
            row.push_back(m ? QStringLiteral("%1 @%2 (min %3)")
                                  .arg(formatNumber(m->last.value))
                                  .arg(m->last.step)
                                  .arg(formatNumber(m->min))
                            : QStringLiteral("-"));
        }
        rows.push_back(row);
    }
    return QStringLiteral("\nmetrics: latest @step (min)\n") + formatTable(header, rows);
}

int runsCompare(const Context &ctx, const QCommandLineParser &p)
{
    const CompareOptions opt;
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
    QList<RunDetails> runs;
    for (const QString &ref : p.positionalArguments()) {
        const auto r = resolveRun(*store, ref);
        if (!r)
            return kFailed;
        runs.push_back(store->details(r->id));
    }
    const RunKeys keys = unionKeys(runs);
    QList<Params> params;
    for (const RunDetails &d : runs)
        params.append(d.params);
    const QStringList differing = differingParams(params);
    if (p.isSet(opt.json)) {
        printCompareJson(runs, differing);
        return kOk;
    }
    QStringList header{QString()};
    for (const RunDetails &d : runs)
        header.push_back(QStringLiteral("%1 %2").arg(d.run.id).arg(d.run.name));
    out(compareParamsText(runs, header, keys.params, differing, p.isSet(opt.all)) +
        compareMetricsText(runs, header, keys.metrics));
    return kOk;
}

struct HistoryOptions {
    QCommandLineOption csv{QStringLiteral("csv"), QStringLiteral("step,time,value lines")};
    QCommandLineOption json = jsonOption();
    QCommandLineOption buckets{QStringLiteral("buckets"),
                               QStringLiteral("min/max downsampling into N buckets"), QStringLiteral("N")};
    QCommandLineOption from{QStringLiteral("from"), QStringLiteral("first step"), QStringLiteral("STEP")};
    QCommandLineOption to{QStringLiteral("to"), QStringLiteral("last step"), QStringLiteral("STEP")};

    QList<QCommandLineOption> options() const { return {csv, json, buckets, from, to}; }
};

int runsHistory(const Context &ctx, const QCommandLineParser &p)
{
    const HistoryOptions opt;
    HistoryQuery q;
    bool ok = true;
    if (p.isSet(opt.buckets))
        q.buckets = p.value(opt.buckets).toInt(&ok);
    if (ok && p.isSet(opt.from))
        q.from = p.value(opt.from).toLongLong(&ok);
    if (ok && p.isSet(opt.to))
        q.to = p.value(opt.to).toLongLong(&ok);
    if (!ok || q.buckets < 0)
        return runsUsageError(QStringLiteral("history"),
                              QStringLiteral("--buckets, --from and --to take numbers"));
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
    const auto r = resolveRun(*store, p.positionalArguments()[0]);
    if (!r)
        return kFailed;
    const QString key = p.positionalArguments()[1];
    if (!store->metricKeys(r->id).contains(key)) {
        err(QStringLiteral("orrery: run %1 has no metric '%2' (it has: %3)\n")
                .arg(r->id)
                .arg(key, store->metricKeys(r->id).join(QLatin1String(", "))));
        return kFailed;
    }
    const MetricHistory h = store->history(r->id, key, q);
    if (p.isSet(opt.json)) {
        QJsonArray points;
        for (const MetricPoint &pt : h.points)
            points.append(QJsonArray{qint64(pt.step), qint64(pt.timeMs), jsonNumber(pt.value)});
        QJsonObject o{{QStringLiteral("run"), r->uuid},
                      {QStringLiteral("metric"), key},
                      {QStringLiteral("points_in_range"), h.pointsInRange},
                      {QStringLiteral("downsampled"), h.downsampled},
                      {QStringLiteral("points"), points}};
        if (h.downsampled) {
            QJsonArray bs;
            for (const HistoryBucket &b : h.buckets)
                bs.append(QJsonObject{{QStringLiteral("first_step"), qint64(b.first.step)},
                                      {QStringLiteral("last_step"), qint64(b.last.step)},
                                      {QStringLiteral("count"), qint64(b.count)},
                                      {QStringLiteral("min"), jsonNumber(b.min.value)},
                                      {QStringLiteral("min_step"), qint64(b.min.step)},
                                      {QStringLiteral("max"), jsonNumber(b.max.value)},
                                      {QStringLiteral("max_step"), qint64(b.max.step)}});
            o.insert(QStringLiteral("buckets"), bs);
        }
        printJson(o);
        return kOk;
    }
    if (p.isSet(opt.csv)) {
        QString text = QStringLiteral("step,time,value\n");
        for (const MetricPoint &pt : h.points)
            text += QStringLiteral("%1,%2,%3\n")
                        .arg(pt.step)
                        .arg(pt.timeMs / 1000.0, 0, 'f', 3)
                        .arg(formatNumber(pt.value));
        out(text);
        return kOk;
    }
    QList<QStringList> rows;
    for (const MetricPoint &pt : h.points)
        rows.push_back({QString::number(pt.step), timeText(pt.timeMs), formatNumber(pt.value)});
    out(formatTable({QStringLiteral("STEP"), QStringLiteral("TIME"), QStringLiteral("VALUE")}, rows));
    if (h.downsampled)
        err(QStringLiteral("(%1 points downsampled to %2: first, min, max and last of %3 buckets)\n")
                .arg(h.pointsInRange)
                .arg(h.points.size())
                .arg(h.buckets.size()));
    return kOk;
}

QString csvField(const QString &s)
{
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n')) &&
        !s.contains(QLatin1Char('\r')))
        return s;
    QString quoted = s;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

struct ExportOptions {
    QCommandLineOption format{QStringLiteral("format"), QStringLiteral("csv (the default) or json"),
                              QStringLiteral("csv|json"), QStringLiteral("csv")};
    QCommandLineOption points{QStringLiteral("points"),
                              QStringLiteral("every metric point, not one row per run")};
    QCommandLineOption output{QStringList{QStringLiteral("o"), QStringLiteral("output")},
                              QStringLiteral("write to FILE (default: stdout)"), QStringLiteral("FILE")};
    Selection selection;

    QList<QCommandLineOption> options() const { return QList{format, points, output} + selection.options(); }
};

// Writes `text` to the export's file; throws StoreError when it cannot.
void writeText(QFile &file, const QString &text)
{
    const QByteArray bytes = text.toUtf8();
    if (file.write(bytes) != bytes.size())
        throw StoreError("cannot write " + file.fileName().toStdString() + ": " +
                         file.errorString().toStdString());
}

// Opens where the export goes: -o FILE's FILE.part (written beside, then renamed: an interrupted
// export never leaves half a file), else stdout. Returns false (after saying why) when it cannot.
bool openExport(QFile &file, const QCommandLineParser &p, const QCommandLineOption &output)
{
    if (p.isSet(output)) {
        file.setFileName(p.value(output) + QStringLiteral(".part"));
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            err(QStringLiteral("orrery: cannot write %1: %2\n").arg(file.fileName(), file.errorString()));
            return false;
        }
        return true;
    }
    return file.open(stdout, QIODevice::WriteOnly);
}

// --points --format csv: one line per point of one metric of one run.
QString pointsCsv(const Run &run, const QString &key, const std::vector<MetricPoint> &pts)
{
    const QString prefix =
        QStringLiteral("%1,%2,%3,%4,")
            .arg(run.uuid, csvField(run.name), csvField(run.experimentName), csvField(key));
    QString chunk;
    for (const MetricPoint &pt : pts)
        chunk +=
            prefix + QStringLiteral("%1,%2,%3\n").arg(pt.step).arg(pt.timeMs).arg(formatNumber(pt.value));
    return chunk;
}

// --points --format json: one compact object per metric of a run, one a line.
QString pointsJson(const Run &run, const QString &key, const std::vector<MetricPoint> &pts)
{
    QJsonArray a;
    for (const MetricPoint &pt : pts)
        a.append(QJsonArray{qint64(pt.step), qint64(pt.timeMs), jsonNumber(pt.value)});
    return QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("run_uuid"), run.uuid},
                                                       {QStringLiteral("key"), key},
                                                       {QStringLiteral("points"), a}})
                                 .toJson(QJsonDocument::Compact));
}

// --points: every point of every metric of the runs, metric by metric (a JSON array of them).
void exportPoints(const TrackingStore &store, const QList<RunRow> &rows, bool csv, QFile &file)
{
    writeText(file,
              csv ? QStringLiteral("run_uuid,run_name,experiment,key,step,time,value\n")
                  : QStringLiteral("["));
    bool firstRun = true;
    for (const RunRow &r : rows) {
        for (const QString &key : store.metricKeys(r.run.id)) {
            const std::vector<MetricPoint> pts = store.allPoints(r.run.id, key);
            if (csv) {
                writeText(file, pointsCsv(r.run, key, pts));
            } else {
                writeText(file,
                          (firstRun ? QString() : QStringLiteral(",")) + QStringLiteral("\n") +
                              pointsJson(r.run, key, pts));
                firstRun = false;
            }
        }
    }
    if (!csv)
        writeText(file, QStringLiteral("\n]\n"));
}

// --format json: every run with its params, tags and latest metrics.
void exportJson(const TrackingStore &store, const QList<RunRow> &rows, QFile &file)
{
    QJsonArray a;
    for (const RunRow &r : rows) {
        const RunDetails d = store.details(r.run.id);
        QJsonObject o = runJson(d.run);
        o.insert(QStringLiteral("params"), mapJson(d.params));
        o.insert(QStringLiteral("tags"), mapJson(d.tags));
        o.insert(QStringLiteral("metrics"), metricsJson(d.metrics));
        a.append(o);
    }
    writeText(file, QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Indented)));
}

QString csvHeader(const RunKeys &keys)
{
    QStringList header{QStringLiteral("run_id"),   QStringLiteral("run_uuid"), QStringLiteral("experiment"),
                       QStringLiteral("name"),     QStringLiteral("status"),   QStringLiteral("start_time"),
                       QStringLiteral("end_time"), QStringLiteral("run_dir")};
    for (const QString &k : keys.params)
        header.push_back(csvField(QStringLiteral("params.") + k));
    for (const QString &k : keys.metrics)
        header.push_back(csvField(QStringLiteral("metrics.") + k));
    return header.join(QLatin1Char(',')) + QLatin1Char('\n');
}

QString csvRow(const RunDetails &d, const RunKeys &keys)
{
    QStringList row{QString::number(d.run.id),
                    d.run.uuid,
                    csvField(d.run.experimentName),
                    csvField(d.run.name),
                    toString(d.run.status),
                    QString::number(d.run.startTimeMs),
                    d.run.endTimeMs ? QString::number(d.run.endTimeMs) : QString(),
                    csvField(d.run.runDir)};
    for (const QString &k : keys.params)
        row.push_back(csvField(d.params.value(k)));
    for (const QString &k : keys.metrics) {
        QString v;
        for (const LatestMetric &m : d.metrics)
            if (m.key == k)
                v = formatNumber(m.last.value);
        row.push_back(v);
    }
    return row.join(QLatin1Char(',')) + QLatin1Char('\n');
}

// --format csv: one row per run, MLflow's search_runs layout: params.* and metrics.* columns.
void exportCsv(const TrackingStore &store, const QList<RunRow> &rows, QFile &file)
{
    QList<RunDetails> details;
    for (const RunRow &r : rows)
        details.push_back(store.details(r.run.id));
    const RunKeys keys = unionKeys(details);
    QString text = csvHeader(keys);
    for (const RunDetails &d : details)
        text += csvRow(d, keys);
    writeText(file, text);
}

// -o FILE: the finished FILE.part renamed to FILE, and said on stderr.
int finishExport(QFile &file, const QString &path, qsizetype runs)
{
    file.close();
    QFile::remove(path);
    if (!QFile::rename(file.fileName(), path)) {
        err(QStringLiteral("orrery: cannot rename %1 to %2\n").arg(file.fileName(), path));
        return kFailed;
    }
    err(QStringLiteral("wrote %1 (%2 runs)\n").arg(path).arg(runs));
    return kOk;
}

int runsExport(const Context &ctx, const QCommandLineParser &p)
{
    const ExportOptions opt;
    const QString fmt = p.value(opt.format).toLower();
    if (fmt != QLatin1String("csv") && fmt != QLatin1String("json"))
        return runsUsageError(QStringLiteral("export"), QStringLiteral("--format is csv or json"));
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
    RunQuery q;
    if (!opt.selection.query(p, *store, q))
        return kUsage;
    const QList<RunRow> rows = store->queryRuns(q);

    QFile file;
    if (!openExport(file, p, opt.output))
        return kFailed;
    if (p.isSet(opt.points))
        exportPoints(*store, rows, fmt == QLatin1String("csv"), file);
    else if (fmt == QLatin1String("json"))
        exportJson(*store, rows, file);
    else
        exportCsv(*store, rows, file);
    if (p.isSet(opt.output))
        return finishExport(file, p.value(opt.output), rows.size());
    return kOk;
}

struct IngestOptions {
    QCommandLineOption experiment{
        QStringLiteral("experiment"),
        QStringLiteral("experiment of runs seen for the first time (default: Default)"),
        QStringLiteral("NAME"), QStringLiteral("Default")};
    QCommandLineOption json = jsonOption();
    QCommandLineOption quiet = quietOption();

    QList<QCommandLineOption> options() const { return {experiment, json, quiet}; }
};

// The MLflow stores (mlflow.db, or a directory holding it or an mlruns file store) and the run
// directories under each root (core/mlflowstore.h importSources: the window's import too).
// Returns false after saying why when a root cannot be read.
bool findIngestSources(const QStringList &roots, QStringList &runDirs, QStringList &mlflowStores)
{
    for (const QString &root : roots) {
        ImportSources found;
        try {
            found = importSources(root);
        } catch (const std::exception &e) {
            err(QStringLiteral("orrery: %1\n").arg(QString::fromUtf8(e.what())));
            return false;
        }
        if (found.mlflowStore)
            mlflowStores << *found.mlflowStore;
        else if (found.runDirectories.isEmpty())
            err(QStringLiteral("orrery: no run directory (with events.jsonl or exit.json) under %1\n")
                    .arg(root));
        runDirs += found.runDirectories;
    }
    return true;
}

// What ingest says of each source: a JSON report (--json), else a line each unless --quiet.
struct IngestOutput {
    bool json = false;
    bool quiet = false;
    QJsonArray report;
};

void reportMlflowImport(const QString &path, const MlflowImport &r, IngestOutput &output)
{
    if (!output.quiet)
        for (const QString &note : r.notes)
            err(QStringLiteral("%1: %2\n").arg(path, note));
    if (output.json)
        output.report.append(QJsonObject{{QStringLiteral("mlflow_store"), path},
                                         {QStringLiteral("runs"), r.runs},
                                         {QStringLiteral("created"), r.created},
                                         {QStringLiteral("points"), r.points},
                                         {QStringLiteral("media"), r.media},
                                         {QStringLiteral("notes"), QJsonArray::fromStringList(r.notes)}});
    else if (!output.quiet)
        out(QStringLiteral("%1: %2 MLflow run%3 (%4 new), %5 points, %6 samples\n")
                .arg(path)
                .arg(r.runs)
                .arg(r.runs == 1 ? QString() : QStringLiteral("s"))
                .arg(r.created)
                .arg(r.points)
                .arg(r.media));
}

// Imports each MLflow store. Returns kOk, or kFailed on an error (said) or a Ctrl-C.
int ingestMlflowStores(TrackingStore &store, const QStringList &mlflowStores, IngestOutput &output)
{
    for (const QString &path : mlflowStores) {
        MlflowImport r;
        try {
            r = importMlflowRuns(store, readMlflowStore(path));
        } catch (const std::exception &e) {
            err(QStringLiteral("orrery: %1\n").arg(QString::fromUtf8(e.what())));
            return kFailed;
        }
        reportMlflowImport(path, r, output);
        if (InterruptScope::requested())
            return kFailed;
    }
    return kOk;
}

// What one run directory's ingest found: its problems and notes, and its report or line.
void reportRunDirectory(ProgressLine &bar, const QString &dir, const TrackingStore::DirectoryIngest &r,
                        int index, qsizetype count, IngestOutput &output)
{
    for (const IngestIssue &issue : r.events.issues)
        bar.printAbove(
            QStringLiteral("%1/events.jsonl:%2: %3\n").arg(dir).arg(issue.line).arg(issue.message));
    // TensorBoard event files and W&B offline runs: what was skipped or not a number.
    if (!output.quiet)
        for (const QString &note : r.notes)
            bar.printAbove(QStringLiteral("%1: %2\n").arg(dir, note));
    if (output.json) {
        output.report.append(QJsonObject{{QStringLiteral("dir"), dir},
                                         {QStringLiteral("run_id"), r.run},
                                         {QStringLiteral("created"), r.created},
                                         {QStringLiteral("lines"), r.events.lines},
                                         {QStringLiteral("points"), r.events.points},
                                         {QStringLiteral("malformed"), r.events.malformed},
                                         {QStringLiteral("file_points"), r.filePoints},
                                         {QStringLiteral("media"), r.media},
                                         {QStringLiteral("notes"), QJsonArray::fromStringList(r.notes)},
                                         {QStringLiteral("offset"), r.events.newOffset},
                                         {QStringLiteral("exited"), r.exited}});
    } else if (!output.quiet) {
        bar.printAbove(QStringLiteral("[%1/%2] %3: run %4%5, %6 new lines, %7 points%8\n")
                           .arg(index)
                           .arg(count)
                           .arg(dir)
                           .arg(r.run)
                           .arg(r.created ? QStringLiteral(" (new)") : QString())
                           .arg(r.events.lines)
                           .arg(r.events.points)
                           .arg(r.events.malformed
                                    ? QStringLiteral(", %1 malformed lines skipped").arg(r.events.malformed)
                                    : QString()));
    }
}

struct IngestTotals {
    qint64 points = 0;
    qint64 malformed = 0;
};

// Ingests each run directory under a progress bar of the bytes of every events.jsonl (what an
// earlier ingest stored counts as done). Returns kOk, or kFailed (said) on a Ctrl-C.
int ingestRunDirectories(TrackingStore &store, const QStringList &runDirs, const QString &experiment,
                         IngestOutput &output, IngestTotals &totals)
{
    int index = 0;
    qint64 totalBytes = 0, doneBytes = 0;
    for (const QString &dir : runDirs)
        totalBytes += QFileInfo(dir + QStringLiteral("/events.jsonl")).size();
    ProgressLine bar(!output.quiet && !output.json && stderrIsLiveTerminal());
    QElapsedTimer clock;
    clock.start();
    for (const QString &dir : runDirs) {
        ++index;
        const auto r = store.ingestRunDirectory(
            dir, experiment, [] { return InterruptScope::requested(); },
            [&](qint64 offset, qint64) {
                bar.update(progressText(doneBytes + offset, totalBytes, double(clock.elapsed()) / 1000.0,
                                        formatBytes));
            });
        doneBytes += QFileInfo(dir + QStringLiteral("/events.jsonl")).size();
        totals.points += r.events.points;
        totals.malformed += r.events.malformed;
        reportRunDirectory(bar, dir, r, index, runDirs.size(), output);
        if (InterruptScope::requested()) {
            bar.finish();
            err(QStringLiteral("orrery: interrupted; everything up to here is stored, rerun to continue\n"));
            return kFailed;
        }
    }
    bar.finish();
    return kOk;
}

int runsIngest(const Context &ctx, const QCommandLineParser &p)
{
    const IngestOptions opt;
    QStringList runDirs, mlflowStores;
    if (!findIngestSources(p.positionalArguments(), runDirs, mlflowStores))
        return kFailed;
    auto store = openStore(ctx);
    // Ctrl-C: the current transaction finishes, then it stops (what is stored stays; rerunning
    // continues from there).
    const InterruptScope interrupts;
    IngestOutput output{p.isSet(opt.json), p.isSet(opt.quiet), {}};
    if (const int code = ingestMlflowStores(*store, mlflowStores, output); code != kOk)
        return code;
    if (runDirs.isEmpty() && !mlflowStores.isEmpty()) {
        if (output.json)
            printJson(output.report);
        return kOk;
    }
    IngestTotals totals;
    if (const int code = ingestRunDirectories(*store, runDirs, p.value(opt.experiment), output, totals);
        code != kOk)
        return code;
    if (output.json)
        printJson(output.report);
    else
        out(QStringLiteral("ingested %1 run director%2: %3 points%4\n")
                .arg(runDirs.size())
                .arg(runDirs.size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                .arg(totals.points)
                .arg(totals.malformed ? QStringLiteral(", %1 malformed lines skipped").arg(totals.malformed)
                                      : QString()));
    return kOk;
}

struct PushOptions {
    QCommandLineOption url{QStringLiteral("mlflow"),
                           QStringLiteral("the MLflow tracking server's URL (required)"),
                           QStringLiteral("URL")};
    Selection selection;  // without RUN: the runs it selects
    QCommandLineOption quiet = quietOption();

    QList<QCommandLineOption> options() const { return QList{url} + selection.options() + QList{quiet}; }
};

int runsPush(const Context &ctx, const QCommandLineParser &p)
{
    const PushOptions opt;
    const QCommandLineOption &url = opt.url, &quiet = opt.quiet;
    if (!p.isSet(url))
        return runsUsageError(QStringLiteral("push"), QStringLiteral("--mlflow URL is required"));
    auto store = openStore(ctx);
    QList<RunId> runs;
    for (const QString &ref : p.positionalArguments()) {
        const auto r = resolveRun(*store, ref);
        if (!r)
            return kFailed;
        runs.push_back(r->id);
    }
    if (runs.isEmpty()) {
        RunQuery q;
        if (!opt.selection.query(p, *store, q))
            return kUsage;
        for (const RunRow &r : store->queryRuns(q))
            runs.push_back(r.run.id);
    }
    // Ctrl-C: the current transaction finishes, then it stops (what is stored stays; rerunning
    // continues from there).
    const InterruptScope interrupts;
    remote::MlflowPushOptions options;
    ProgressLine bar(!p.isSet(quiet) && stderrIsLiveTerminal());
    QElapsedTimer clock;
    clock.start();
    if (!p.isSet(quiet))
        options.progress = [&bar](const QString &line) { bar.printAbove(line + QLatin1Char('\n')); };
    options.pointProgress = [&](qint64 done, qint64 total) {
        bar.update(progressText(done, total, double(clock.elapsed()) / 1000.0,
                                [](double n) -> QString { return formatCount(n) + QStringLiteral(" pts"); }));
    };
    options.cancel = [] { return InterruptScope::requested(); };
    const remote::MlflowPushReport report = remote::pushToMlflow(*store, p.value(url), runs, options);
    bar.finish();
    for (const QString &note : report.adjustments)
        err(QStringLiteral("note: %1\n").arg(note));
    if (!report.error.isEmpty()) {
        err(QStringLiteral("orrery: MLflow push to %1 failed: %2\n").arg(p.value(url), report.error));
        return kFailed;
    }
    out(QStringLiteral(
            "pushed %1 runs to %2: %3 new metric points, %4 params, %5 tags (%6 runs already up to date)\n")
            .arg(report.runs)
            .arg(p.value(url))
            .arg(report.metricPoints)
            .arg(report.params)
            .arg(report.tags)
            .arg(report.upToDate));
    return kOk;
}

// --- housekeeping: tag, note, rename, archive, delete, baseline -------------------------------
// Each verb resolves its runs, then makes one core::TrackingStore housekeeping call (the window's
// run menu makes the same calls): a run not found changes nothing.

// The runs named by the positional arguments from `first` on; nullopt (after saying which) when
// one is not found.
std::optional<QList<Run>> resolveRuns(const TrackingStore &store, const QStringList &refs,
                                      qsizetype first = 0)
{
    QList<Run> runs;
    for (qsizetype i = first; i < refs.size(); ++i) {
        const auto r = resolveRun(store, refs[i]);
        if (!r)
            return std::nullopt;
        runs.push_back(*r);
    }
    return runs;
}

struct TagOptions {
    QCommandLineOption remove{QStringLiteral("remove"), QStringLiteral("remove this tag (repeatable)"),
                              QStringLiteral("KEY")};

    QList<QCommandLineOption> options() const { return {remove}; }
};

int runsTag(const Context &ctx, const QCommandLineParser &p)
{
    const TagOptions opt;
    const QStringList args = p.positionalArguments();
    QList<std::pair<QString, QString>> tags;
    for (qsizetype i = 1; i < args.size(); ++i) {
        const qsizetype eq = args[i].indexOf(QLatin1Char('='));
        if (eq <= 0)
            return runsUsageError(QStringLiteral("tag"),
                                  QStringLiteral("'%1' is not KEY=VALUE").arg(args[i]));
        tags.push_back({args[i].left(eq), args[i].mid(eq + 1)});
    }
    const QStringList removed = p.values(opt.remove);
    if (tags.isEmpty() && removed.isEmpty())
        return runsUsageError(QStringLiteral("tag"), QStringLiteral("give KEY=VALUE or --remove KEY"));
    auto store = openStore(ctx);
    const auto r = resolveRun(*store, args.first());
    if (!r)
        return kFailed;
    store->writeTransaction([&] {
        store->removeTags(r->id, removed);
        store->setTags(r->id, tags);
    });
    out(QStringLiteral("run %1 (%2): %3 tag(s) set, %4 removed\n")
            .arg(r->id)
            .arg(r->name)
            .arg(tags.size())
            .arg(removed.size()));
    return kOk;
}

int runsNote(const Context &ctx, const QCommandLineParser &p)
{
    const QStringList args = p.positionalArguments();
    QString text = args.value(1);
    if (text == QLatin1String("-")) {
        QFile in;
        if (!in.open(stdin, QIODevice::ReadOnly)) {
            err(QStringLiteral("orrery: cannot read the note from stdin\n"));
            return kFailed;
        }
        text = QString::fromUtf8(in.readAll());
        while (text.endsWith(QLatin1Char('\n')))
            text.chop(1);
    }
    auto store = openStore(ctx);
    const auto r = resolveRun(*store, args.first());
    if (!r)
        return kFailed;
    store->setRunNote(r->id, text);
    out(text.trimmed().isEmpty() ? QStringLiteral("run %1 (%2): note removed\n").arg(r->id).arg(r->name)
                                 : QStringLiteral("run %1 (%2): note set\n").arg(r->id).arg(r->name));
    return kOk;
}

int runsRename(const Context &ctx, const QCommandLineParser &p)
{
    const QStringList args = p.positionalArguments();
    if (args.value(1).trimmed().isEmpty())
        return runsUsageError(QStringLiteral("rename"), QStringLiteral("the new NAME is empty"));
    auto store = openStore(ctx);
    const auto r = resolveRun(*store, args.first());
    if (!r)
        return kFailed;
    store->renameRun(r->id, args.value(1));
    out(QStringLiteral("run %1: %2 → %3\n").arg(r->id).arg(r->name, args.value(1).trimmed()));
    return kOk;
}

struct ArchiveOptions {
    QCommandLineOption undo{QStringLiteral("undo"), QStringLiteral("restore archived runs to the lists")};

    QList<QCommandLineOption> options() const { return {undo}; }
};

int runsArchive(const Context &ctx, const QCommandLineParser &p)
{
    const ArchiveOptions opt;
    auto store = openStore(ctx);
    const auto runs = resolveRuns(*store, p.positionalArguments());
    if (!runs)
        return kFailed;
    QList<RunId> ids;
    for (const Run &r : *runs)
        ids.push_back(r.id);
    const bool archive = !p.isSet(opt.undo);
    store->archiveRuns(ids, archive);
    out(archive ? QStringLiteral("archived %1 run(s): hidden from lists (`runs list --archived` shows "
                                 "them; `runs archive --undo` restores)\n")
                      .arg(ids.size())
                : QStringLiteral("restored %1 run(s)\n").arg(ids.size()));
    return kOk;
}

struct DeleteOptions {
    QCommandLineOption yes{QStringLiteral("yes"), QStringLiteral("do not ask (needed without a terminal)")};

    QList<QCommandLineOption> options() const { return {yes}; }
};

int runsDelete(const Context &ctx, const QCommandLineParser &p)
{
    const DeleteOptions opt;
    auto store = openStore(ctx);
    const auto runs = resolveRuns(*store, p.positionalArguments());
    if (!runs)
        return kFailed;
    QStringList names;
    QList<RunId> ids;
    for (const Run &r : *runs) {
        ids.push_back(r.id);
        names.push_back(QStringLiteral("%1 (%2)").arg(r.id).arg(r.name));
    }
    if (!p.isSet(opt.yes)) {
        // UX.md: nothing prompts when stdin is not a TTY; --yes answers the question.
        if (!isatty(STDIN_FILENO)) {
            err(QStringLiteral("orrery runs delete: deleting %1 run(s) for good needs a confirmation: "
                               "stdin is not a terminal, so pass --yes\n")
                    .arg(ids.size()));
            return kUsage;
        }
        err(QStringLiteral("Delete %1 run(s) for good: %2?\nTheir metrics, params, tags and artifact "
                           "records go; run directories stay. Type yes to delete: ")
                .arg(ids.size())
                .arg(names.join(QStringLiteral(", "))));
        QFile in;
        if (!in.open(stdin, QIODevice::ReadOnly) ||
            QString::fromUtf8(in.readLine()).trimmed() != QLatin1String("yes")) {
            err(QStringLiteral("nothing deleted\n"));
            return kFailed;
        }
    }
    try {
        store->deleteRuns(ids);
    } catch (const StoreError &e) {
        err(QStringLiteral("orrery: nothing deleted: %1\n").arg(QString::fromUtf8(e.what())));
        return kFailed;
    }
    out(QStringLiteral("deleted %1 run(s): %2\n").arg(ids.size()).arg(names.join(QStringLiteral(", "))));
    return kOk;
}

struct BaselineOptions {
    QCommandLineOption clear{QStringLiteral("clear"), QStringLiteral("remove the run's baseline star")};

    QList<QCommandLineOption> options() const { return {clear}; }
};

int runsBaseline(const Context &ctx, const QCommandLineParser &p)
{
    const BaselineOptions opt;
    auto store = openStore(ctx);
    const auto r = resolveRun(*store, p.positionalArguments().first());
    if (!r)
        return kFailed;
    const bool star = !p.isSet(opt.clear);
    store->setBaseline(r->id, star);
    out(star ? QStringLiteral("\u2605 run %1 (%2) is the baseline of experiment %3\n")
                   .arg(r->id)
                   .arg(r->name, r->experimentName)
             : QStringLiteral("run %1 (%2) is no longer a baseline\n").arg(r->id).arg(r->name));
    return kOk;
}

}  // namespace

// Opens read-write (creating and migrating the file as needed, so reading commands work on a
// new machine too); where the file cannot be written (a read-only mount, another user's file)
// reading commands fall back to read-only.
std::unique_ptr<TrackingStore> openStore(const Context &ctx, TrackingStore::Mode mode)
{
    std::unique_ptr<TrackingStore> store;
    try {
        store = TrackingStore::open(ctx.dbPath, TrackingStore::Mode::ReadWrite);
    } catch (const StoreError &) {
        if (mode == TrackingStore::Mode::ReadWrite || !QFileInfo::exists(ctx.dbPath))
            throw;
        store = TrackingStore::open(ctx.dbPath, TrackingStore::Mode::ReadOnly);
    }
    if (store->isReadOnly() && mode == TrackingStore::Mode::ReadWrite)
        err(QStringLiteral("orrery: %1\n").arg(store->readOnlyReason()));
    return store;
}

QList<VerbInfo> experimentsVerbs()
{
    return {parsedVerb(QStringLiteral("list"), {}, JsonOptions().options(),
                       QStringLiteral("experiments and how many runs each has"), experimentsList)};
}

QList<VerbInfo> runsVerbs()
{
    const QString run = QStringLiteral("RUN");
    return {
        parsedVerb(QStringLiteral("list"), {}, ListOptions().options(),
                   QStringLiteral("runs with their latest metrics"), runsList),
        parsedVerb(QStringLiteral("show"), {run}, JsonOptions().options(),
                   QStringLiteral("params, metrics, GPU-hours and cost, artifacts, tags"), runsShow),
        parsedVerb(QStringLiteral("compare"), {run, QStringLiteral("RUN...")}, CompareOptions().options(),
                   QStringLiteral("the params that differ, metrics side by side"), runsCompare),
        parsedVerb(QStringLiteral("history"), {run, QStringLiteral("METRIC")}, HistoryOptions().options(),
                   QStringLiteral("every point of a metric (--csv, --json)"), runsHistory),
        parsedVerb(QStringLiteral("export"), {}, ExportOptions().options(),
                   QStringLiteral("runs or points as CSV or JSON"), runsExport),
        parsedVerb(
            QStringLiteral("ingest"), {QStringLiteral("DIR|MLFLOW_STORE...")}, IngestOptions().options(),
            QStringLiteral("import run directories or an MLflow store (reruns add what is new)"), runsIngest),
        parsedVerb(QStringLiteral("push"), {QStringLiteral("[RUN...]")}, PushOptions().options(),
                   QStringLiteral("mirror runs to an MLflow server"), runsPush),
        parsedVerb(QStringLiteral("tag"), {run, QStringLiteral("[KEY=VALUE]...")}, TagOptions().options(),
                   QStringLiteral("set tags of a run (--remove KEY removes one)"), runsTag),
        parsedVerb(QStringLiteral("note"), {run, QStringLiteral("TEXT")}, {},
                   QStringLiteral("a run's note (TEXT - reads stdin; empty text removes it)"), runsNote),
        parsedVerb(QStringLiteral("rename"), {run, QStringLiteral("NAME")}, {},
                   QStringLiteral("give a run a new name"), runsRename),
        parsedVerb(QStringLiteral("archive"), {QStringLiteral("RUN...")}, ArchiveOptions().options(),
                   QStringLiteral("hide runs from lists, keeping them (--undo restores)"), runsArchive),
        parsedVerb(QStringLiteral("delete"), {QStringLiteral("RUN...")}, DeleteOptions().options(),
                   QStringLiteral("delete runs for good (asks; --yes without a terminal)"), runsDelete),
        parsedVerb(QStringLiteral("baseline"), {run}, BaselineOptions().options(),
                   QStringLiteral("star a run as its experiment's baseline (--clear unstars)"), runsBaseline),
        goodputVerb(),
    };
}

int runsUsageError(const QString &verb, const QString &message)
{
    QString text = QStringLiteral("orrery runs %1: %2\n").arg(verb, message);
    for (const VerbInfo &v : runsVerbs())
        if (v.name == verb)
            text += verbHelp(QStringLiteral("runs"), v);
    err(text);
    return kUsage;
}

}  // namespace orrery::cli
