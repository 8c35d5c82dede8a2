// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/command.h"

#include "orrery/core/sweepspec.h"

#include "textutil.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <limits>

namespace orrery::core {

QStringList commandBuiltins()
{
    return {QStringLiteral("run_dir"), QStringLiteral("trial"),      QStringLiteral("attempt"),
            QStringLiteral("sweep"),   QStringLiteral("experiment"), QStringLiteral("params_file"),
            QStringLiteral("resume")};
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

// W&B's "--key=value" arguments of ${args} (https://docs.wandb.ai/guides/sweeps/define-sweep-configuration).
QStringList wandbArgs(const TrialParams &params, bool hyphens)
{
    QStringList out;
    for (const auto &[key, value] : params)
        out << (hyphens ? QStringLiteral("--") : QString()) + key + QLatin1Char('=') +
                formatParamValue(value);
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
    QHash<QString, QString> values{{QStringLiteral("run_dir"), ctx.runDir},
                                   {QStringLiteral("trial"), QString::number(ctx.trial)},
                                   {QStringLiteral("attempt"), QString::number(ctx.attempt)},
                                   {QStringLiteral("sweep"), ctx.sweep},
                                   {QStringLiteral("experiment"), ctx.experiment},
                                   {QStringLiteral("params_file"), paramsFile},
                                   {QStringLiteral("resume"), resume}};
    for (const auto &[key, value] : params)
        values.insert(key, formatParamValue(value));

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
        if (element == QLatin1String("${args}") || element == QLatin1String("${args_no_hyphens}")) {
            out.argv << wandbArgs(params, element == QLatin1String("${args}"));
            continue;
        }
        if (element == QLatin1String("${args_json}")) {
            out.argv << QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap([&] {
                                              QVariantMap m;
                                              for (const auto &[key, value] : params)
                                                  m.insert(key, value);
                                              return m;
                                          }()))
                                              .toJson(QJsonDocument::Compact));
            continue;
        }
        QString rendered;
        qsizetype pos = 0;
        while (true) {
            const qsizetype open = element.indexOf(QLatin1String("{{"), pos);
            const qsizetype close = open < 0 ? -1 : element.indexOf(QLatin1String("}}"), open + 2);
            if (open < 0 || close < 0) {
                rendered += element.mid(pos);
                break;
            }
            rendered += element.mid(pos, open - pos);
            rendered += values.value(element.mid(open + 2, close - open - 2).trimmed());
            pos = close + 2;
        }
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
    for (const auto &[key, value] : params)
        out.env.append({paramEnvName(key), formatParamValue(value)});

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
