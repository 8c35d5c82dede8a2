// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep cancel|stop|retry|logs|supervise`: acting on a sweep or a trial through
// remote::SweepOperations (the same calls as the window's sweep actions and the monitor's keys),
// and reading a trial's logs from where its executor keeps them.
#include "interrupt.h"
#include "output.h"
#include "sweep_commands.h"

#include "orrery/core/localexecutor.h"

#include <QThread>

#include <algorithm>

namespace orrery::cli {

using namespace orrery::core;
using remote::OperationError;
using remote::SweepOperations;

namespace {

// What an action reports while it settles: the runner's events, one per line.
remote::OperationProgress printedProgress()
{
    remote::OperationProgress p;
    p.say = [](const QString &line) { out(line + QLatin1Char('\n')); };
    p.cancelled = [] { return InterruptScope::requested(); };
    return p;
}

// Prints the outcome: a settled action on stdout, one still settling as a note on stderr.
int printOutcome(const remote::ActionOutcome &o)
{
    if (o.settled)
        out(o.message + QLatin1Char('\n'));
    else
        err(o.message + QLatin1Char('\n'));
    return kOk;
}

}  // namespace

int sweepCancel(const Context &ctx, const QCommandLineParser &p)
{
    try {
        auto store = openStore(ctx);
        SweepOperations ops(*store, cliOperations());
        const InterruptScope interrupts;  // Ctrl-C ends the wait, not the cancel
        return printOutcome(ops.cancel(ops.sweep(p.positionalArguments().front()).id, printedProgress()));
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("cancel"), e);
    }
}

int sweepStop(const Context &ctx, const QCommandLineParser &p)
{
    const int trial = trialArgument(QStringLiteral("stop"), p.positionalArguments().at(1));
    if (trial < 0)
        return kUsage;
    try {
        auto store = openStore(ctx);
        SweepOperations ops(*store, cliOperations());
        const InterruptScope interrupts;
        const Sweep sw = ops.sweep(p.positionalArguments().front());
        return printOutcome(
            ops.stopTrial(sw.id, trial, p.value(QStringLiteral("reason")), printedProgress()));
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("stop"), e);
    }
}

int sweepRetry(const Context &ctx, const QCommandLineParser &p)
{
    const int trial = trialArgument(QStringLiteral("retry"), p.positionalArguments().at(1));
    if (trial < 0)
        return kUsage;
    try {
        auto store = openStore(ctx);
        SweepOperations ops(*store, cliOperations());
        return printOutcome(ops.retryTrial(ops.sweep(p.positionalArguments().front()).id, trial));
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("retry"), e);
    }
}

int sweepLogs(const Context &ctx, const QCommandLineParser &p)
{
    const int trial = trialArgument(QStringLiteral("logs"), p.positionalArguments().at(1));
    if (trial < 0)
        return kUsage;
    const bool follow = p.isSet(QStringLiteral("f"));
    try {
        auto store = openStore(ctx, TrackingStore::Mode::ReadOnly);
        SweepOperations ops(*store, cliOperations());
        const remote::TrialLogs logs = ops.logs(ops.sweep(p.positionalArguments().front()).id, trial);
        Executor &executor = ops.executor(logs.sweep.cluster);
        QList<qint64> offsets(logs.paths.size(), 0);
        const InterruptScope interrupts;
        while (true) {
            QList<FileRead> reads;
            for (qsizetype i = 0; i < logs.paths.size(); ++i)
                reads.append({logs.paths[i], offsets[i], 8 << 20});
            const QList<FileChunk> chunks = executor.readFiles(reads);
            for (qsizetype i = 0; i < chunks.size(); ++i) {
                if (!follow)  // tail's headers; following, the lines just come
                    out(QStringLiteral("%1==> %2 <==%3\n")
                            .arg(i > 0 ? QStringLiteral("\n") : QString(), logs.paths[i],
                                 chunks[i].exists ? QString() : QStringLiteral(" (not there yet)")));
                out(QString::fromUtf8(chunks[i].data));
                offsets[i] += chunks[i].data.size();
            }
            if (!follow || InterruptScope::requested())
                break;
            // The executor, not the store, says whether the task still runs (no follower may be
            // updating the store).
            const TaskStatus st = executor.poll({logs.attempt.task}).value(logs.attempt.task);
            const bool quiet = std::all_of(chunks.begin(), chunks.end(),
                                           [](const FileChunk &c) { return c.data.isEmpty(); });
            if (st.state != TaskStatus::State::Queued && st.state != TaskStatus::State::Running && quiet)
                break;
            QThread::msleep(1000);
        }
        return kOk;
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("logs"), e);
    }
}

int sweepSupervise(const Context &, const QCommandLineParser &p)
{
    return runLocalSupervisor(p.positionalArguments().front()) == 0 ? kOk : kFailed;
}

}  // namespace orrery::cli
