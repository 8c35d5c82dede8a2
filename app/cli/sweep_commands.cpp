// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweep_commands.h"

#include "cluster_commands.h"
#include "output.h"

#include "orrery/core/format.h"
#include "orrery/core/importance.h"
#include "orrery/core/metricgoal.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <functional>

namespace orrery::cli {

const char *const kSweepNotes =
    "\nSWEEP is an id or a name (the newest of that name); TRIAL a trial's index. `plan` checks\n"
    "every parameter against `orrery-train --print-schema` and submits nothing; `submit` returns\n"
    "at once (--watch follows to the end; --dry-run prints the worst-case GPU-hours, the trials\n"
    "and the sbatch script or command lines instead). Spec errors are printed as FILE:LINE:\n"
    "message (exit status 2). `importance` needs at least 4 runs with the sweep's metric.\n"
    "See docs/sweeps.md.\n";

using namespace orrery::core;
using remote::OperationError;
using remote::SweepOperations;

remote::SweepOperations::Options cliOperations(qint64 slowestTickMs)
{
    SweepOperations::Options o;
    o.prompts = terminalCallbacks(false);
    o.follower = followerForPace(slowestTickMs);
    o.settle = remote::Settle::Wait;
    return o;
}

int reportFailure(const QString &verb, const OperationError &e)
{
    // A spec's problems are FILE:LINE: lines of their own; anything else names the verb.
    const bool specLines = verb == QLatin1String("plan") || verb == QLatin1String("submit");
    if (specLines && e.kind() == OperationError::Kind::Invalid)
        err(e.message() + QLatin1Char('\n'));
    else
        err(QStringLiteral("orrery sweep %1: %2\n").arg(verb, e.message()));
    return e.kind() == OperationError::Kind::Invalid && specLines ? kUsage : kFailed;
}

int trialArgument(const QString &verb, const QString &text)
{
    bool ok = false;
    const int trial = text.toInt(&ok);
    if (!ok || trial < 0) {
        err(QStringLiteral("orrery sweep %1: '%2' is not a trial number\n").arg(verb, text));
        return -1;
    }
    return trial;
}

namespace {

// The spec's problems, each on its own line; the exit status they mean.
int printProblems(const remote::CheckedSpec &spec)
{
    for (const QString &line : spec.problemLines())
        err(line + QLatin1Char('\n'));
    return spec.problemIsUsage() ? kUsage : kFailed;
}

// What the spec holds that Orrery ignores (W&B's project, entity, ...), on stderr so that
// --json output stays one document.
void printWarnings(const remote::CheckedSpec &spec)
{
    for (const SpecError &w : spec.warnings())
        err((w.line > 0 ? QStringLiteral("%1:%2: warning: %3\n").arg(w.file).arg(w.line)
                        : QStringLiteral("%1: warning: %3\n").arg(w.file))
                .arg(w.message));
}

// --count N (W&B's agent flag): 0 when not given; -1 (and a message) when it is not a count.
int countOption(const QString &verb, const QCommandLineParser &p)
{
    if (!p.isSet(QStringLiteral("count")))
        return 0;
    bool ok = false;
    const int n = p.value(QStringLiteral("count")).toInt(&ok);
    if (!ok || n < 1) {
        err(QStringLiteral("orrery sweep %1: --count %2: expected a number of trials >= 1\n")
                .arg(verb, p.value(QStringLiteral("count"))));
        return -1;
    }
    return n;
}

int sweepPlan(const Context &, const QCommandLineParser &p)
{
    const QString file = p.positionalArguments().front(), cluster = p.value(QStringLiteral("cluster"));
    const int count = countOption(QStringLiteral("plan"), p);
    if (count < 0)
        return kUsage;
    try {
        const remote::CheckedSpec spec =
            SweepOperations::checkSpecFile(file, remote::loadTrainerSchema(), true, count);
        if (!spec.ok())
            return printProblems(spec);
        printWarnings(spec);
        const remote::SweepPreview preview = SweepOperations::preview(spec, cluster);
        if (!cluster.isEmpty() && !preview.launchProblem.isEmpty()) {
            err(QStringLiteral("%1: %2\n").arg(file, preview.launchProblem));
            return kFailed;
        }
        if (p.isSet(QStringLiteral("json"))) {
            QJsonObject o = planJson(spec.plan(), spec.trials());
            if (!cluster.isEmpty())
                o.insert(QStringLiteral("sbatch"), QString::fromUtf8(preview.launch));
            out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
            return kOk;
        }
        out(preview.plan.summary + QLatin1Char('\n') + formatTable(preview.plan.columns, preview.plan.rows));
        if (!preview.plan.commands.isEmpty()) {
            out(QStringLiteral("\n# the command of each trial (<sweep dir> is named at submission; no shell "
                               "reads it: each word is one argument)\n"));
            for (qsizetype i = 0; i < preview.plan.commands.size(); ++i)
                out(QStringLiteral("%1: %2\n").arg(spec.trials()[i].index).arg(preview.plan.commands[i]));
        }
        if (!cluster.isEmpty())
            out(QStringLiteral("\n# sbatch script for cluster %1:\n").arg(cluster) +
                QString::fromUtf8(preview.launch));
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("plan"), e);
    }
}

// `sweep submit FILE` and `sweep relaunch SWEEP`: a checked spec, then --dry-run's preview or
// the submission (and --watch's follow). `specOf` checks the spec once the store is open.
int submitChecked(const Context &ctx, const QCommandLineParser &p, const QString &verb,
                  const std::function<remote::CheckedSpec(SweepOperations &, int count)> &specOf,
                  const std::function<QString(SweepOperations &)> &clusterOf)
{
    const bool json = p.isSet(QStringLiteral("json")), watch = p.isSet(QStringLiteral("watch"));
    const int count = countOption(verb, p);
    if (count < 0)
        return kUsage;
    std::optional<NotifyTarget> notify;
    if (!notifyOption(verb, p, notify))
        return kUsage;
    if (notify && !watch) {
        err(QStringLiteral("orrery sweep %1: --notify needs --watch: the notices are sent by the follower "
                           "(or put `notify:` in the spec, for every follower)\n")
                .arg(verb));
        return kUsage;
    }
    try {
        auto store = openStore(ctx);
        SweepOperations ops(*store, cliOperations());
        const QString cluster = clusterOf(ops);
        const remote::CheckedSpec spec = specOf(ops, count);
        if (!spec.ok())
            return printProblems(spec);
        printWarnings(spec);
        if (p.isSet(QStringLiteral("dry-run"))) {
            // Before anything is spent or connected to: the worst case, the trials, the launch.
            const remote::SweepPreview preview = SweepOperations::preview(spec, cluster);
            if (json) {
                QJsonObject o = preview.toJson(spec);
                o.insert(QStringLiteral("dry_run"), true);
                out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
            } else {
                out(preview.plan.summary + QLatin1Char('\n') + preview.worstCaseText() + QLatin1Char('\n'));
                out(QStringLiteral("# dry run: nothing is submitted\n") + QString::fromUtf8(preview.launch));
            }
            if (!preview.launchProblem.isEmpty()) {
                err(QStringLiteral("orrery sweep %1: %2\n").arg(verb, preview.launchProblem));
                return kFailed;
            }
            return kOk;
        }
        remote::OperationProgress progress;
        progress.deploy = deployProgressPrinter();
        const SweepId id = ops.submit(spec, cluster, progress);
        const Sweep sw = ops.sweep(id);
        if (json && !watch) {
            out(QString::fromUtf8(
                QJsonDocument(overviewJson(ops.overview(sw))).toJson(QJsonDocument::Indented)));
            return kOk;
        }
        out(QStringLiteral("sweep %1 (%2): %3 trial(s) submitted to %4\ndirectory: %5\n")
                .arg(id)
                .arg(sw.name)
                .arg(store->trials(id).size())
                .arg(ops.executor(cluster).name(), sw.rootDir));
        if (!watch) {
            out(QStringLiteral("follow it with `orrery sweep watch %1` (it runs without you)\n").arg(id));
            return kOk;
        }
        return watchSweep(ops, sw, json, TickPace{1000, 15000}, notify);
    } catch (const OperationError &e) {
        return reportFailure(verb, e);
    }
}

int sweepSubmit(const Context &ctx, const QCommandLineParser &p)
{
    const QString file = p.positionalArguments().front(), cluster = p.value(QStringLiteral("cluster"));
    return submitChecked(
        ctx, p, QStringLiteral("submit"),
        [&](SweepOperations &ops, int count) { return ops.checkSpecFile(file, true, count); },
        [&](SweepOperations &) { return cluster; });
}

// `sweep relaunch SWEEP`: a new sweep of a recorded sweep's spec as it was submitted (the window's
// "Launch again"), on its cluster unless --cluster names another.
int sweepRelaunch(const Context &ctx, const QCommandLineParser &p)
{
    const QString ref = p.positionalArguments().front();
    std::optional<Sweep> from;
    return submitChecked(
        ctx, p, QStringLiteral("relaunch"),
        [&](SweepOperations &ops, int count) { return ops.checkStoredSpec(*from, true, count); },
        [&](SweepOperations &ops) {
            from = ops.sweep(ref);
            return p.isSet(QStringLiteral("cluster")) ? p.value(QStringLiteral("cluster")) : from->cluster;
        });
}

// `sweep report S -o FILE`: SweepOperations::report, the window's File → Export report…, written
// beside and renamed (QSaveFile): an interrupted report never leaves half a page.
int sweepReport(const Context &ctx, const QCommandLineParser &p)
{
    const QString output = p.value(QStringLiteral("output"));
    if (output.isEmpty()) {
        err(QStringLiteral("orrery sweep report: say where: -o report.html\n"));
        return kUsage;
    }
    core::ReportOptions options;
    if (p.isSet(QStringLiteral("videos"))) {
        bool ok = false;
        options.videos = p.value(QStringLiteral("videos")).toInt(&ok);
        if (!ok || options.videos < 0) {
            err(QStringLiteral("orrery sweep report: --videos wants a count, 0 or more\n"));
            return kUsage;
        }
    }
    try {
        auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
        SweepOperations ops(*store, cliOperations());
        const Sweep sw = ops.sweep(p.positionalArguments().front());
        remote::OperationProgress progress;
        progress.say = [](const QString &line) { err(QStringLiteral("%1…\n").arg(line)); };
        const QByteArray html = ops.report(sw, options, progress);
        QSaveFile file(output);
        if (!file.open(QIODevice::WriteOnly) || file.write(html) != html.size() || !file.commit()) {
            err(QStringLiteral("orrery sweep report: cannot write %1: %2\n").arg(output, file.errorString()));
            return kFailed;
        }
        out(QStringLiteral("%1: sweep %2 (%3), %4 KB\n")
                .arg(output)
                .arg(sw.id)
                .arg(sw.name)
                .arg(html.size() / 1024));
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("report"), e);
    } catch (const StoreError &e) {
        err(QStringLiteral("orrery sweep report: %1\n").arg(QString::fromUtf8(e.what())));
        return kFailed;
    }
}

// `sweep importance S`: core::sweepImportance (the GUI's Importance tab computes the same),
// printed by importance, highest first.
int sweepImportanceCommand(const Context &ctx, const QCommandLineParser &p)
{
    try {
        auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
        const SweepOperations ops(*store, cliOperations());
        const Sweep sw = ops.sweep(p.positionalArguments().front());
        const ImportanceOptions options;
        const ImportanceResult r = core::sweepImportance(*store, sw, options);
        if (!r.ok()) {
            err(QStringLiteral("orrery sweep importance: %1: %2\n").arg(sw.name, r.problem));
            return kFailed;
        }
        if (p.isSet(QStringLiteral("json"))) {
            QJsonArray params;
            for (const ParamImportance &pi : r.params)
                params.append(QJsonObject{{QStringLiteral("param"), pi.key},
                                          {QStringLiteral("correlation"),
                                           pi.correlation ? QJsonValue(*pi.correlation) : QJsonValue()},
                                          {QStringLiteral("importance"), pi.importance},
                                          {QStringLiteral("runs"), pi.runs},
                                          {QStringLiteral("swept"), pi.swept},
                                          {QStringLiteral("categorical"), pi.categorical},
                                          {QStringLiteral("log"), pi.log}});
            const QJsonObject o{
                {QStringLiteral("sweep"), sw.name},        {QStringLiteral("sweep_id"), sw.id},
                {QStringLiteral("metric"), sw.metricName}, {QStringLiteral("goal"), toString(sw.metricGoal)},
                {QStringLiteral("runs_used"), r.runsUsed}, {QStringLiteral("runs_left_out"), r.runsLeftOut},
                {QStringLiteral("trees"), options.trees},  {QStringLiteral("params"), params}};
            out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
            return kOk;
        }
        QList<QStringList> rows;
        for (const ParamImportance &pi : r.params)
            rows.push_back(
                {pi.key + (pi.log ? QStringLiteral(" (log)") : QString()),
                 pi.correlation ? QString::asprintf("%+.2f", *pi.correlation) : QStringLiteral("-"),
                 QString::asprintf("%.3f", pi.importance), QString::number(pi.runs)});
        out(QStringLiteral("sweep %1: what explains %2 (%3), over %4 run(s)%5\n")
                .arg(sw.name, sw.metricName, toString(sw.metricGoal))
                .arg(r.runsUsed)
                .arg(r.runsLeftOut
                         ? QStringLiteral(" (%1 without %2 left out)").arg(r.runsLeftOut).arg(sw.metricName)
                         : QString()) +
            formatTable({QStringLiteral("param"), QStringLiteral("correlation"), QStringLiteral("importance"),
                         QStringLiteral("runs")},
                        rows) +
            QStringLiteral("correlation: Pearson with the latest %1 (of log10 of a log param; - for text "
                           "values); importance: a random forest's (%2 trees) permutation importance, "
                           "summing to 1\n")
                .arg(sw.metricName)
                .arg(options.trees));
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("importance"), e);
    }
}

QCommandLineOption flag(const QString &name, const QString &description)
{
    return QCommandLineOption(name, description);
}

QCommandLineOption valued(const QString &name, const QString &description, const QString &value)
{
    return QCommandLineOption(name, description, value);
}

}  // namespace

QList<VerbInfo> sweepVerbs()
{
    const QCommandLineOption json =
        flag(QStringLiteral("json"), QStringLiteral("one JSON document for scripts"));
    const QCommandLineOption cluster =
        valued(QStringLiteral("cluster"), QStringLiteral("a cluster profile (default: this machine)"),
               QStringLiteral("NAME"));
    const QString sweep = QStringLiteral("SWEEP"), trial = QStringLiteral("TRIAL");
    const QCommandLineOption notify = valued(
        QStringLiteral("notify"),
        QStringLiteral("send the sweep's notices (ended, trial failed or hung, budget stop) as JSON to a "
                       "command's stdin or POST them to an http(s) URL"),
        QStringLiteral("TARGET"));
    const QCommandLineOption count =
        valued(QStringLiteral("count"),
               QStringLiteral("at most N trials (W&B's `wandb agent --count`; a random or bayes spec "
                              "without run_cap needs it)"),
               QStringLiteral("N"));
    return {
        parsedVerb(QStringLiteral("plan"), {QStringLiteral("FILE")}, {cluster, count, json},
                   QStringLiteral("validate a spec, print its trials (and sbatch)"), sweepPlan),
        parsedVerb(QStringLiteral("submit"), {QStringLiteral("FILE")},
                   {cluster, count,
                    flag(QStringLiteral("dry-run"),
                         QStringLiteral("print the worst-case GPU-hours, the "
                                        "trials and the launch; submit nothing")),
                    flag(QStringLiteral("watch"), QStringLiteral("follow the sweep to its end")), notify,
                    json},
                   QStringLiteral("submit a sweep (--dry-run: its worst-case GPU-hours)"), sweepSubmit),
        parsedVerb(
            QStringLiteral("relaunch"), {sweep},
            {cluster, count,
             flag(QStringLiteral("dry-run"),
                  QStringLiteral("print what a new sweep of its spec would run; submit nothing")),
             flag(QStringLiteral("watch"), QStringLiteral("follow the new sweep to its end")), notify, json},
            QStringLiteral("a new sweep of a recorded sweep's spec (its cluster by default)"), sweepRelaunch),
        parsedVerb(QStringLiteral("list"), {}, {json},
                   QStringLiteral("every sweep: state, trials done, GPU-hours, best value"), sweepList),
        parsedVerb(QStringLiteral("status"), {sweep}, {json},
                   QStringLiteral("each trial: params, state, step, GPU-hours, metric"), sweepStatus),
        parsedVerb(QStringLiteral("watch"), {sweep},
                   {valued(QStringLiteral("pace"),
                           QStringLiteral(
                               "a tick every FAST s while things change, slowing to SLOW s (default 1,15)"),
                           QStringLiteral("FAST,SLOW")),
                    notify},
                   QStringLiteral("follow live (Ctrl-C detaches)"), sweepWatch),
        parsedVerb(QStringLiteral("cancel"), {sweep}, {},
                   QStringLiteral("cancel every trial still queued or running"), sweepCancel),
        parsedVerb(QStringLiteral("stop"), {sweep, trial},
                   {valued(QStringLiteral("reason"), QStringLiteral("why, recorded with the trial"),
                           QStringLiteral("TEXT"))},
                   QStringLiteral("stop one queued or running trial now"), sweepStop),
        parsedVerb(QStringLiteral("retry"), {sweep, trial}, {},
                   QStringLiteral("run an ended trial again, from its checkpoint"), sweepRetry),
        parsedVerb(QStringLiteral("best"), {sweep}, {json},
                   QStringLiteral("the best trial: value, params, run dir, video"), sweepBest),
        parsedVerb(QStringLiteral("report"), {sweep},
                   {QCommandLineOption({QStringLiteral("o"), QStringLiteral("output")},
                                       QStringLiteral("the HTML file to write"), QStringLiteral("FILE")),
                    valued(QStringLiteral("videos"),
                           QStringLiteral("the best runs whose newest sample is embedded (default 4)"),
                           QStringLiteral("N"))},
                   QStringLiteral("one self-contained HTML page to share: table, charts, parallel "
                                  "coordinates, importance, the best samples"),
                   sweepReport),
        parsedVerb(QStringLiteral("importance"), {sweep}, {json},
                   QStringLiteral("each param's correlation with the metric and its importance"),
                   sweepImportanceCommand),
        parsedVerb(QStringLiteral("logs"), {sweep, trial},
                   {QCommandLineOption({QStringLiteral("f"), QStringLiteral("follow")},
                                       QStringLiteral("keep printing while the trial runs"))},
                   QStringLiteral("a trial's output and errors"), sweepLogs),
        parsedVerb(QStringLiteral("supervise"), {QStringLiteral("BATCH")}, {},
                   QStringLiteral("(internal) the local executor's detached runner"), sweepSupervise),
    };
}

}  // namespace orrery::cli
