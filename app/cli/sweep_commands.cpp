// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweep_commands.h"

#include "commands.h"
#include "output.h"
#include "sweep_follow.h"

#include "orrery/core/paths.h"
#include "orrery/core/sweepplan.h"
#include "orrery/core/usage.h"
#include "orrery/remote/deploy.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/sbatch.h"
#include "orrery/remote/slurmexecutor.h"

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
    "         return at once; --dry-run prints the worst-case GPU-hours (trials x time limit x\n"
    "         GPUs, with the cost at the cluster's price), the trials and the sbatch script /\n"
    "         command lines instead; --watch follows it to the end\n"
    "  list [--json]                  every sweep: state, trials done, GPU-hours, best value\n"
    "  status SWEEP [--json]          each trial: params, state, step, GPU-hours, latest and\n"
    "                                 best metric; the sweep's GPU-/CPU-hours and cost\n"
    "  watch SWEEP [--pace FAST,SLOW] follow live: ingest metrics, retry, stop early, suggest;\n"
    "                                 Ctrl-C detaches (the trials go on); a tick every FAST s\n"
    "                                 while things change, slowing to SLOW s (default 1,15)\n"
    "  cancel SWEEP                   cancel every trial still queued or running\n"
    "  stop SWEEP TRIAL [--reason TEXT]\n"
    "                                 end one queued or running trial now, as early stopping\n"
    "                                 would: it checkpoints and ends stopped; the sweep goes on\n"
    "  retry SWEEP TRIAL              run a failed, stopped or cancelled trial again: a new\n"
    "                                 attempt resuming from its checkpoint (an ended sweep runs\n"
    "                                 again; `retries` counts afresh from it)\n"
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

// The placeholder for the sweep's directory name in `plan --cluster`: submission names it
// (sweepDirectoryName: the sweep's name and the time), and a plan's output should not change
// from one second to the next.
const QString kSweepDirPlaceholder = QStringLiteral("<sweep-id>");

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
    static const QStringList kFollowVerbs{
        QStringLiteral("list"),   QStringLiteral("status"), QStringLiteral("watch"),
        QStringLiteral("cancel"), QStringLiteral("best"),   QStringLiteral("logs"),
        QStringLiteral("stop"),   QStringLiteral("retry"),  QStringLiteral("supervise")};
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
    const auto schema = TrainerSchema::load(&problem);
    if (!schema) {
        err(QStringLiteral("orrery sweep %1: %2\n").arg(verb, problem));
        return kFailed;
    }
    const PlanLoad load = loadSubmitPlan(file, *schema);
    for (const SpecError &e : load.specErrors)
        err(e.toString() + QLatin1Char('\n'));
    if (!load.specErrors.isEmpty())
        return kUsage;
    if (!load.configError.isEmpty()) {
        err(load.configError + QLatin1Char('\n'));
        return kUsage;
    }
    if (!load.readError.isEmpty()) {
        err(load.readError + QLatin1Char('\n'));
        return kFailed;
    }
    const SubmitPlan &plan = *load.plan;
    if (const QStringList refusals = checkPlanWithTrainer(trainerExecutable(), plan, load.trials);
        !refusals.isEmpty()) {
        for (const QString &r : refusals)
            err(r + QLatin1Char('\n'));
        return kUsage;
    }
    const PlanPreview preview = previewPlan(plan, load.trials);
    if (submit) {
        SubmitArgs s;
        s.plan = plan;
        s.cluster = cluster;
        s.dryRun = dryRun;
        s.watch = watch;
        s.json = json;
        if (dryRun && !json) {
            // The worst case before anything is spent (or connected to): every trial to its
            // time limit, and what the budget does.
            const int planned =
                plan.spec.method == SearchMethod::Grid ? int(load.trials.size()) : plan.spec.runCap;
            out(preview.summary + QLatin1Char('\n') +
                describeWorstCase(worstCase(plan.spec, planned, int(load.trials.size())),
                                  remote::clusterPrice(cluster)) +
                QLatin1Char('\n'));
        }
        return runSweepSubmit(ctx, s);
    }

    QByteArray script;
    if (!cluster.isEmpty()) {
        try {
            auto profile = remote::ProfileStore().find(cluster);
            if (!profile) {
                err(QStringLiteral("orrery sweep plan: no cluster profile '%1' (`orrery cluster list`)\n")
                        .arg(cluster));
                return kFailed;
            }
            profile->trainerPath = remote::sweepTrainerPath(*profile);  // the deployed one, if none named
            script =
                remote::previewSbatch(*profile, configDirectory(), plan, load.trials, kSweepDirPlaceholder);
        } catch (const remote::SbatchError &e) {
            err(QStringLiteral("%1: %2\n").arg(file, e.message()));
            return kUsage;
        } catch (const remote::ProfileError &e) {
            err(QStringLiteral("orrery sweep plan: %1\n").arg(e.message()));
            return kFailed;
        }
    }

    if (json) {
        QJsonObject o = planJson(plan, load.trials);
        if (!cluster.isEmpty())
            o.insert(QStringLiteral("sbatch"), QString::fromUtf8(script));
        out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
        return kOk;
    }
    out(preview.summary + QLatin1Char('\n') + formatTable(preview.columns, preview.rows));
    if (!preview.commands.isEmpty()) {
        out(QStringLiteral("\n# the command of each trial (<sweep dir> is named at submission; no shell "
                           "reads it: each word is one argument)\n"));
        for (qsizetype i = 0; i < preview.commands.size(); ++i)
            out(QStringLiteral("%1: %2\n").arg(load.trials[i].index).arg(preview.commands[i]));
    }
    if (!cluster.isEmpty())
        out(QStringLiteral("\n# sbatch script for cluster %1:\n").arg(cluster) + QString::fromUtf8(script));
    return kOk;
}

}  // namespace orrery::cli
