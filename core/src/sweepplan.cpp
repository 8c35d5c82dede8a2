// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweepplan.h"

#include "orrery/core/configfile.h"
#include "orrery/core/pyvalue.h"
#include "orrery/core/sweepsearch.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <stdexcept>

namespace orrery::core {

namespace {

// A path component from a name: what cannot be in one (or would be mangled by Slurm's '%'
// expansion or sbatch's backslash escapes) becomes '_'; everything else, quotes and spaces
// included, stays (the executors quote it).
QString pathComponent(const QString &name)
{
    QString s;
    for (const QChar c : name)
        s += (c == QLatin1Char('/') || c == QLatin1Char('\\') || c == QLatin1Char('%') ||
              c.category() == QChar::Other_Control)
            ? QLatin1Char('_')
            : c;
    if (s.startsWith(QLatin1Char('.')) || s.startsWith(QLatin1Char('-')))
        s[0] = QLatin1Char('_');
    return s.isEmpty() ? QStringLiteral("_") : s;
}

// Table cells: six significant digits are enough to tell trials apart (trial.yaml and --json
// carry the exact values).
QString cell(const QVariant &v)
{
    return v.typeId() == QMetaType::Double ? QString::number(v.toDouble(), 'g', 6) : formatParamValue(v);
}

QString summary(const SweepSpec &spec, qsizetype trials)
{
    QString s = QStringLiteral("sweep %1 (experiment %2): method %3, ")
                    .arg(spec.name, spec.experiment, toString(spec.method));
    if (spec.method == SearchMethod::Grid)
        s += QStringLiteral("%1 of %2 combinations").arg(trials).arg(gridSize(spec.parameters));
    else
        s += QStringLiteral("run_cap %1").arg(spec.runCap);
    s += QStringLiteral(", max_concurrent %1, retries %2\n").arg(spec.maxConcurrent).arg(spec.retries);
    if (!spec.metricName.isEmpty())
        s += QStringLiteral("metric: %1 (%2)\n").arg(spec.metricName, toString(spec.goal));
    if (spec.configFile)
        s += QStringLiteral("config file: %1 (each trial's copy in its run dir, {{config}})\n")
                 .arg(spec.configFile->base);
    else if (!spec.command)  // a command's program has its own defaults
        s += QStringLiteral("base config: %1\n")
                 .arg(spec.trainerConfig.isEmpty() ? QStringLiteral("(the trainer's defaults)")
                                                   : spec.trainerConfig);
    if (spec.metricTarget)
        s += QStringLiteral("target: %1 %2 (then no new trial starts)\n")
                 .arg(spec.goal == Goal::Maximize ? QStringLiteral(">=") : QStringLiteral("<="),
                      formatParamValue(*spec.metricTarget));
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

}  // namespace

QList<PlannedTrial> planTrials(const SubmitPlan &plan)
{
    QList<PlannedTrial> out;
    const QList<TrialParams> trials = initialTrials(plan.spec);
    for (qsizetype i = 0; i < trials.size(); ++i)
        out.append({int(i), trials[i], trialParamsFile(plan.spec, plan.baseConfig, trials[i])});
    return out;
}

PlanLoad loadSubmitPlan(const QString &file, const TrainerSchema &schema, int count)
{
    QFile specFile(file);
    if (!specFile.open(QIODevice::ReadOnly)) {
        PlanLoad load;
        load.specErrors.append(
            {file, 0, QStringLiteral("cannot read the file: %1").arg(specFile.errorString())});
        return load;
    }
    return loadSubmitPlanText(specFile.readAll(), file, schema, count);
}

PlanLoad loadSubmitPlanText(const QByteArray &written, const QString &file, const TrainerSchema &schema,
                            int count)
{
    PlanLoad load;
    // --count is W&B's agent flag: the text gets its run_cap, so the stored spec (which the
    // runner reads again on every tick) says what runs.
    QByteArray yaml = written;
    if (count > 0) {
        const auto capped = withRunCap(written, count);
        if (!capped) {
            load.specErrors.append({file, 0, capped.problem()});
            return load;
        }
        yaml = *capped;
    }
    SpecParse parsed = parseSweepSpecAt(yaml, file, schema);
    if (!parsed.spec) {
        load.specErrors = std::move(parsed.errors);
        return load;
    }
    SubmitPlan plan;
    plan.spec = std::move(*parsed.spec);
    plan.specYaml = yaml;
    if (!plan.spec.trainerConfig.isEmpty()) {
        QFile base(plan.spec.trainerConfig);
        if (!base.open(QIODevice::ReadOnly)) {
            load.readError = QStringLiteral("%1: cannot read the base config: %2")
                                 .arg(plan.spec.trainerConfig, base.errorString());
            return load;
        }
        plan.baseConfig = base.readAll();
    }
    // A config-file sweep's base travels as the plan's base config (stored with the sweep).
    if (const auto &cf = plan.spec.configFile) {
        QFile base(cf->base);
        if (!base.open(QIODevice::ReadOnly)) {
            load.readError =
                QStringLiteral("%1: cannot read the config file: %2").arg(cf->base, base.errorString());
            return load;
        }
        plan.baseConfig = base.readAll();
    }
    try {
        load.trials = planTrials(plan);
        for (const PlannedTrial &t : std::as_const(load.trials))
            trialConfigFile(plan.spec, plan.baseConfig, t.params);  // throws naming the key
    } catch (const std::runtime_error &e) {
        load.configError = QString::fromUtf8(e.what());
        return load;
    }
    load.plan = std::move(plan);
    return load;
}

QByteArray describeFirstBatch(Executor &executor, const SubmitPlan &plan, const QList<PlannedTrial> &trials)
{
    const QString sweepDir =
        sweepDirectory(executor.defaultRoot(), plan.spec.experiment,
                       sweepDirectoryName(plan.spec.name, QDateTime::currentDateTimeUtc()));
    return executor.describe(firstBatch(plan, trials, sweepDir));
}

QList<QByteArray> configsForTrainerCheck(const SubmitPlan &plan, const QList<PlannedTrial> &trials)
{
    QList<QByteArray> configs;
    if (plan.spec.command)  // a command's params are not the trainer's
        return configs;
    for (qsizetype i = 0; i < std::min(kTrainerChecked, trials.size()); ++i)
        configs << trials[i].config;
    return configs;
}

namespace {

// The line of the spec's parameter that a refusal names first ("model.channels must be ..."), so
// the user is taken to what to change; 0 when it names none of them (a rule of keys the spec
// leaves to the base config).
int lineOfNamedParam(const SweepSpec &spec, const QString &message)
{
    int line = 0;
    qsizetype first = -1;
    for (const ParamSpec &p : spec.parameters) {
        // A whole key: model.channels is not named by model.channels_extra.
        const QRegularExpression key(
            QStringLiteral("(?<![\\w.])%1(?![\\w.])").arg(QRegularExpression::escape(p.key)));
        const qsizetype at = message.indexOf(key);
        if (at >= 0 && (first < 0 || at < first)) {
            first = at;
            line = p.line;
        }
    }
    return line;
}

}  // namespace

QList<SpecError> trainerRefusals(const SubmitPlan &plan, const QList<PlannedTrial> &trials,
                                 const QStringList &verdicts)
{
    QList<SpecError> refusals;
    for (qsizetype i = 0; i < std::min(verdicts.size(), trials.size()); ++i)
        if (!verdicts[i].isEmpty())
            refusals.append({plan.spec.file, lineOfNamedParam(plan.spec, verdicts[i]),
                             QStringLiteral("trial %1: the trainer refuses its config: %2")
                                 .arg(trials[i].index)
                                 .arg(verdicts[i])});
    return refusals;
}

QList<SpecError> checkPlanWithTrainer(const QString &trainer, const SubmitPlan &plan,
                                      const QList<PlannedTrial> &trials)
{
    const QList<QByteArray> configs = configsForTrainerCheck(plan, trials);
    if (trainer.isEmpty() || configs.isEmpty())
        return {};
    return trainerRefusals(plan, trials, checkTrialConfigs(trainer, configs));
}

// --- where the trials go -------------------------------------------------------------------

QString sweepDirectoryName(const QString &sweepName, const QDateTime &when)
{
    return pathComponent(sweepName) + QLatin1Char('-') +
        when.toUTC().toString(QStringLiteral("yyyyMMdd-HHmmss"));
}

QString sweepDirectory(const QString &root, const QString &experiment, const QString &dirName)
{
    return QDir(QDir(root).filePath(pathComponent(experiment))).filePath(dirName);
}

TaskLaunch taskLaunch(const SweepSpec &spec, int index, int attempt, const QString &runDir,
                      const TrialParams &params, const QByteArray &config, const QByteArray &baseConfig)
{
    TaskLaunch t{runDir, config, {}, {}, attempt};
    if (!spec.command)
        return t;
    t.command = renderCommand(spec, params, {runDir, spec.name, spec.experiment, index, attempt});
    // What W&B's agent sets: wandb.init() reads the trial's params from this file into
    // wandb.config, nested as W&B nests them (the file and the variable go together: wandb.init
    // fails on a variable naming no file).
    t.files.append({QLatin1String(kWandbSweepParamsFile), wandbSweepParamsFile(spec, params)});
    t.command.env.append({QStringLiteral("WANDB_SWEEP_PARAM_PATH"),
                          QDir(runDir).filePath(QLatin1String(kWandbSweepParamsFile))});
    if (spec.command->argv.contains(QStringLiteral("${args_json_file}")))
        t.files.append({QStringLiteral("args.json"),
                        pythonJsonDumps(QVariant::fromValue(nestParams(spec, params, true))).toUtf8()});
    if (const auto &cf = spec.configFile)
        t.files.append({cf->fileName, trialConfigFile(spec, baseConfig, params)});
    return t;
}

QByteArray trialConfigFile(const SweepSpec &spec, const QByteArray &baseConfig, const TrialParams &params)
{
    if (!spec.configFile)
        return {};
    const ConfigEdit edit =
        setConfigValues(baseConfig, configFormatOf(spec.configFile->fileName).value_or(ConfigFormat::Yaml),
                        params, spec.configFile->allowNewKeys);
    if (!edit.ok())
        throw std::runtime_error(QStringLiteral("%1: parameter %2: %3")
                                     .arg(spec.configFile->base, edit.key, edit.error)
                                     .toStdString());
    return edit.text;
}

LaunchBatch firstBatch(const SubmitPlan &plan, const QList<PlannedTrial> &trials, const QString &sweepDir)
{
    LaunchBatch batch;
    batch.sweepName = plan.spec.name;
    batch.sweepDir = sweepDir;
    batch.batch = 0;
    batch.healthCheck = healthCheckArgs(plan.spec.healthCheck);
    batch.maxConcurrent = std::max(1, plan.spec.maxConcurrent);
    batch.resources = plan.spec.resources;
    for (const PlannedTrial &p : trials)
        batch.tasks.append(taskLaunch(plan.spec, p.index, 0,
                                      QDir(sweepDir).filePath(QString::number(p.index)), p.params, p.config,
                                      plan.baseConfig));
    return batch;
}

// --- how a plan is shown -------------------------------------------------------------------

PlanPreview previewPlan(const SubmitPlan &plan, const QList<PlannedTrial> &trials)
{
    PlanPreview preview;
    preview.summary = summary(plan.spec, trials.size());
    QStringList swept;
    for (const ParamSpec &p : plan.spec.parameters)
        if (p.distribution != Distribution::Constant)
            swept << p.key;
    preview.columns = QStringList{QStringLiteral("trial")} + swept;
    if (const auto &c = plan.spec.command) {
        const QString workdir = c->workdir.isEmpty()
            ? QStringLiteral("the spec's directory here, the home directory on a cluster")
            : c->workdir;
        preview.summary +=
            QStringLiteral("command: %1\nruns in: %2\n")
                .arg(displayCommand(c->argv),
                     c->code.snapshot
                         ? QStringLiteral(
                               "<run dir>/work, made from %1 as it is at submission (code.snapshot)")
                               .arg(workdir)
                         : workdir);
        preview.summary += commandIsDistributed(plan.spec)
            ? QStringLiteral(
                  "distributed: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, ... set for each process\n")
            : QStringLiteral(
                  "one process: no RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, ... (as python train.py)\n");
        for (const MetricRule &m : c->metrics)
            preview.summary +=
                QStringLiteral("metric from the output: %1 = group 1 of /%2/%3\n")
                    .arg(m.name, m.regex,
                         m.stepRegex.isEmpty() ? QString() : QStringLiteral(", step /%1/").arg(m.stepRegex));
        for (const PlannedTrial &t : trials)
            preview.commands << displayCommand(
                renderCommand(plan.spec, t.params,
                              {QStringLiteral("<sweep dir>/%1").arg(t.index), plan.spec.name,
                               plan.spec.experiment, t.index, 0})
                    .argv);
    }
    for (const PlannedTrial &t : trials) {
        QStringList row{QString::number(t.index)};
        for (const QString &k : swept)
            for (const auto &[key, v] : t.params)
                if (key == k)
                    row << cell(v);
        preview.rows.append(row);
    }
    return preview;
}

QJsonObject paramsJson(const TrialParams &params)
{
    QJsonObject o;
    for (const auto &[key, value] : params) {
        switch (value.typeId()) {
        case QMetaType::LongLong:
            o.insert(key, value.toLongLong());
            break;
        case QMetaType::Double:
            o.insert(key, value.toDouble());
            break;
        case QMetaType::Bool:
            o.insert(key, value.toBool());
            break;
        case QMetaType::QVariantList:  // a command's list value
            o.insert(key, QJsonValue::fromVariant(value));
            break;
        case QMetaType::Nullptr:  // a command's None
            o.insert(key, QJsonValue::Null);
            break;
        default:
            o.insert(key, value.toString());
        }
    }
    return o;
}

QJsonObject planJson(const SubmitPlan &plan, const QList<PlannedTrial> &trials)
{
    const SweepSpec &spec = plan.spec;
    QJsonArray rows;
    for (const PlannedTrial &t : trials) {
        QJsonObject row{{QStringLiteral("index"), t.index}, {QStringLiteral("params"), paramsJson(t.params)}};
        if (spec.command)
            row.insert(
                QStringLiteral("command"),
                QJsonArray::fromStringList(renderCommand(spec, t.params,
                                                         {QStringLiteral("<sweep dir>/%1").arg(t.index),
                                                          spec.name, spec.experiment, t.index, 0})
                                               .argv));
        rows.append(row);
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
    return o;
}

}  // namespace orrery::core
