// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweep_commands.h"

#include "commands.h"
#include "output.h"
#include "sweep_follow.h"

#include "orrery/core/paths.h"
#include "orrery/core/sweepsearch.h"
#include "orrery/core/sweepspec.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/sbatch.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace orrery::cli {

const char *const kSweepUsage =
    "usage: orrery sweep <verb> ...\n"
    "  plan FILE [--cluster NAME] [--json]\n"
    "         parse FILE, validate every parameter against `orrery-train --print-schema`, and\n"
    "         print the trials (bayes: the first max_concurrent suggestions); with --cluster,\n"
    "         also the sbatch script the cluster would get. Nothing is submitted.\n"
    "  submit FILE [--cluster NAME] [--dry-run] [--watch] [--json]\n"
    "         submit the sweep (this machine by default, else one job array on the cluster) and\n"
    "         return at once; --dry-run prints the trials and the sbatch script / command lines\n"
    "         instead; --watch follows it to the end\n"
    "  list [--json]                  every sweep: state, trials done, best value\n"
    "  status SWEEP [--json]          each trial: params, state, step, latest and best metric\n"
    "  watch SWEEP [--pace FAST,SLOW] follow live: ingest metrics, retry, stop early, suggest;\n"
    "                                 Ctrl-C detaches (the trials go on); a tick every FAST s\n"
    "                                 while things change, slowing to SLOW s (default 1,15)\n"
    "  cancel SWEEP                   cancel every trial still queued or running\n"
    "  best SWEEP [--json]            the best trial: value, params, run dir, sample video\n"
    "  logs SWEEP TRIAL [-f]          the trial's standard output and error (-f: follow)\n"
    "SWEEP is an id or a name (the newest of that name). Spec errors are printed as\n"
    "FILE:LINE: message (exit status 2). See docs/sweeps.md.\n";

namespace {

using namespace orrery::core;

int usage(const QString &problem)
{
    err(QStringLiteral("orrery sweep: %1\n").arg(problem) + QString::fromUtf8(kSweepUsage));
    return kUsage;
}

QJsonValue jsonValue(const QVariant &v)
{
    switch (v.typeId()) {
    case QMetaType::LongLong:
        return v.toLongLong();
    case QMetaType::Double:
        return v.toDouble();
    case QMetaType::Bool:
        return v.toBool();
    default:
        return v.toString();
    }
}

// Table cells: six significant digits are enough to tell trials apart (trial.yaml and --json
// carry the exact values).
QString cell(const QVariant &v)
{
    return v.typeId() == QMetaType::Double ? QString::number(v.toDouble(), 'g', 6) : formatParamValue(v);
}

// The parameters that differ between trials are the table's columns; the rest are "fixed".
QStringList sweptKeys(const SweepSpec &spec)
{
    QStringList keys;
    for (const ParamSpec &p : spec.parameters)
        if (p.distribution != Distribution::Constant)
            keys << p.key;
    return keys;
}

QString summary(const SweepSpec &spec, const QList<TrialParams> &trials)
{
    QString s = QStringLiteral("sweep %1 (experiment %2): method %3, ")
                    .arg(spec.name, spec.experiment, toString(spec.method));
    if (spec.method == SearchMethod::Grid)
        s += QStringLiteral("%1 of %2 combinations").arg(trials.size()).arg(gridSize(spec.parameters));
    else
        s += QStringLiteral("run_cap %1").arg(spec.runCap);
    s += QStringLiteral(", max_concurrent %1, retries %2\n").arg(spec.maxConcurrent).arg(spec.retries);
    if (!spec.metricName.isEmpty())
        s += QStringLiteral("metric: %1 (%2)\n").arg(spec.metricName, toString(spec.goal));
    s += QStringLiteral("base config: %1\n")
             .arg(spec.trainerConfig.isEmpty() ? QStringLiteral("(the trainer's defaults)")
                                               : spec.trainerConfig);
    QStringList fixed;
    for (const ParamSpec &p : spec.parameters)
        if (p.distribution == Distribution::Constant)
            fixed << QStringLiteral("%1=%2").arg(p.key, formatParamValue(p.values.value(0)));
    if (!fixed.isEmpty())
        s += QStringLiteral("fixed: %1\n").arg(fixed.join(QStringLiteral(", ")));
    if (spec.method == SearchMethod::Bayes)
        s += QStringLiteral("bayes (TPE): the first suggestions are random; TPE proposes each next trial "
                            "from the finished ones\n");
    return s;
}

// The trainer's own cross-key checks on the resolved configs of (at most kChecked of) the trials.
int checkWithTrainer(const SweepSpec &spec, const QList<TrialParams> &trials)
{
    // Each check loads LibTorch (about 0.5 s); the first trials of a large grid cover its values.
    constexpr qsizetype kChecked = 32;
    QByteArray base;
    if (!spec.trainerConfig.isEmpty()) {
        QFile f(spec.trainerConfig);
        if (!f.open(QIODevice::ReadOnly)) {
            err(QStringLiteral("%1: cannot read the base config: %2\n")
                    .arg(spec.trainerConfig, f.errorString()));
            return kFailed;
        }
        base = f.readAll();
    }
    QList<QByteArray> configs;
    try {
        for (qsizetype i = 0; i < std::min(kChecked, trials.size()); ++i)
            configs << renderTrialConfig(base, spec.trainerConfig, trials[i]);
    } catch (const std::runtime_error &e) {
        err(QString::fromUtf8(e.what()) + QLatin1Char('\n'));
        return kUsage;
    }
    const QStringList verdicts = checkTrialConfigs(trainerExecutable(), configs);
    int code = kOk;
    for (qsizetype i = 0; i < verdicts.size(); ++i) {
        if (verdicts[i].isEmpty())
            continue;
        err(QStringLiteral("%1: trial %2: the trainer refuses its config: %3\n")
                .arg(spec.file)
                .arg(i)
                .arg(verdicts[i]));
        code = kUsage;
    }
    return code;
}

}  // namespace

int runSweep(const Context &ctx, const QStringList &argsIn)
{
    QStringList args = argsIn;
    if (args.isEmpty())
        return usage(QStringLiteral("a verb is needed"));
    const QString verb = args.takeFirst();
    if (verb == QLatin1String("help") || verb == QLatin1String("--help")) {
        out(QString::fromUtf8(kSweepUsage));
        return kOk;
    }
    static const QStringList kFollowVerbs{QStringLiteral("list"),     QStringLiteral("status"),
                                          QStringLiteral("watch"),    QStringLiteral("cancel"),
                                          QStringLiteral("best"),     QStringLiteral("logs"),
                                          QStringLiteral("supervise")};
    if (kFollowVerbs.contains(verb))
        return runSweepFollow(ctx, verb, args);
    if (verb != QLatin1String("plan") && verb != QLatin1String("submit"))
        return usage(QStringLiteral("unknown verb '%1'").arg(verb));
    const bool submit = verb == QLatin1String("submit");

    QString file, cluster;
    bool json = false, dryRun = false, watch = false;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &a = args[i];
        if (submit && a == QLatin1String("--dry-run")) {
            dryRun = true;
        } else if (submit && a == QLatin1String("--watch")) {
            watch = true;
        } else if (a == QLatin1String("--json")) {
            json = true;
        } else if (a == QLatin1String("--cluster")) {
            if (i + 1 >= args.size())
                return usage(QStringLiteral("--cluster needs a name"));
            cluster = args[++i];
        } else if (a.startsWith(QLatin1String("--cluster="))) {
            cluster = a.mid(10);
        } else if (a.startsWith(QLatin1Char('-')) && a != QLatin1String("-")) {
            return usage(QStringLiteral("unknown option '%1'").arg(a));
        } else if (file.isEmpty()) {
            file = a;
        } else {
            return usage(QStringLiteral("one spec file at a time"));
        }
    }
    if (file.isEmpty())
        return usage(QStringLiteral("%1 needs a FILE").arg(verb));

    QString problem;
    const auto schema = TrainerSchema::fromTrainer(trainerExecutable(), &problem);
    if (!schema) {
        err(QStringLiteral("orrery sweep %1: %2\n").arg(verb, problem));
        return kFailed;
    }
    const SpecParse parsed = loadSweepSpec(file, *schema);
    if (!parsed.spec) {
        for (const SpecError &e : parsed.errors)
            err(e.toString() + QLatin1Char('\n'));
        return kUsage;
    }
    const SweepSpec &spec = *parsed.spec;
    const QList<TrialParams> trials = initialTrials(spec);
    if (const int code = checkWithTrainer(spec, trials); code != kOk)
        return code;
    if (submit) {
        SubmitArgs s;
        s.plan.spec = spec;
        QFile specFile(file);
        if (!specFile.open(QIODevice::ReadOnly)) {
            err(QStringLiteral("%1: %2\n").arg(file, specFile.errorString()));
            return kFailed;
        }
        s.plan.specYaml = specFile.readAll();
        if (!spec.trainerConfig.isEmpty()) {
            QFile base(spec.trainerConfig);
            if (!base.open(QIODevice::ReadOnly)) {
                err(QStringLiteral("%1: cannot read the base config: %2\n")
                        .arg(spec.trainerConfig, base.errorString()));
                return kFailed;
            }
            s.plan.baseConfig = base.readAll();
        }
        s.cluster = cluster;
        s.dryRun = dryRun;
        s.watch = watch;
        s.json = json;
        if (dryRun && !json)
            out(summary(spec, trials) + QLatin1Char('\n'));
        return runSweepSubmit(ctx, s);
    }

    QByteArray script;
    if (!cluster.isEmpty()) {
        try {
            const auto profile = remote::ProfileStore().find(cluster);
            if (!profile) {
                err(QStringLiteral("orrery sweep plan: no cluster profile '%1' (`orrery cluster list`)\n")
                        .arg(cluster));
                return kFailed;
            }
            remote::SbatchJob job;
            job.jobName = spec.name;
            // The sweep's id is given at submission; the plan shows where it goes.
            job.sweepDir = QStringLiteral("%1/%2/<sweep-id>").arg(profile->remoteRoot, spec.experiment);
            for (qsizetype i = 0; i < trials.size(); ++i)
                job.trialDirs << QStringLiteral("%1/%2").arg(job.sweepDir).arg(i);
            job.maxConcurrent = spec.maxConcurrent;
            job.resources = spec.resources;
            job.defaultPartition = profile->partition;
            job.defaultAccount = profile->account;
            job.setup = profile->setup;
            job.trainer = profile->trainerPath;
            script = remote::renderSbatch(remote::sbatchTemplateFor(configDirectory(), cluster), job);
        } catch (const remote::SbatchError &e) {
            err(QStringLiteral("%1: %2\n").arg(file, e.message()));
            return kUsage;
        } catch (const remote::ProfileError &e) {
            err(QStringLiteral("orrery sweep plan: %1\n").arg(e.message()));
            return kFailed;
        }
    }

    const QStringList keys = sweptKeys(spec);
    if (json) {
        QJsonArray rows;
        for (qsizetype i = 0; i < trials.size(); ++i) {
            QJsonObject params;
            for (const auto &[k, v] : trials[i])
                params.insert(k, jsonValue(v));
            rows.append(QJsonObject{{QStringLiteral("index"), int(i)}, {QStringLiteral("params"), params}});
        }
        QJsonObject o{{QStringLiteral("name"), spec.name},
                      {QStringLiteral("experiment"), spec.experiment},
                      {QStringLiteral("method"), toString(spec.method)},
                      {QStringLiteral("run_cap"), spec.runCap},
                      {QStringLiteral("max_concurrent"), spec.maxConcurrent},
                      {QStringLiteral("trainer_config"), spec.trainerConfig},
                      {QStringLiteral("trials"), rows}};
        if (!spec.metricName.isEmpty())
            o.insert(QStringLiteral("metric"),
                     QJsonObject{{QStringLiteral("name"), spec.metricName},
                                 {QStringLiteral("goal"), toString(spec.goal)}});
        if (!cluster.isEmpty())
            o.insert(QStringLiteral("sbatch"), QString::fromUtf8(script));
        out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
        return kOk;
    }
    QList<QStringList> rows;
    for (qsizetype i = 0; i < trials.size(); ++i) {
        QStringList row{QString::number(i)};
        for (const QString &k : keys)
            for (const auto &[key, v] : trials[i])
                if (key == k)
                    row << cell(v);
        rows.append(row);
    }
    out(summary(spec, trials) + QLatin1Char('\n') +
        formatTable(QStringList{QStringLiteral("trial")} + keys, rows));
    if (!cluster.isEmpty())
        out(QStringLiteral("\n# sbatch script for cluster %1:\n").arg(cluster) + QString::fromUtf8(script));
    return kOk;
}

}  // namespace orrery::cli
