// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep submit|list|status|watch|cancel|stop|retry|best|logs|supervise`: the sweep runner's
// face.
// The runner (core/sweeprunner.h) decides; this file parses flags and formats what it reports.
#include "sweep_follow.h"

#include "cluster_commands.h"
#include "commands.h"
#include "interrupt.h"
#include "orrery/remote/executors.h"
#include "output.h"
#include "statusblock.h"
#include "sweep_commands.h"

#include "orrery/core/format.h"
#include "orrery/core/localexecutor.h"
#include "orrery/core/params.h"
#include "orrery/core/paths.h"
#include "orrery/core/sweepprogress.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/core/usage.h"
#include "orrery/remote/profile.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

#include <cmath>
#include <optional>

namespace orrery::cli {

using namespace orrery::core;

namespace {

QStringList paramKeys(const QList<TrialSummary> &rows)
{
    // The keys whose values differ between trials are the columns; constants add nothing (a
    // single trial shows all of its keys).
    QList<Params> params;
    for (const TrialSummary &r : rows)
        params.append(paramsFromJson(r.trial.params));
    return rows.size() == 1 ? params.front().keys() : differingParams(params);
}

QString paramCell(const QJsonValue &v)
{
    return v.isDouble() ? formatNumber(v.toDouble()) : v.toVariant().toString();
}

QString stateCell(const TrialSummary &r)
{
    QString s = r.trial.state;
    if (r.attempts > 1)
        s += QStringLiteral(" (attempt %1)").arg(r.attempts);
    return s;
}

// Each trial's usage, all its attempts together, by trial index.
QHash<int, Usage> usageByTrial(const QList<Trial> &attempts, qint64 nowMs)
{
    QHash<int, Usage> out;
    for (const Trial &t : attempts)
        out[t.index] += attemptUsage(t, nowMs);
    return out;
}

QString statusTable(const Sweep &sw, QList<TrialSummary> rows, bool sortByMetric,
                    const QHash<int, Usage> &usage)
{
    const bool maximize = sw.metricGoal == QLatin1String("maximize");
    if (sortByMetric)
        std::stable_sort(rows.begin(), rows.end(), [&](const TrialSummary &a, const TrialSummary &b) {
            const double x = a.best.value_or(std::nan("")), y = b.best.value_or(std::nan(""));
            if (std::isnan(x) != std::isnan(y))
                return !std::isnan(x);
            return maximize ? x > y : x < y;
        });
    const QStringList keys = paramKeys(rows);
    QStringList header{QStringLiteral("trial")};
    header << keys << QStringLiteral("state") << QStringLiteral("step") << QStringLiteral("GPU-h");
    if (!sw.metricName.isEmpty())
        header << sw.metricName << QStringLiteral("best");
    header << QStringLiteral("note");
    QList<QStringList> cells;
    for (const TrialSummary &r : rows) {
        const QJsonObject o = QJsonDocument::fromJson(r.trial.params.toUtf8()).object();
        QStringList row{QString::number(r.trial.index)};
        for (const QString &k : keys)
            row << paramCell(o.value(k));
        const Usage u = usage.value(r.trial.index);
        row << stateCell(r) << (r.step >= 0 ? QString::number(r.step) : QStringLiteral("-"))
            << (u.attempts > 0 ? formatHours(u.gpuHours) : QStringLiteral("-"));
        if (!sw.metricName.isEmpty())
            row << (r.latest ? formatNumber(*r.latest) : QStringLiteral("-"))
                << (r.best ? formatNumber(*r.best) : QStringLiteral("-"));
        QString note = r.trial.isActive() ? r.trial.detail : r.trial.exitReason;
        if (note.size() > 60)
            note = note.left(57) + QStringLiteral("...");
        row << note;
        cells << row;
    }
    return formatTable(header, cells);
}

QString counts(const QList<TrialSummary> &rows, int total)
{
    QMap<QString, int> n;
    for (const TrialSummary &r : rows)
        ++n[r.trial.state];
    QStringList parts;
    for (auto it = n.begin(); it != n.end(); ++it)
        parts << QStringLiteral("%1 %2").arg(it.value()).arg(it.key());
    return QStringLiteral("%1 of %2 trials: %3")
        .arg(rows.size())
        .arg(total)
        .arg(parts.join(QStringLiteral(", ")));
}

// The status block of `sweep watch` on a terminal: the sweep, then one line per active trial.
QStringList statusLines(const Sweep &sw, const SweepProgress &p)
{
    const PhaseCounts &c = p.counts;
    QStringList parts{QStringLiteral("%1 done").arg(c.done), QStringLiteral("%1 running").arg(c.running),
                      QStringLiteral("%1 queued").arg(c.queued)};
    if (c.failed)
        parts << QStringLiteral("%1 failed").arg(c.failed);
    if (c.stopped)
        parts << QStringLiteral("%1 stopped").arg(c.stopped);
    QString head =
        QStringLiteral("%1: %2 of %3").arg(sw.name, parts.join(QStringLiteral(", "))).arg(p.planned);
    if (p.stepsTotal > 0)
        head += QStringLiteral("  steps %1/%2 (%3%)")
                    .arg(p.stepsDone)
                    .arg(p.stepsTotal)
                    .arg(int(100.0 * double(p.stepsDone) / double(p.stepsTotal)));
    head += QStringLiteral("  ETA %1").arg(p.etaMs ? formatDuration(*p.etaMs) : QStringLiteral("?"));
    if (p.best)
        head += QStringLiteral("  best %1 %2 (%3)").arg(sw.metricName, formatNumber(*p.best), p.bestRun);
    QStringList lines{head};
    constexpr int kShown = 12;
    for (qsizetype i = 0; i < p.active.size() && i < kShown; ++i) {
        const TrialProgress &t = p.active[i];
        QString line = QStringLiteral("  trial %1  %2").arg(t.index).arg(t.state, -8);
        if (t.step >= 0)
            line += QStringLiteral("  step %1/%2")
                        .arg(t.step)
                        .arg(t.total > 0 ? QString::number(t.total) : QStringLiteral("?"));
        if (t.stepsPerSecond > 0)
            line += QStringLiteral("  %1 steps/s").arg(t.stepsPerSecond, 0, 'g', 3);
        if (t.latest)
            line += QStringLiteral("  %1 %2").arg(sw.metricName, formatNumber(*t.latest));
        if (t.etaMs)
            line += QStringLiteral("  ETA %1").arg(formatDuration(*t.etaMs));
        if (t.attempt > 0)
            line += QStringLiteral("  (attempt %1)").arg(t.attempt + 1);
        lines << line;
    }
    if (p.active.size() > kShown)
        lines << QStringLiteral("  ... and %1 more").arg(p.active.size() - kShown);
    return lines;
}

// The best run's newest sample video (a local path when there is one, else the cluster's).
QString bestVideo(TrackingStore &store, RunId run)
{
    const RunDetails details = store.details(run);
    QString path;
    for (const Artifact &a : details.artifacts)
        if (a.kind == QLatin1String("video"))
            path = a.localPath.isEmpty() ? a.remotePath : a.localPath;
    return path;
}

struct Args {
    QString file, sweep, cluster, reason;
    bool json = false, dryRun = false, watch = false, follow = false;
    int trial = -1;
    SweepRunner::Pace pace{1000, 15000};
};

int usage(const QString &problem)
{
    err(QStringLiteral("orrery sweep: %1\n").arg(problem) + QString::fromUtf8(kSweepUsage));
    return kUsage;
}

std::optional<Sweep> findSweepOrSay(TrackingStore &store, const QString &ref)
{
    auto sw = store.findSweep(ref);
    if (!sw)
        err(QStringLiteral("orrery sweep: no sweep '%1' (`orrery sweep list`)\n").arg(ref));
    return sw;
}

std::optional<TrainerSchema> schemaOrSay()
{
    QString problem;
    auto schema = TrainerSchema::load(&problem);
    if (!schema)
        err(QStringLiteral("orrery sweep: %1\n").arg(problem));
    return schema;
}

void printSummary(TrackingStore &store, const Sweep &sw)
{
    const QList<TrialSummary> rows = store.trialSummaries(sw.id);
    const QList<Trial> attempts = store.trials(sw.id);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    out(QStringLiteral("sweep %1 (%2) on %3: %4\n%5\nusage: %6\n")
            .arg(sw.id)
            .arg(sw.name, sw.cluster.isEmpty() ? QStringLiteral("this machine") : sw.cluster, sw.state,
                 sw.message.isEmpty() ? counts(rows, sw.trialCount) : sw.message,
                 describeUsage(usageOf(attempts, now), remote::clusterPrice(sw.cluster))));
    out(statusTable(sw, rows, true, usageByTrial(attempts, now)));
    if (auto best = store.bestRun(sw.id)) {
        const LatestMetric *m = best->metric(sw.metricName);
        out(QStringLiteral("\nbest: %1 (%2 %3 = %4)\n")
                .arg(best->run.name, sw.metricName,
                     sw.metricGoal == QLatin1String("maximize") ? QStringLiteral("max")
                                                                : QStringLiteral("last"),
                     m ? formatNumber(m->last.value) : QStringLiteral("-")));
        out(QStringLiteral("run dir: %1\n").arg(best->run.runDir));
        const QString video = bestVideo(store, best->run.id);
        if (!video.isEmpty())
            out(QStringLiteral("sample video: %1\n").arg(video));
    }
}

// Follows until the sweep is done or Ctrl-C (which detaches: the trials go on). Where another
// follower holds the sweep's lease, this one only reads and says who acts, and takes over when
// that follower stops (or its lease expires).
int watch(TrackingStore &store, Executor &executor, const Sweep &swIn, const TrainerSchema &schema, bool json,
          SweepRunner::Pace pace = {1000, 15000})
{
    // The lease outlives four of the slowest ticks, so a quiet watch keeps it.
    SweepRunner runner(store, executor, schema,
                       {{}, std::max<qint64>(core::kSweepLeaseTtlMs, 4 * qint64(pace.slowMs))});
    std::optional<InterruptScope> interrupts(std::in_place);  // Ctrl-C detaches
    QString lastLine, lastHolder;
    qint64 lastPrint = 0, lastDraw = 0;
    // On a terminal one block redrawn in place; elsewhere (a pipe, a log file) timestamped lines.
    StatusBlock block(!json && stdoutIsLiveTerminal());
    SweepProgressTracker progress;
    while (!InterruptScope::requested() && !runner.isDone(swIn.id)) {
        const TickReport report = runner.tick({swIn.id});
        const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
        const QString holder =
            report.followedElsewhere.isEmpty() ? QString() : report.followedElsewhere.front().holder;
        if (!holder.isEmpty() && holder != lastHolder) {
            block.printAbove(
                QStringLiteral("[%1] followed by %2: this watch only reads, and takes over when it stops\n")
                    .arg(stamp, holder));
        } else if (holder.isEmpty() && !lastHolder.isEmpty()) {
            // Taken over, unless the other follower ended the sweep (then nobody needs the lease).
            const auto lease = store.sweepLease(swIn.id);
            if (lease && lease->heldBy(runner.followerId()))
                block.printAbove(QStringLiteral("[%1] the other follower stopped: this watch acts now (%2)\n")
                                     .arg(stamp, runner.followerId()));
        }
        lastHolder = holder;
        for (const QString &e : report.events)
            block.printAbove(QStringLiteral("[%1] %2\n").arg(stamp, e));
        for (const QString &e : report.errors) {
            block.clear();
            err(QStringLiteral("[%1] %2\n").arg(stamp, e));
        }
        const auto sw = store.sweep(swIn.id);
        const QList<TrialSummary> rows = store.trialSummaries(sw->id);
        const auto best = store.bestRun(sw->id);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const SweepProgress p = progress.update(*sw, rows, best, now);
        if (block.live()) {
            if (!report.events.isEmpty() || now - lastDraw >= 250) {  // a few redraws a second at most
                block.show(statusLines(*sw, p));
                lastDraw = now;
            }
        } else {
            QString line = counts(rows, sw->trialCount);
            if (p.best)
                line +=
                    QStringLiteral("; best %1 %2 (%3)").arg(sw->metricName, formatNumber(*p.best), p.bestRun);
            // Printed when the counts or the best change, else every 30 s with the step counts.
            if (line != lastLine || now - lastPrint > 30000) {
                QString steps;
                if (p.stepsTotal > 0)
                    steps = QStringLiteral("; steps %1/%2").arg(p.stepsDone).arg(p.stepsTotal);
                if (p.etaMs)
                    steps += QStringLiteral(", ETA %1").arg(formatDuration(*p.etaMs));
                out(QStringLiteral("[%1] %2%3\n").arg(stamp, line, steps));
                lastLine = line;
                lastPrint = now;
            }
        }
        if (runner.isDone(swIn.id))
            break;
        const int wait = runner.nextIntervalMs(report, pace);
        for (int slept = 0; slept < wait && !InterruptScope::requested(); slept += 100)
            QThread::msleep(100);
    }
    block.clear();
    interrupts.reset();
    runner.releaseLeases();  // another follower acts from its next tick, not after the lease expires
    if (InterruptScope::requested()) {
        err(QStringLiteral("detached: the trials go on; `orrery sweep watch %1` picks the sweep up again\n")
                .arg(swIn.id));
        return kOk;
    }
    const auto sw = store.sweep(swIn.id);
    if (json)
        return kOk;
    out(QStringLiteral("\n"));
    printSummary(store, *sw);
    return sw->sweepState() == core::SweepState::Failed ? kFailed : kOk;
}

QJsonObject sweepJson(TrackingStore &store, const Sweep &sw)
{
    const QList<Trial> attempts = store.trials(sw.id);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const QHash<int, Usage> usage = usageByTrial(attempts, now);
    const std::optional<Price> price = remote::clusterPrice(sw.cluster);
    QJsonArray trials;
    for (const TrialSummary &r : store.trialSummaries(sw.id)) {
        QJsonObject t{{QStringLiteral("index"), r.trial.index},
                      {QStringLiteral("attempts"), r.attempts},
                      {QStringLiteral("state"), r.trial.state},
                      {QStringLiteral("params"), QJsonDocument::fromJson(r.trial.params.toUtf8()).object()},
                      {QStringLiteral("step"), r.step},
                      {QStringLiteral("task"), r.trial.task},
                      {QStringLiteral("run_id"), r.trial.runId},
                      {QStringLiteral("run_dir"), r.trial.runDir},
                      {QStringLiteral("detail"), r.trial.detail},
                      {QStringLiteral("reason"), r.trial.exitReason},
                      {QStringLiteral("usage"), usageJson(usage.value(r.trial.index), price)}};
        if (r.latest)
            t.insert(QStringLiteral("latest"), jsonNumber(*r.latest));
        if (r.best)
            t.insert(QStringLiteral("best"), jsonNumber(*r.best));
        trials.append(t);
    }
    QJsonObject o{{QStringLiteral("id"), sw.id},
                  {QStringLiteral("name"), sw.name},
                  {QStringLiteral("state"), sw.state},
                  {QStringLiteral("message"), sw.message},
                  {QStringLiteral("executor"), sw.cluster.isEmpty() ? QStringLiteral("local") : sw.cluster},
                  {QStringLiteral("method"), sw.method},
                  {QStringLiteral("metric"), sw.metricName},
                  {QStringLiteral("goal"), sw.metricGoal},
                  {QStringLiteral("dir"), sw.rootDir},
                  {QStringLiteral("trial_count"), sw.trialCount},
                  {QStringLiteral("usage"), usageJson(usageOf(attempts, now), price)},
                  {QStringLiteral("trials"), trials}};
    if (auto best = store.bestRun(sw.id)) {
        QJsonObject b{{QStringLiteral("run_id"), best->run.id},
                      {QStringLiteral("name"), best->run.name},
                      {QStringLiteral("run_dir"), best->run.runDir},
                      {QStringLiteral("video"), bestVideo(store, best->run.id)}};
        if (const LatestMetric *m = best->metric(sw.metricName))
            b.insert(QStringLiteral("value"), jsonNumber(m->last.value));
        o.insert(QStringLiteral("best"), b);
    }
    return o;
}

}  // namespace

int runSweepSubmit(const Context &ctx, const SubmitArgs &a)
{
    const auto schema = schemaOrSay();
    if (!schema)
        return kFailed;
    QString problem;
    remote::Executors executors(terminalCallbacks(false));
    // A profile without a trainer path gets the bundled one built first (a sweep of its own
    // command needs none).
    if (!a.dryRun && !a.plan.spec.command)
        executors.deployIfMissing(deployProgressPrinter());
    Executor *executor = executors.get(a.cluster, &problem);
    if (!executor) {
        err(QStringLiteral("orrery sweep submit: %1\n").arg(problem));
        return kFailed;
    }
    try {
        auto store = openStore(ctx);
        SweepRunner runner(*store, *executor, *schema);
        if (a.dryRun && a.json) {
            // The plan, the worst case and what would be launched, for scripts.
            const QList<PlannedTrial> trials = planTrials(a.plan);
            const int planned =
                a.plan.spec.method == SearchMethod::Grid ? int(trials.size()) : a.plan.spec.runCap;
            QJsonObject o = planJson(a.plan, trials);
            o.insert(QStringLiteral("dry_run"), true);
            o.insert(QStringLiteral("worst_case"),
                     worstCaseJson(worstCase(a.plan.spec, planned, int(trials.size())),
                                   remote::clusterPrice(a.cluster)));
            o.insert(QStringLiteral("launch"), QString::fromUtf8(runner.describe(a.plan)));
            out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
            return kOk;
        }
        if (a.dryRun) {
            out(QStringLiteral("# dry run: nothing is submitted\n") +
                QString::fromUtf8(runner.describe(a.plan)));
            return kOk;
        }
        const SweepId id = runner.submit(a.plan);
        const auto sw = store->sweep(id);
        if (a.json && !a.watch) {
            out(QString::fromUtf8(QJsonDocument(sweepJson(*store, *sw)).toJson(QJsonDocument::Indented)));
            return kOk;
        }
        out(QStringLiteral("sweep %1 (%2): %3 trial(s) submitted to %4\ndirectory: %5\n")
                .arg(id)
                .arg(sw->name)
                .arg(store->trials(id).size())
                .arg(executor->name(), sw->rootDir));
        if (!a.watch) {
            out(QStringLiteral("follow it with `orrery sweep watch %1` (it runs without you)\n").arg(id));
            return kOk;
        }
        return watch(*store, *executor, *sw, *schema, a.json);
    } catch (const std::exception &e) {
        err(QStringLiteral("orrery sweep submit: %1\n").arg(QString::fromUtf8(e.what())));
        return kFailed;
    }
}

int runSweepFollow(const Context &ctx, const QString &verb, const QStringList &argsIn)
{
    Args a;
    for (qsizetype i = 0; i < argsIn.size(); ++i) {
        const QString &s = argsIn[i];
        if (s == QLatin1String("--json"))
            a.json = true;
        else if (s == QLatin1String("-f") || s == QLatin1String("--follow"))
            a.follow = true;
        else if (verb == QLatin1String("watch") && s == QLatin1String("--pace")) {
            // --pace FAST,SLOW in seconds: the first and the longest interval between ticks.
            const QStringList parts = argsIn.value(++i).split(QLatin1Char(','));
            bool okFast = false, okSlow = false;
            const double fast = parts.value(0).toDouble(&okFast), slow = parts.value(1).toDouble(&okSlow);
            if (parts.size() != 2 || !okFast || !okSlow || fast < 0.1 || slow < fast || slow > 3600)
                return usage(QStringLiteral("--pace takes FAST,SLOW seconds (0.1 <= FAST <= SLOW <= 3600)"));
            a.pace = {int(fast * 1000), int(slow * 1000)};
        } else if (verb == QLatin1String("stop") && s == QLatin1String("--reason")) {
            if (i + 1 >= argsIn.size())
                return usage(QStringLiteral("--reason needs a text"));
            a.reason = argsIn[++i];
        } else if (verb == QLatin1String("stop") && s.startsWith(QLatin1String("--reason=")))
            a.reason = s.mid(9);
        else if (s.startsWith(QLatin1Char('-')) && s.size() > 1)
            return usage(QStringLiteral("unknown option '%1'").arg(s));
        else if (a.sweep.isEmpty() && verb != QLatin1String("list") && verb != QLatin1String("supervise"))
            a.sweep = s;
        else if (verb == QLatin1String("supervise") && a.file.isEmpty())
            a.file = s;
        else if ((verb == QLatin1String("logs") || verb == QLatin1String("stop") ||
                  verb == QLatin1String("retry")) &&
                 a.trial < 0) {
            bool ok = false;
            a.trial = s.toInt(&ok);
            if (!ok || a.trial < 0)
                return usage(QStringLiteral("'%1' is not a trial number").arg(s));
        } else
            return usage(QStringLiteral("unexpected argument '%1'").arg(s));
    }
    if (verb == QLatin1String("supervise")) {
        if (a.file.isEmpty())
            return usage(QStringLiteral("supervise needs a batch file"));
        return runLocalSupervisor(a.file) == 0 ? kOk : kFailed;
    }
    if (verb != QLatin1String("list") && a.sweep.isEmpty())
        return usage(QStringLiteral("%1 needs a sweep (id or name)").arg(verb));
    if ((verb == QLatin1String("logs") || verb == QLatin1String("stop") || verb == QLatin1String("retry")) &&
        a.trial < 0)
        return usage(QStringLiteral("%1 needs a trial number").arg(verb));

    try {
        const bool writes = verb == QLatin1String("watch") || verb == QLatin1String("cancel") ||
            verb == QLatin1String("stop") || verb == QLatin1String("retry");
        auto store = openStore(ctx, writes ? TrackingStore::Mode::ReadWrite : TrackingStore::Mode::ReadOnly);
        if (verb == QLatin1String("list")) {
            const QList<Sweep> sweeps = store->sweeps();
            if (a.json) {
                QJsonArray arr;
                for (const Sweep &sw : sweeps)
                    arr.append(sweepJson(*store, sw));
                out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)));
                return kOk;
            }
            QList<QStringList> rows;
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            for (const Sweep &sw : sweeps) {
                const QList<Trial> attempts = store->trials(sw.id);
                const int done = countPhases(attempts).ended();
                const Usage usage = usageOf(attempts, now);
                QString best = QStringLiteral("-");
                if (auto b = store->bestRun(sw.id))
                    if (const LatestMetric *m = b->metric(sw.metricName))
                        best = QStringLiteral("%1 %2").arg(sw.metricName, formatNumber(m->last.value));
                rows << QStringList{QString::number(sw.id),
                                    sw.name,
                                    sw.cluster.isEmpty() ? QStringLiteral("local") : sw.cluster,
                                    sw.method,
                                    sw.state,
                                    QStringLiteral("%1/%2").arg(done).arg(sw.trialCount),
                                    usage.attempts > 0 ? formatHours(usage.gpuHours) : QStringLiteral("-"),
                                    best};
            }
            out(formatTable({QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("on"),
                             QStringLiteral("method"), QStringLiteral("state"), QStringLiteral("done"),
                             QStringLiteral("GPU-h"), QStringLiteral("best")},
                            rows));
            return kOk;
        }
        const auto sw = findSweepOrSay(*store, a.sweep);
        if (!sw)
            return kFailed;
        if (verb == QLatin1String("status")) {
            if (a.json)
                out(QString::fromUtf8(QJsonDocument(sweepJson(*store, *sw)).toJson(QJsonDocument::Indented)));
            else
                printSummary(*store, *sw);
            return kOk;
        }
        if (verb == QLatin1String("best")) {
            const auto best = store->bestRun(sw->id);
            if (!best) {
                err(QStringLiteral("orrery sweep best: no trial of %1 has logged %2 yet\n")
                        .arg(sw->name, sw->metricName));
                return kFailed;
            }
            if (a.json) {
                out(QString::fromUtf8(
                    QJsonDocument(sweepJson(*store, *sw).value(QLatin1String("best")).toObject())
                        .toJson(QJsonDocument::Indented)));
                return kOk;
            }
            const RunDetails details = store->details(best->run.id);
            const LatestMetric *m = best->metric(sw->metricName);
            QString text = QStringLiteral("%1 (run %2): %3 = %4\nrun dir: %5\n")
                               .arg(best->run.name)
                               .arg(best->run.id)
                               .arg(sw->metricName, m ? formatNumber(m->last.value) : QStringLiteral("-"),
                                    best->run.runDir);
            for (const Trial &t : store->trials(sw->id))
                if (t.runId == best->run.id) {
                    text += QStringLiteral("params: %1\n").arg(t.params);
                    break;
                }
            const QString video = bestVideo(*store, best->run.id);
            if (!video.isEmpty())
                text += QStringLiteral("sample video: %1\n").arg(video);
            out(text);
            return kOk;
        }

        QString problem;
        remote::Executors executors(terminalCallbacks(false));
        Executor *executor = executors.get(sw->cluster, &problem);
        if (!executor) {
            err(QStringLiteral("orrery sweep %1: %2\n").arg(verb, problem));
            return kFailed;
        }
        if (verb == QLatin1String("watch")) {
            const auto schema = schemaOrSay();
            if (!schema)
                return kFailed;
            return watch(*store, *executor, *sw, *schema, a.json, a.pace);
        }
        if (verb == QLatin1String("stop")) {
            const auto schema = schemaOrSay();
            if (!schema)
                return kFailed;
            SweepRunner runner(*store, *executor, *schema);
            runner.stopTrial(sw->id, a.trial, a.reason);  // a refusal throws: exit 1 with its message
            out(QStringLiteral("stopping trial %1 of sweep %2 (%3); its checkpoint is kept\n")
                    .arg(a.trial)
                    .arg(sw->id)
                    .arg(sw->name));
            // As cancel does: follow until the trial has stopped (the trainer checkpoints first),
            // at most a minute, so the store says stopped without waiting for another follower.
            auto stopping = [&] {
                for (const Trial &t : latestAttempts(store->trials(sw->id)))
                    if (t.index == a.trial)
                        return t.isActive();
                return false;
            };
            for (int i = 0; i < 120 && stopping(); ++i) {
                const TickReport r = runner.tick({sw->id});
                for (const QString &e : r.events)
                    out(e + QLatin1Char('\n'));
                if (stopping())
                    QThread::msleep(500);
            }
            runner.releaseLeases();
            if (stopping())
                err(QStringLiteral(
                        "trial %1 is still stopping; `orrery sweep watch %2` finishes the record\n")
                        .arg(a.trial)
                        .arg(sw->id));
            return kOk;
        }
        if (verb == QLatin1String("retry")) {
            const auto schema = schemaOrSay();
            if (!schema)
                return kFailed;
            const bool ended = !isActive(sw->sweepState());
            SweepRunner runner(*store, *executor, *schema);
            runner.retryTrial(sw->id, a.trial);  // a refusal throws: exit 1 with its message
            int attempt = 0;
            for (const Trial &t : latestAttempts(store->trials(sw->id)))
                if (t.index == a.trial)
                    attempt = t.attempt + 1;
            out(QStringLiteral(
                    "retrying trial %1 of sweep %2 (%3): attempt %4, resuming from its checkpoint if "
                    "it has one%5; follow it with `orrery sweep watch %2`\n")
                    .arg(QString::number(a.trial), QString::number(sw->id), sw->name,
                         QString::number(attempt),
                         ended ? QStringLiteral(" (the sweep runs again)") : QString()));
            return kOk;
        }
        if (verb == QLatin1String("cancel")) {
            const auto schema = schemaOrSay();
            if (!schema)
                return kFailed;
            SweepRunner runner(*store, *executor, *schema);
            runner.cancel(sw->id);
            out(QStringLiteral("cancelling sweep %1 (%2)\n").arg(sw->id).arg(sw->name));
            // Follow until every trial has stopped (the trainer checkpoints first), at most a minute.
            for (int i = 0; i < 120 && !runner.isDone(sw->id); ++i) {
                const TickReport r = runner.tick({sw->id});
                for (const QString &e : r.events)
                    out(e + QLatin1Char('\n'));
                if (!runner.isDone(sw->id))
                    QThread::msleep(500);
            }
            runner.releaseLeases();
            if (!runner.isDone(sw->id))
                err(QStringLiteral(
                        "some trials are still stopping; `orrery sweep watch %1` finishes the record\n")
                        .arg(sw->id));
            return kOk;
        }
        if (verb == QLatin1String("logs")) {
            Trial trial;
            for (const Trial &t : store->trials(sw->id))
                if (t.index == a.trial)
                    trial = t;
            if (trial.task.isEmpty() && trial.runDir.isEmpty()) {
                err(QStringLiteral("orrery sweep logs: sweep %1 has no trial %2\n")
                        .arg(sw->name)
                        .arg(a.trial));
                return kFailed;
            }
            const QStringList paths = executor->logPaths(sw->rootDir, trial.task, trial.runDir);
            QList<qint64> offsets(paths.size(), 0);
            const InterruptScope interrupts;
            while (true) {
                QList<FileRead> reads;
                for (qsizetype i = 0; i < paths.size(); ++i)
                    reads.append({paths[i], offsets[i], 8 << 20});
                const QList<FileChunk> chunks = executor->readFiles(reads);
                for (qsizetype i = 0; i < chunks.size(); ++i) {
                    if (!a.follow)  // tail's headers; following, the lines just come
                        out(QStringLiteral("%1==> %2 <==%3\n")
                                .arg(i > 0 ? QStringLiteral("\n") : QString(), paths[i],
                                     chunks[i].exists ? QString() : QStringLiteral(" (not there yet)")));
                    out(QString::fromUtf8(chunks[i].data));
                    offsets[i] += chunks[i].data.size();
                }
                if (!a.follow || InterruptScope::requested())
                    break;
                // The executor, not the store, says whether the task still runs (no follower may
                // be updating the store).
                const TaskStatus st = executor->poll({trial.task}).value(trial.task);
                const bool quiet = std::all_of(chunks.begin(), chunks.end(),
                                               [](const FileChunk &c) { return c.data.isEmpty(); });
                if (st.state != TaskStatus::State::Queued && st.state != TaskStatus::State::Running && quiet)
                    break;
                QThread::msleep(1000);
            }
            return kOk;
        }
        return usage(QStringLiteral("unknown verb '%1'").arg(verb));
    } catch (const std::exception &e) {
        err(QStringLiteral("orrery sweep %1: %2\n").arg(verb, QString::fromUtf8(e.what())));
        return kFailed;
    }
}

}  // namespace orrery::cli
