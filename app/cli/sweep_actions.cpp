// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep cancel|stop|retry|logs|supervise`: acting on a sweep or a trial through
// remote::SweepOperations (the same calls as the window's sweep actions and the monitor's keys),
// and reading a trial's logs from where its executor keeps them.
#include "interrupt.h"
#include "output.h"
#include "sweep_commands.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/logread.h"

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
        const InterruptScope interrupts;
        // Each file whole, from its start: core::readLogFiles' From reads, a chunk at a time, every
        // file in one batched read.
        QList<qint64> ends(logs.paths.size(), 0);
        if (!follow) {  // tail's headers, then each file
            for (int i = 0; i < logs.paths.size() && !InterruptScope::requested(); ++i) {
                const auto chunk = [&] {
                    return readLogFiles(executor, {{LogReadJob::Kind::From, i, logs.paths[i], -1, ends[i]}})
                        .front();
                };
                LogRead r = chunk();
                out(QStringLiteral("%1==> %2 <==%3\n")
                        .arg(i > 0 ? QStringLiteral("\n") : QString(), logs.paths[i],
                             r.kind == LogRead::Kind::Missing ? QStringLiteral(" (not there yet)")
                                                              : QString()));
                for (; r.kind == LogRead::Kind::Append && !InterruptScope::requested(); r = chunk()) {
                    out(QString::fromUtf8(r.data));
                    ends[i] += r.data.size();
                }
            }
            return kOk;
        }
        // Following, the lines just come, each file's as it grows.
        const auto readOn = [&] {
            QList<LogReadJob> jobs;
            for (int i = 0; i < logs.paths.size(); ++i)
                jobs.append({LogReadJob::Kind::From, i, logs.paths[i], -1, ends[i]});
            const QList<LogRead> reads = readLogFiles(executor, jobs);
            for (const LogRead &r : reads)
                if (r.kind == LogRead::Kind::Append) {
                    out(QString::fromUtf8(r.data));
                    ends[r.file] += r.data.size();
                }
            return reads;
        };
        while (!InterruptScope::requested()) {
            const QList<LogRead> reads = readOn();
            const bool quiet = std::none_of(reads.begin(), reads.end(),
                                            [](const LogRead &r) { return r.kind == LogRead::Kind::Append; });
            // The executor, not the store, says whether the task still runs (no follower may be
            // updating the store).
            const TaskStatus st = executor.poll({logs.attempt.task}).value(logs.attempt.task);
            if (st.state != TaskStatus::State::Queued && st.state != TaskStatus::State::Running && quiet)
                break;
            if (quiet)
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
