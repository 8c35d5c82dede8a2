// SPDX-License-Identifier: GPL-3.0-or-later
//
// Planning a submission (docs/sweeps.md): a spec file read into a SubmitPlan, the trials it
// starts with and where they go, and how they are shown before anything is submitted — the one
// place `orrery sweep plan`, `sweep submit --dry-run` and the GUI's launcher take them from. The
// runner (sweeprunner.h) submits the same plan. The cluster's side of a preview, the sbatch
// script, is remote's (remote/slurmexecutor.h: previewSbatch).
//
// Pure but for reading the files it is given and (checkPlanWithTrainer) running the local
// trainer; no store, no executor.
#pragma once

#include "orrery/core/executor.h"
#include "orrery/core/sweepspec.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace orrery::core {

struct SubmitPlan {
    SweepSpec spec;
    QByteArray specYaml;  // the file as written (stored with the sweep)
    QByteArray baseConfig;  // the text of spec.trainerConfig (empty: the trainer's defaults)
};

// The trials a submission starts with and where they go, without touching anything.
struct PlannedTrial {
    int index = 0;
    TrialParams params;
    QByteArray config;  // the resolved trial.yaml
};
// Grid and random: every trial; bayes: the first max_concurrent suggestions. Throws
// std::runtime_error (naming the base file and line) when the base config is not a YAML mapping.
QList<PlannedTrial> planTrials(const SubmitPlan &plan);

// A spec file read for submission: parsed and validated against `schema`, its text and its base
// config read, and its initial trials planned. Exactly one of plan / the three errors is set.
struct PlanLoad {
    std::optional<SubmitPlan> plan;
    QList<PlannedTrial> trials;  // planTrials(*plan)
    QList<SpecError> specErrors;  // the spec does not parse or validate (every problem, in file order)
    QString configError;  // the base config is not a YAML mapping (names its file and line)
    QString readError;  // the spec or its base config cannot be read ("FILE: why")
};
// `count` > 0: W&B's `--count N` (`wandb agent --count`), at most N trials (withRunCap: the
// stored spec gets run_cap N, or keeps a smaller one).
PlanLoad loadSubmitPlan(const QString &file, const TrainerSchema &schema, int count = 0);
// The same for a spec's text that is (or will be saved) at `file` (the GUI's launcher: what is
// typed, validated as it is typed). A relative base config is relative to `file`'s directory.
PlanLoad loadSubmitPlanText(const QByteArray &yaml, const QString &file, const TrainerSchema &schema,
                            int count = 0);

// The trainer's own cross-key checks (checkTrialConfigs) on the configs of the first
// kTrainerChecked trials: one problem per refused trial, at the line of the spec's parameter the
// trainer's message names ("trial 3: the trainer refuses its config: model.channels must be a
// multiple of 8 ..." at `model.channels:`; line 0 when it names none), so `sweep plan`, submit and
// the launcher's live check show it where the spec says it. Empty when the trainer accepts them
// all, for a command sweep, and when there is no local trainer (`trainer` empty: an installation
// that only submits to clusters; the schema's checks still ran, and the trainer checks the rest
// when the trial starts).
constexpr qsizetype kTrainerChecked = 32;  // each check loads LibTorch (about 0.5 s)
QList<SpecError> checkPlanWithTrainer(const QString &trainer, const SubmitPlan &plan,
                                      const QList<PlannedTrial> &trials);
// The same in two halves, for a caller that runs the trainer itself (the launcher: off the UI
// thread, remembering verdicts of configs it has seen): the configs to check, in trial order
// (none for a command sweep), and the problems their verdicts (checkTrialConfigs: "" = accepted,
// one per config) make.
QList<QByteArray> configsForTrainerCheck(const SubmitPlan &plan, const QList<PlannedTrial> &trials);
QList<SpecError> trainerRefusals(const SubmitPlan &plan, const QList<PlannedTrial> &trials,
                                 const QStringList &verdicts);

// --- where the trials go -------------------------------------------------------------------

// A sweep's directory name: its name (bytes that cannot be in a path component, '%' and '\\'
// replaced) and a UTC timestamp, so resubmitting a spec never reuses a directory.
QString sweepDirectoryName(const QString &sweepName, const QDateTime &when);
// A sweep's directory under an executor's root: <root>/<experiment>/<dirName>, the experiment
// made a path component as the name is above.
QString sweepDirectory(const QString &root, const QString &experiment, const QString &dirName);
// One attempt of a trial as an executor takes it: its run dir and trial.yaml, and for a sweep of
// its own command the command rendered for this trial and attempt (renderCommand) and the run
// dir's other files (TaskLaunch::files: the config-file sweep's config from `baseConfig`, the
// plan's baseConfig; ${args_json_file}'s args.json).
TaskLaunch taskLaunch(const SweepSpec &spec, int index, int attempt, const QString &runDir,
                      const TrialParams &params, const QByteArray &config, const QByteArray &baseConfig = {});
// A config-file sweep's config for one trial: `baseConfig` (the text of spec.configFile's base)
// with the params set (configfile.h). Throws std::runtime_error naming the file and the key when
// it cannot be edited (the spec's check found that first, for the values it saw).
QByteArray trialConfigFile(const SweepSpec &spec, const QByteArray &baseConfig, const TrialParams &params);
// The batch a submission launches first: every planned trial, trial i in <sweepDir>/<i>.
LaunchBatch firstBatch(const SubmitPlan &plan, const QList<PlannedTrial> &trials, const QString &sweepDir);

// --- how a plan is shown -------------------------------------------------------------------

// What submitting the plan to `executor` would launch first (its describe() of firstBatch under
// a new sweep directory): the local command lines, or the sbatch script. Touches nothing.
QByteArray describeFirstBatch(Executor &executor, const SubmitPlan &plan, const QList<PlannedTrial> &trials);

struct PlanPreview {
    // A few lines, each ending in '\n': name, experiment, method and how many trials, metric,
    // base config, the constant parameters ("fixed: seed=7"), and for bayes how TPE goes on.
    QString summary;
    QStringList columns;  // "trial", then the swept keys (the parameters that are not constant)
    QList<QStringList> rows;  // per trial: its index, then its swept values (6 significant digits)
    // A command sweep's: per trial, its command as a shell would show it (displayCommand), the run
    // dir under "<sweep dir>" (named at submission).
    QStringList commands;
};
PlanPreview previewPlan(const SubmitPlan &plan, const QList<PlannedTrial> &trials);

// The plan as `sweep plan --json` prints it: name, experiment, method, run_cap, max_concurrent,
// trainer_config, metric {name, goal} when set, and trials [{index, params}] with typed values.
QJsonObject planJson(const SubmitPlan &plan, const QList<PlannedTrial> &trials);
// A trial's parameters as a JSON object, typed (what Trial::params stores).
QJsonObject paramsJson(const TrialParams &params);

}  // namespace orrery::core
