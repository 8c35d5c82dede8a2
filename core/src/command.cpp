// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/command.h"

#include "orrery/core/pyvalue.h"
#include "orrery/core/sweepspec.h"

#include "textutil.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::core {

bool commandIsDistributed(const SweepSpec &spec)
{
    if (!spec.command)
        return false;
    const CommandSpec &c = *spec.command;
    switch (c.distributedEnv) {
    case CommandSpec::DistributedEnv::Always:
        return true;
    case CommandSpec::DistributedEnv::Never:
        return false;
    case CommandSpec::DistributedEnv::Auto:
        break;
    }
    const int perNode =
        c.launch == CommandSpec::Launch::PerNode ? 1 : std::max(1, spec.resources.gpusPerNode);
    return c.launchWritten || std::max(1, spec.resources.nodes) * perNode > 1;
}

QStringList distributedEnvNames()
{
    return {QStringLiteral("MASTER_ADDR"), QStringLiteral("MASTER_PORT"), QStringLiteral("WORLD_SIZE"),
            QStringLiteral("RANK"),        QStringLiteral("LOCAL_RANK"),  QStringLiteral("NODE_RANK"),
            QStringLiteral("NNODES")};
}

QStringList commandBuiltins()
{
    return QStringList{QStringLiteral("run_dir"),       QStringLiteral("trial"),
                       QStringLiteral("attempt"),       QStringLiteral("sweep"),
                       QStringLiteral("experiment"),    QStringLiteral("params_file"),
                       QStringLiteral("resume"),        QStringLiteral("nnodes"),
                       QStringLiteral("gpus_per_node"), QStringLiteral("world_size")} +
        nodeBuiltins();
}

QStringList nodeBuiltins()
{
    return {QStringLiteral("node_rank"), QStringLiteral("master_addr"), QStringLiteral("master_port")};
}

QStringList fillNodeWords(const RenderedCommand &command, const QHash<QString, QString> &values)
{
    QStringList argv = command.argv;
    for (const NodeWord &w : command.nodeWords) {
        QString filled;
        for (qsizetype i = 0; i < w.pieces.size(); ++i)
            filled += i % 2 == 0 ? w.pieces[i] : values.value(w.pieces[i]);
        if (w.index >= 0 && w.index < argv.size())
            argv[w.index] = filled;
    }
    return argv;
}

QString paramEnvName(const QString &key)
{
    QString name = QStringLiteral("ORRERY_PARAM_");
    for (const QChar c : key)
        name += (c.unicode() < 128 && c.isLetterOrNumber()) ? c.toUpper() : QLatin1Char('_');
    return name;
}

QStringList placeholdersIn(const QString &element, bool *malformed)
{
    QStringList out;
    if (malformed)
        *malformed = false;
    qsizetype pos = 0;
    while (true) {
        const qsizetype open = element.indexOf(QLatin1String("{{"), pos);
        if (open < 0)
            break;
        const qsizetype close = element.indexOf(QLatin1String("}}"), open + 2);
        if (close < 0) {
            if (malformed)
                *malformed = true;
            break;
        }
        out << element.mid(open + 2, close - open - 2).trimmed();
        pos = close + 2;
    }
    return out;
}

QString displayCommand(const QStringList &words)
{
    static const QString plain = QStringLiteral("@%+=:,./-_");
    QStringList out;
    for (const QString &w : words) {
        bool safe = !w.isEmpty();
        for (const QChar c : w)
            safe = safe && c.unicode() < 128 && (c.isLetterOrNumber() || plain.contains(c));
        QString q = w;
        q.replace(QLatin1Char('\''), QLatin1String("'\\''"));
        out << (safe ? w : QLatin1Char('\'') + q + QLatin1Char('\''));
    }
    return out.join(QLatin1Char(' '));
}

namespace {

// W&B's argument macros as its agent builds them (wandb/sdk/launch/sweeps/utils.py
// create_sweep_command_args): per top-level parameter `name=str(value)` — Python's str(), so
// `--lr=0.0001`, `--flag=True`, `--dropout=0.0`, `--sizes=[1, 2]`, a nested group as the dict W&B
// passes (`--optimizer={'lr': 0.001}`) — and json.dumps of them all. nullopt: not such a macro.
std::optional<QStringList> wandbArgMacro(const QString &macro, const PyDict &args, const QString &jsonFile)
{
    if (macro == QLatin1String("${args_json}"))
        return QStringList{pythonJsonDumps(QVariant::fromValue(args))};
    if (macro == QLatin1String("${args_json_file}"))
        return QStringList{jsonFile};
    static const QStringList perArg{QStringLiteral("${args}"),
                                    QStringLiteral("${args_no_hyphens}"),
                                    QStringLiteral("${args_no_equals}"),
                                    QStringLiteral("${args_append_hydra}"),
                                    QStringLiteral("${args_override_hydra}"),
                                    QStringLiteral("${args_no_boolean_flags}")};
    if (!perArg.contains(macro))
        return std::nullopt;
    QStringList out;
    for (const auto &[name, value] : args) {
        const QString flag = name + QLatin1Char('=') + pythonStr(value);
        if (macro == QLatin1String("${args}"))
            out << QStringLiteral("--") + flag;
        else if (macro == QLatin1String("${args_no_hyphens}"))
            out << flag;
        else if (macro == QLatin1String("${args_no_equals}"))
            out << QStringLiteral("--") + name << pythonStr(value);
        else if (macro == QLatin1String("${args_append_hydra}"))
            out << QLatin1Char('+') + flag;
        else if (macro == QLatin1String("${args_override_hydra}"))
            out << QStringLiteral("++") + flag;
        else if (value.typeId() != QMetaType::Bool)  // ${args_no_boolean_flags}
            out << QStringLiteral("--") + flag;
        else if (value.toBool())  // a true flag alone, a false one left out
            out << QStringLiteral("--") + name;
    }
    return out;
}

}  // namespace

RenderedCommand renderCommand(const SweepSpec &spec, const TrialParams &params, const CommandContext &ctx)
{
    RenderedCommand out;
    if (!spec.command)
        return out;
    const CommandSpec &c = *spec.command;
    const QString paramsFile = QDir(ctx.runDir).filePath(QStringLiteral("trial.yaml"));
    const QString resume = ctx.attempt > 0 ? QStringLiteral("1") : QStringLiteral("0");
    QHash<QString, QString> values{
        {QStringLiteral("run_dir"), ctx.runDir},
        {QStringLiteral("trial"), QString::number(ctx.trial)},
        {QStringLiteral("attempt"), QString::number(ctx.attempt)},
        {QStringLiteral("sweep"), ctx.sweep},
        {QStringLiteral("experiment"), ctx.experiment},
        {QStringLiteral("params_file"), paramsFile},
        {QStringLiteral("resume"), resume},
        {QStringLiteral("nnodes"), QString::number(std::max(1, spec.resources.nodes))},
        // the processes a node runs under per_node: one per GPU, 1 on CPU
        {QStringLiteral("gpus_per_node"), QString::number(std::max(1, spec.resources.gpusPerNode))},
        // every process of the trial (accelerate's --num_processes)
        {QStringLiteral("world_size"),
         QString::number(std::max(1, spec.resources.nodes) * std::max(1, spec.resources.gpusPerNode))}};
    const QStringList late = nodeBuiltins();
    for (const auto &[key, value] : params)
        values.insert(key, formatParamValue(value));
    const QString configFile =
        spec.configFile ? QDir(ctx.runDir).filePath(spec.configFile->fileName) : QString();
    if (spec.configFile)
        values.insert(QStringLiteral("config"), configFile);
    const PyDict wandbParams = nestParams(spec, params, true);
    const QString argsJsonFile = QDir(ctx.runDir).filePath(QStringLiteral("args.json"));

    for (const QString &element : c.argv) {
        // W&B's macros stand alone as elements.
        if (element == QLatin1String("${env}")) {
            out.argv << QStringLiteral("/usr/bin/env");
            continue;
        }
        if (element == QLatin1String("${interpreter}")) {
            out.argv << QStringLiteral("python");
            continue;
        }
        if (element == QLatin1String("${program}")) {
            out.argv << spec.program;
            continue;
        }
        if (const auto args = wandbArgMacro(element, wandbParams, argsJsonFile)) {
            out.argv << *args;
            continue;
        }
        QString rendered;
        NodeWord node{int(out.argv.size()), {QString()}};
        qsizetype pos = 0;
        while (true) {
            const qsizetype open = element.indexOf(QLatin1String("{{"), pos);
            const qsizetype close = open < 0 ? -1 : element.indexOf(QLatin1String("}}"), open + 2);
            if (open < 0 || close < 0) {
                rendered += element.mid(pos);
                node.pieces.back() += element.mid(pos);
                break;
            }
            rendered += element.mid(pos, open - pos);
            node.pieces.back() += element.mid(pos, open - pos);
            const QString name = element.mid(open + 2, close - open - 2).trimmed();
            if (late.contains(name)) {  // filled on the node (fillNodeWords, the sbatch script)
                rendered += QStringLiteral("{{") + name + QStringLiteral("}}");
                node.pieces << name << QString();
            } else {
                rendered += values.value(name);
                node.pieces.back() += values.value(name);
            }
            pos = close + 2;
        }
        if (node.pieces.size() > 1)
            out.nodeWords.append(node);
        out.argv << rendered;
    }

    out.env = {{QStringLiteral("ORRERY_RUN_DIR"), ctx.runDir},
               {QStringLiteral("ORRERY_EVENTS"), QDir(ctx.runDir).filePath(QStringLiteral("events.jsonl"))},
               {QStringLiteral("ORRERY_PARAMS_FILE"), paramsFile},
               {QStringLiteral("ORRERY_RESUME"), resume},
               {QStringLiteral("ORRERY_ATTEMPT"), QString::number(ctx.attempt)},
               {QStringLiteral("ORRERY_TRIAL"), QString::number(ctx.trial)},
               {QStringLiteral("ORRERY_SWEEP"), ctx.sweep},
               {QStringLiteral("ORRERY_EXPERIMENT"), ctx.experiment}};
    if (spec.configFile)
        out.env.append({QStringLiteral("ORRERY_CONFIG_FILE"), configFile});
    out.perNode = c.launch == CommandSpec::Launch::PerNode;
    out.distributed = commandIsDistributed(spec);
    out.env.append(
        {QStringLiteral("ORRERY_DISTRIBUTED"), out.distributed ? QStringLiteral("1") : QStringLiteral("0")});
    if (c.code.snapshot)
        out.code = c.code;
    out.capture = c.capture;
    if (c.capture)  // the capture module records W&B calls (the executors put it on PYTHONPATH)
        out.env.append({QStringLiteral("ORRERY_CAPTURE"), QStringLiteral("1")});
    for (const auto &[key, value] : params)
        out.env.append({paramEnvName(key), formatParamValue(value)});
    out.env.append(c.env);  // the spec's own `env:`, after Orrery's (whose names it cannot take)

    out.workdir = c.workdir;
    const QString specDir = QFileInfo(spec.file).absolutePath();
    out.localWorkdir = c.workdir.isEmpty() ? specDir : QDir(specDir).absoluteFilePath(c.workdir);
    return out;
}

QList<CompiledMetricRule> compileMetricRules(const QList<MetricRule> &rules)
{
    QList<CompiledMetricRule> out;
    for (const MetricRule &r : rules)
        out.append({r.name, QRegularExpression(r.regex),
                    r.stepRegex.isEmpty() ? QRegularExpression() : QRegularExpression(r.stepRegex)});
    return out;
}

namespace {

std::optional<double> numberText(QStringView s)
{
    s = s.trimmed();
    const QString lower = s.toString().toLower();
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (lower == QLatin1String("nan") || lower == QLatin1String("-nan"))
        return std::numeric_limits<double>::quiet_NaN();
    if (lower == QLatin1String("inf") || lower == QLatin1String("+inf") || lower == QLatin1String("infinity"))
        return inf;
    if (lower == QLatin1String("-inf") || lower == QLatin1String("-infinity"))
        return -inf;
    bool ok = false;
    const double v = s.toDouble(&ok);
    return ok ? std::optional(v) : std::nullopt;
}

}  // namespace

StdoutMetrics parseMetricLines(QByteArrayView data, const QList<CompiledMetricRule> &rules,
                               QHash<QString, qint64> &lastStep, qint64 timestampMs)
{
    StdoutMetrics out;
    const qsizetype end = data.lastIndexOf('\n');
    if (end < 0)
        return out;
    out.consumed = end + 1;
    qsizetype pos = 0;
    while (pos < out.consumed) {
        const qsizetype nl = data.indexOf('\n', pos);
        // Invalid UTF-8 becomes U+FFFD here: a log line is text to match, not data to keep.
        QString line = QString::fromUtf8(data.sliced(pos, nl - pos));
        pos = nl + 1;
        ++out.lines;
        // A progress bar's '\r' rewrites the line: what follows the last one is what was shown.
        if (const qsizetype cr = line.lastIndexOf(QLatin1Char('\r')); cr >= 0)
            line = cr + 1 < line.size() ? line.mid(cr + 1) : line.left(cr);
        for (const CompiledMetricRule &r : rules) {
            const QRegularExpressionMatch m = r.regex.match(line);
            if (!m.hasMatch())
                continue;
            const std::optional<double> value =
                numberText(m.lastCapturedIndex() >= 1 ? m.capturedView(1) : m.capturedView(0));
            if (!value)
                continue;
            std::optional<qint64> step;
            if (r.step.isValid() && !r.step.pattern().isEmpty()) {
                const QRegularExpressionMatch s = r.step.match(line);
                if (s.hasMatch())
                    if (const auto n = parseInteger(
                            (s.lastCapturedIndex() >= 1 ? s.capturedView(1) : s.capturedView(0)).toString()))
                        step = *n;
            }
            auto last = lastStep.find(r.name);
            if (!step)
                step = last == lastStep.end() ? 0 : *last + 1;
            lastStep.insert(r.name, *step);
            out.points.append({r.name, MetricPoint{*step, timestampMs, *value}});
        }
    }
    return out;
}

}  // namespace orrery::core
