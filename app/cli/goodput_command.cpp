// SPDX-License-Identifier: GPL-3.0-or-later
#include "goodput_command.h"

#include "output.h"
#include "runs_commands.h"

#include "orrery/core/goodput.h"
#include "orrery/core/states.h"
#include "orrery/core/store.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace orrery::cli {

using namespace orrery::core;

namespace {

QString secondsText(double s)
{
    return QString::number(s, 'f', 1);
}

QString percentText(double part, double whole)
{
    return whole > 0 ? QString::number(100.0 * part / whole, 'f', 1) + QLatin1Char('%') : QStringLiteral("-");
}

QJsonObject partsJson(const GoodputParts &g)
{
    return QJsonObject{{QStringLiteral("wall_s"), g.wallS},
                       {QStringLiteral("queue_s"), g.queueS},
                       {QStringLiteral("startup_s"), g.startupS},
                       {QStringLiteral("training_s"), g.trainingS},
                       {QStringLiteral("checkpoint_s"), g.checkpointS},
                       {QStringLiteral("eval_s"), g.evalS},
                       {QStringLiteral("sample_s"), g.sampleS},
                       {QStringLiteral("lost_s"), g.lostS},
                       {QStringLiteral("hung_s"), g.hungS},
                       {QStringLiteral("rest_s"), g.restS},
                       {QStringLiteral("overrun_s"), g.overrunS},
                       {QStringLiteral("lost_steps"), g.lostSteps},
                       {QStringLiteral("goodput"), g.goodput()}};
}

QJsonObject runJson(const RunGoodput &r)
{
    QJsonArray attempts;
    for (const AttemptGoodput &a : r.attempts) {
        QJsonObject o = partsJson(a.parts);
        o.insert(QStringLiteral("attempt"), a.attempt);
        o.insert(QStringLiteral("state"), a.state);
        o.insert(QStringLiteral("processes"), a.processes);
        o.insert(QStringLiteral("resume_step"), a.resumeStep);
        o.insert(QStringLiteral("last_step"), a.lastStep);
        o.insert(QStringLiteral("trained_steps"), a.trainedSteps);
        attempts.append(o);
    }
    QJsonObject o = partsJson(r.total);
    o.insert(QStringLiteral("run"), r.run);
    o.insert(QStringLiteral("trial"), r.trialIndex >= 0 ? QJsonValue(r.trialIndex) : QJsonValue());
    o.insert(QStringLiteral("attempts"), attempts);
    return o;
}

// The breakdown of one total: a row per part, its seconds, hours and share of the wall.
QString partsTable(const GoodputParts &g)
{
    QList<GoodputPart> parts = labelledParts(g);
    parts.append({QStringLiteral("wall"), g.wallS});
    QList<QStringList> rows;
    for (const GoodputPart &part : parts)
        rows.push_back({part.label, secondsText(part.seconds), QString::number(part.seconds / 3600.0, 'f', 3),
                        percentText(part.seconds, g.wallS)});
    return formatTable(
        {QStringLiteral("PART"), QStringLiteral("SECONDS"), QStringLiteral("HOURS"), QStringLiteral("SHARE")},
        rows);
}

QString headline(const QString &what, const GoodputParts &g)
{
    QString s =
        QStringLiteral("%1: goodput %2 (%3 s of training in %4 s of wall time)\n")
            .arg(what, percentText(g.trainingS, g.wallS), secondsText(g.trainingS), secondsText(g.wallS));
    if (g.overrunS > 0)
        s += QStringLiteral("note: the measured parts exceed the wall time by %1 s (the trainer's clock and "
                            "this machine's disagree?); rest is shown as 0\n")
                 .arg(secondsText(g.overrunS));
    return s;
}

QString attemptsTable(const RunGoodput &r)
{
    QList<QStringList> rows;
    for (const AttemptGoodput &a : r.attempts) {
        const GoodputParts &g = a.parts;
        rows.push_back({a.attempt >= 0 ? QString::number(a.attempt) : QStringLiteral("-"), a.state,
                        secondsText(g.wallS), secondsText(g.queueS), secondsText(g.startupS),
                        secondsText(g.trainingS), secondsText(g.checkpointS),
                        secondsText(g.evalS + g.sampleS), secondsText(g.lostS), QString::number(g.lostSteps),
                        secondsText(g.hungS), secondsText(g.restS),
                        a.processes ? QStringLiteral("%1-%2").arg(a.resumeStep).arg(a.lastStep) : QString()});
    }
    return formatTable({QStringLiteral("ATTEMPT"), QStringLiteral("STATE"), QStringLiteral("WALL"),
                        QStringLiteral("QUEUE"), QStringLiteral("START-UP"), QStringLiteral("TRAINING"),
                        QStringLiteral("CKPT"), QStringLiteral("EVAL+SAMPLES"), QStringLiteral("LOST"),
                        QStringLiteral("LOST STEPS"), QStringLiteral("HUNG"), QStringLiteral("REST"),
                        QStringLiteral("STEPS")},
                       rows);
}

struct GoodputOptions {
    QCommandLineOption sweep{QStringLiteral("sweep"),
                             QStringLiteral("every run of this sweep (instead of a RUN)"),
                             QStringLiteral("SWEEP")};
    QCommandLineOption json{QStringLiteral("json"), QStringLiteral("one JSON document for scripts")};

    QList<QCommandLineOption> options() const { return {sweep, json}; }
};

// `orrery runs goodput RUN | --sweep SWEEP [--json]`.
int runsGoodput(const Context &ctx, const QCommandLineParser &p)
{
    const GoodputOptions opt;
    const QCommandLineOption &json = opt.json, &sweepOption = opt.sweep;
    const bool bySweep = p.isSet(sweepOption);
    if (p.positionalArguments().size() != (bySweep ? 0 : 1))
        return runsUsageError(QStringLiteral("goodput"),
                              bySweep ? QStringLiteral("a RUN or --sweep SWEEP, not both")
                                      : QStringLiteral("a RUN or --sweep SWEEP is needed"));
    auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);

    if (!bySweep) {
        const QString ref = p.positionalArguments().first();
        const auto run = store->findRun(ref);
        if (!run) {
            err(QStringLiteral("orrery: no run '%1' (use an id, a uuid or its prefix, or a name; see `orrery "
                               "runs list`)\n")
                    .arg(ref));
            return kFailed;
        }
        const RunGoodput g = runGoodput(*store, run->id);
        if (p.isSet(json)) {
            printJson(runJson(g));
            return kOk;
        }
        QString text = headline(QStringLiteral("run %1 (%2)").arg(run->id).arg(run->name), g.total) +
            QLatin1Char('\n') + partsTable(g.total);
        if (!g.attempts.isEmpty())
            text += QStringLiteral("\nattempts\n") + attemptsTable(g);
        if (g.attempts.isEmpty())
            text += QStringLiteral("\nno phase timings: the run has no `phases` events (an older "
                                   "orrery-train?) and no sweep attempts\n");
        out(text);
        return kOk;
    }

    const auto sweep = store->findSweep(p.value(sweepOption));
    if (!sweep) {
        err(QStringLiteral("orrery: no sweep '%1'\n").arg(p.value(sweepOption)));
        return kFailed;
    }
    const SweepGoodput g = sweepGoodput(*store, sweep->id);
    if (p.isSet(json)) {
        QJsonObject o = partsJson(g.total);
        o.insert(QStringLiteral("sweep"), sweep->id);
        o.insert(QStringLiteral("name"), sweep->name);
        QJsonArray runs;
        for (const RunGoodput &r : g.runs)
            runs.append(runJson(r));
        o.insert(QStringLiteral("runs"), runs);
        printJson(o);
        return kOk;
    }
    QList<QStringList> rows;
    for (const RunGoodput &r : g.runs) {
        const GoodputParts &t = r.total;
        rows.push_back(
            {QString::number(r.trialIndex), QString::number(r.run), QString::number(r.attempts.size()),
             r.attempts.isEmpty() ? QString() : r.attempts.constLast().state, secondsText(t.wallS),
             secondsText(t.queueS), secondsText(t.startupS), secondsText(t.trainingS), secondsText(t.lostS),
             QString::number(t.lostSteps), percentText(t.trainingS, t.wallS)});
    }
    out(headline(QStringLiteral("sweep %1 (%2)").arg(sweep->id).arg(sweep->name), g.total) +
        QLatin1Char('\n') + partsTable(g.total) + QStringLiteral("\ntrials\n") +
        formatTable({QStringLiteral("TRIAL"), QStringLiteral("RUN"), QStringLiteral("ATTEMPTS"),
                     QStringLiteral("STATE"), QStringLiteral("WALL"), QStringLiteral("QUEUE"),
                     QStringLiteral("START-UP"), QStringLiteral("TRAINING"), QStringLiteral("LOST"),
                     QStringLiteral("LOST STEPS"), QStringLiteral("GOODPUT")},
                    rows));
    return kOk;
}

}  // namespace

VerbInfo goodputVerb()
{
    return parsedVerb(QStringLiteral("goodput"), {QStringLiteral("[RUN]")}, GoodputOptions().options(),
                      QStringLiteral("where the wall time went: queue, start-up, training, lost"),
                      runsGoodput);
}

}  // namespace orrery::cli
