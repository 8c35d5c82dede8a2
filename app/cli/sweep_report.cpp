// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep list|status|best`: the sweep overview (core/sweepoverview.h, with the executor's
// price from remote::SweepOperations::overview) rendered as tables and lines, or as JSON.
#include "output.h"
#include "sweep_commands.h"

#include "orrery/core/format.h"
#include "orrery/core/params.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace orrery::cli {

using namespace orrery::core;
using remote::OperationError;
using remote::SweepOperations;

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

// Each trial, best first by the sweep's goal (trials without a value last).
QString statusTable(const SweepOverview &o)
{
    const Sweep &sw = o.sweep;
    QList<TrialSummary> rows = o.trials;
    std::stable_sort(rows.begin(), rows.end(), [&](const TrialSummary &a, const TrialSummary &b) {
        return isBetter(a.best.value_or(std::nan("")), b.best.value_or(std::nan("")), o.goal());
    });
    const QStringList keys = paramKeys(rows);
    QStringList header{QStringLiteral("trial")};
    header << keys << QStringLiteral("state") << QStringLiteral("step") << QStringLiteral("GPU-h");
    if (!sw.metricName.isEmpty())
        header << sw.metricName << QStringLiteral("best");
    header << QStringLiteral("note");
    QList<QStringList> cells;
    for (const TrialSummary &r : std::as_const(rows)) {
        const QJsonObject params = QJsonDocument::fromJson(r.trial.params.toUtf8()).object();
        QStringList row{QString::number(r.trial.index)};
        for (const QString &k : keys)
            row << paramCell(params.value(k));
        const Usage u = o.trialUsage.value(r.trial.index);
        row << stateCell(r) << (r.step >= 0 ? QString::number(r.step) : QStringLiteral("-"))
            << (u.attempts > 0 ? formatHours(u.gpuHours) : QStringLiteral("-"));
        if (!sw.metricName.isEmpty())
            row << (r.latest ? formatNumber(*r.latest) : QStringLiteral("-"))
                << (r.best ? formatNumber(*r.best) : QStringLiteral("-"));
        QString note = o.trialNote(r.trial);
        if (note.size() > 60)
            note = note.left(57) + QStringLiteral("...");
        row << note;
        cells << row;
    }
    return formatTable(header, cells);
}

}  // namespace

void printSweepSummary(const SweepOverview &o)
{
    const Sweep &sw = o.sweep;
    out(QStringLiteral("sweep %1 (%2) on %3: %4\n%5\nusage: %6\n")
            .arg(sw.id)
            .arg(sw.name, sw.cluster.isEmpty() ? QStringLiteral("this machine") : sw.cluster, o.stateText(),
                 sw.message.isEmpty() ? o.countsLine() : sw.message, describeUsage(o.usage, o.price)));
    if (!o.waiting.isEmpty())  // why queued trials wait, before the table that cuts notes short
        out(QStringLiteral("waiting: %1\n").arg(o.waiting));
    out(statusTable(o));
    if (o.best) {
        out(QStringLiteral("\nbest: %1 (%2 last = %3)\n")
                .arg(o.best->name, sw.metricName, formatNumber(o.best->value)));
        out(QStringLiteral("run dir: %1\n").arg(o.best->runDir));
        if (!o.best->video.isEmpty())
            out(QStringLiteral("sample video: %1\n").arg(o.best->video));
    }
}

int sweepList(const Context &ctx, const QCommandLineParser &p)
{
    try {
        auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
        const SweepOperations ops(*store, cliOperations());
        QList<SweepOverview> sweeps;
        for (const Sweep &sw : store->sweeps())
            sweeps.append(ops.overview(sw));
        if (p.isSet(QStringLiteral("json"))) {
            QJsonArray arr;
            for (const SweepOverview &o : std::as_const(sweeps))
                arr.append(overviewJson(o));
            printJson(arr);
            return kOk;
        }
        QList<QStringList> rows;
        for (const SweepOverview &o : std::as_const(sweeps)) {
            const Sweep &sw = o.sweep;
            rows << QStringList{QString::number(sw.id),
                                sw.name,
                                sw.cluster.isEmpty() ? QStringLiteral("local") : sw.cluster,
                                sw.method,
                                o.stateText(),
                                o.doneText(),
                                o.usage.attempts > 0 ? formatHours(o.usage.gpuHours) : QStringLiteral("-"),
                                o.best
                                    ? QStringLiteral("%1 %2").arg(sw.metricName, formatNumber(o.best->value))
                                    : QStringLiteral("-")};
        }
        out(formatTable({QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("on"),
                         QStringLiteral("method"), QStringLiteral("state"), QStringLiteral("done"),
                         QStringLiteral("GPU-h"), QStringLiteral("best")},
                        rows));
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("list"), e);
    }
}

int sweepStatus(const Context &ctx, const QCommandLineParser &p)
{
    try {
        auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
        const SweepOperations ops(*store, cliOperations());
        const SweepOverview o = ops.overview(ops.sweep(p.positionalArguments().front()));
        if (p.isSet(QStringLiteral("json")))
            printJson(overviewJson(o));
        else
            printSweepSummary(o);
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("status"), e);
    }
}

int sweepBest(const Context &ctx, const QCommandLineParser &p)
{
    try {
        auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
        const SweepOperations ops(*store, cliOperations());
        const SweepOverview o = ops.overview(ops.sweep(p.positionalArguments().front()));
        const Sweep &sw = o.sweep;
        if (!o.best) {
            err(QStringLiteral("orrery sweep best: no trial of %1 has logged %2 yet\n")
                    .arg(sw.name, sw.metricName));
            return kFailed;
        }
        if (p.isSet(QStringLiteral("json"))) {
            printJson(overviewJson(o).value(QLatin1String("best")).toObject());
            return kOk;
        }
        QString text = QStringLiteral("%1 (run %2): %3 = %4\nrun dir: %5\n")
                           .arg(o.best->name)
                           .arg(o.best->run)
                           .arg(sw.metricName, formatNumber(o.best->value), o.best->runDir);
        for (const TrialSummary &t : o.trials)
            if (t.trial.runId == o.best->run) {
                text += QStringLiteral("params: %1\n").arg(t.trial.params);
                break;
            }
        if (!o.best->video.isEmpty())
            text += QStringLiteral("sample video: %1\n").arg(o.best->video);
        out(text);
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("best"), e);
    }
}

}  // namespace orrery::cli
