// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/sbatch.h"

#include "orrery/core/codesnapshot.h"

#include "orrery/remote/shell.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <map>
#include <optional>

namespace orrery::remote {

QByteArray defaultSbatchTemplate()
{
    QFile f(QStringLiteral(":/orrery/sbatch/array.sbatch"));
    if (!f.open(QIODevice::ReadOnly))
        throw SbatchError(QStringLiteral("the built-in sbatch template is missing (a build error)"));
    return f.readAll();
}

QString sbatchOverridePath(const QString &configDir, const QString &cluster)
{
    return QDir(configDir).filePath(QStringLiteral("clusters/%1.sbatch").arg(cluster));
}

QByteArray sbatchTemplateFor(const QString &configDir, const QString &cluster)
{
    const QString path = sbatchOverridePath(configDir, cluster);
    if (cluster.isEmpty() || !QFileInfo::exists(path))
        return defaultSbatchTemplate();
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw SbatchError(
            QStringLiteral("%1: cannot read the cluster's sbatch template: %2").arg(path, f.errorString()));
    return f.readAll();
}

namespace {

// One placeholder's value and how it may be written.
struct Value {
    enum class Kind { Number, Text, List, Code };
    Kind kind = Kind::Text;
    std::optional<QByteArray> raw;  // nullopt: absent (the line is dropped)
    QList<QByteArray> list;
};

Value number(qint64 n)
{
    return {Value::Kind::Number, QByteArray::number(n), {}};
}

Value text(const QString &s, bool optional = true)
{
    if (optional && s.isEmpty())
        return {Value::Kind::Text, std::nullopt, {}};
    return {Value::Kind::Text, s.toUtf8(), {}};
}

QString shown(const QByteArray &raw)
{
    QString s = QString::fromUtf8(raw);
    s.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    return s;
}

// A value on an #SBATCH line: sbatch's parser (not a shell) reads it. It honours single quotes
// but ends the line at a newline and treats '\' as an escape even inside quotes; Slurm expands
// '%' in paths. Those are refused; everything else is shellQuote'd, which that parser unquotes.
QByteArray sbatchLineValue(const QByteArray &name, const Value &v)
{
    if (v.kind == Value::Kind::Number)
        return *v.raw;
    if (v.kind != Value::Kind::Text)
        throw SbatchError(
            QStringLiteral("{{%1}} cannot stand on an #SBATCH line").arg(QString::fromUtf8(name)));
    for (const char c : *v.raw) {
        const auto u = static_cast<unsigned char>(c);
        QString why;
        if (u < 0x20 || u == 0x7f)
            why = QStringLiteral("a control character such as a newline");
        else if (c == '\\')
            why = QStringLiteral("a backslash");
        else if (c == '%' && name == "sweep_dir")
            why = QStringLiteral("'%' (Slurm expands it in paths)");
        if (!why.isEmpty())
            throw SbatchError(
                QStringLiteral("%1 %2 contains %3, which an #SBATCH line cannot carry; choose another")
                    .arg(QString::fromUtf8(name), shown(*v.raw), why));
    }
    return shellQuote(*v.raw);
}

QByteArray bodyValue(const Value &v)
{
    switch (v.kind) {
    case Value::Kind::Number:
        return *v.raw;
    case Value::Kind::Text:
        return shellQuote(*v.raw);
    case Value::Kind::Code:
        return *v.raw;
    case Value::Kind::List: {
        QByteArray out;
        for (const QByteArray &item : v.list)
            out += (out.isEmpty() ? "" : " ") + shellQuote(item);
        return out;
    }
    }
    return {};
}

}  // namespace

QByteArray renderSbatch(const QByteArray &templ, const SbatchJob &job)
{
    if (job.trialDirs.isEmpty())
        throw SbatchError(QStringLiteral("a sweep needs at least one trial"));
    if (!templ.contains("{{trial_dirs}}") || !templ.contains("{{trainer}}"))
        throw SbatchError(QStringLiteral("the sbatch template must use {{trial_dirs}} and {{trainer}} (see "
                                         "resources/sbatch/array.sbatch)"));
    if (job.commands && !templ.contains("command.argv"))
        throw SbatchError(QStringLiteral(
            "this sweep runs its own command, and the cluster's sbatch template does not say how (it "
            "predates command sweeps): copy the lines that read command.argv from Orrery's own template "
            "(/usr/share/orrery/sbatch/array.sbatch, or resources/sbatch/array.sbatch in the source) into "
            "it"));
    if (job.nodeWords && !templ.contains("command.late"))
        throw SbatchError(QStringLiteral("this sweep's command uses {{node_rank}}, {{master_addr}} or "
                                         "{{master_port}}, which each node fills in, "
                                         "and the cluster's sbatch template does not say how (it predates "
                                         "launchers): copy the orrery_task "
                                         "lines and the srun line that runs them from Orrery's own template "
                                         "(/usr/share/orrery/sbatch/array.sbatch, or "
                                         "resources/sbatch/array.sbatch in the source) into it"));
    const core::SweepResources &r = job.resources;
    std::map<QByteArray, Value> values;
    values["job_name"] = text(job.jobName.isEmpty() ? QStringLiteral("orrery-sweep") : job.jobName);
    values["last_index"] = number(job.trialDirs.size() - 1);
    values["max_concurrent"] = number(std::max(1, job.maxConcurrent));
    values["nodes"] = number(std::max(1, r.nodes));
    // Processes per node: one per GPU, 1 on CPU. Per node they are one task (per_node) or a task each.
    const int perNodeProcesses = r.gpusPerNode > 0 ? r.gpusPerNode : 1;
    values["tasks_per_node"] = number(job.perNode ? 1 : perNodeProcesses);
    values["processes_per_task"] = number(job.perNode ? perNodeProcesses : 1);
    values["gpus_per_node"] =
        r.gpusPerNode > 0 ? number(r.gpusPerNode) : Value{Value::Kind::Number, std::nullopt, {}};
    values["cpus_per_task"] = number(std::max(1, r.cpusPerTask) * (job.perNode ? perNodeProcesses : 1));
    values["mem"] = text(r.mem);
    values["time"] = text(r.time);
    values["partition"] = text(r.partition.isEmpty() ? job.defaultPartition : r.partition);
    values["account"] = text(r.account.isEmpty() ? job.defaultAccount : r.account);
    values["sweep_dir"] = text(job.sweepDir, false);
    // The W&B capture module the executor ships with the batch (core/capture.h).
    values["capture_dir"] = text(job.sweepDir + QStringLiteral("/.orrery/python"), false);
    values["code_script"] = text(core::codeScriptPath(job.sweepDir), false);
    values["code_dir"] = text(core::codeSnapshotDir(job.sweepDir), false);
    values["trainer"] = text(job.trainer.isEmpty() ? QStringLiteral("orrery-train") : job.trainer, false);
    Value dirs{Value::Kind::List, QByteArray(), {}};
    for (const QString &d : job.trialDirs)
        dirs.list.append(d.toUtf8());
    values["trial_dirs"] = dirs;
    values["setup"] = {Value::Kind::Code, job.setup.join(QLatin1Char('\n')).toUtf8(), {}};
    // The health check's words as a bash array's items (none: the check is off).
    Value health{Value::Kind::List, QByteArray(), {}};
    for (const QString &w : job.healthCheck)
        health.list.append(w.toUtf8());
    values["health_check"] = health;

    QByteArray out;
    const QList<QByteArray> lines = templ.split('\n');
    for (qsizetype n = 0; n < lines.size(); ++n) {
        const QByteArray &line = lines[n];
        const bool sbatchLine = line.startsWith("#SBATCH");
        // Comments are the template's documentation: copied as they are, braces and all.
        if (line.startsWith('#') && !sbatchLine) {
            out += line + (n + 1 < lines.size() ? "\n" : "");
            continue;
        }
        QByteArray rendered;
        bool drop = false;
        qsizetype pos = 0;
        while (true) {
            const qsizetype open = line.indexOf("{{", pos);
            if (open < 0) {
                rendered += line.mid(pos);
                break;
            }
            const qsizetype close = line.indexOf("}}", open + 2);
            const QByteArray name = close < 0 ? QByteArray() : line.mid(open + 2, close - open - 2);
            const auto it = values.find(name);
            if (it == values.end()) {
                QStringList known;
                for (const auto &[k, v] : values)
                    known << QString::fromUtf8(k);
                throw SbatchError(
                    QStringLiteral("sbatch template line %1: unknown placeholder %2; known: %3")
                        .arg(n + 1)
                        .arg(QString::fromUtf8(line.mid(open, close < 0 ? 2 : close + 2 - open)),
                             known.join(QStringLiteral(", "))));
            }
            rendered += line.mid(pos, open - pos);
            if (!it->second.raw && it->second.kind != Value::Kind::List)
                drop = true;
            else
                rendered += sbatchLine ? sbatchLineValue(name, it->second) : bodyValue(it->second);
            pos = close + 2;
        }
        if (drop)
            continue;
        out += rendered;
        if (n + 1 < lines.size())
            out += '\n';
    }
    return out;
}

}  // namespace orrery::remote
