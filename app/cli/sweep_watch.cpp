// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep watch` (and `submit --watch`): follows a sweep through remote::SweepOperations
// until it ends or Ctrl-C detaches, showing the sweep overview's progress as a block redrawn in
// place on a terminal, or as timestamped lines elsewhere.
#include "interrupt.h"
#include "output.h"
#include "statusblock.h"
#include "sweep_commands.h"

#include "orrery/core/format.h"
#include "orrery/remote/notify.h"

#include <QDateTime>
#include <QThread>

namespace orrery::cli {

using namespace orrery::core;
using remote::OperationError;
using remote::SweepOperations;

namespace {

// The status block of `sweep watch` on a terminal: the sweep, then one line per active trial.
QStringList statusLines(const SweepOverview &o)
{
    const Sweep &sw = o.sweep;
    const SweepProgress &p = *o.progress;
    const PhaseCounts &c = p.counts;
    QStringList parts{QStringLiteral("%1 done").arg(c.done), QStringLiteral("%1 running").arg(c.running),
                      QStringLiteral("%1 queued").arg(c.queued)};
    if (c.failed)
        parts << QStringLiteral("%1 failed").arg(c.failed);
    if (c.stopped)
        parts << QStringLiteral("%1 stopped").arg(c.stopped);
    QString head =
        QStringLiteral("%1: %2 of %3").arg(sw.name, parts.join(QStringLiteral(", "))).arg(p.planned);
    if (p.stepsTotal > 0)
        head += QStringLiteral("  steps %1/%2 (%3%)")
                    .arg(p.stepsDone)
                    .arg(p.stepsTotal)
                    .arg(int(100.0 * double(p.stepsDone) / double(p.stepsTotal)));
    head += QStringLiteral("  ETA %1").arg(p.etaMs ? formatDuration(*p.etaMs) : QStringLiteral("?"));
    if (p.best)
        head += QStringLiteral("  best %1 %2 (%3)").arg(sw.metricName, formatNumber(*p.best), p.bestRun);
    if (o.usage.attempts > 0)
        head += QStringLiteral("  %1 GPU-h").arg(formatHours(o.usage.gpuHours));
    QStringList lines{head};
    constexpr int kShown = 12;
    for (qsizetype i = 0; i < p.active.size() && i < kShown; ++i) {
        const TrialProgress &t = p.active[i];
        QString line = QStringLiteral("  trial %1  %2").arg(t.index).arg(t.state, -8);
        if (t.step >= 0)
            line += QStringLiteral("  step %1/%2")
                        .arg(t.step)
                        .arg(t.total > 0 ? QString::number(t.total) : QStringLiteral("?"));
        if (t.stepsPerSecond > 0)
            line += QStringLiteral("  %1 steps/s").arg(t.stepsPerSecond, 0, 'g', 3);
        if (t.latest)
            line += QStringLiteral("  %1 %2").arg(sw.metricName, formatNumber(*t.latest));
        if (t.etaMs)
            line += QStringLiteral("  ETA %1").arg(formatDuration(*t.etaMs));
        if (t.attempt > 0)
            line += QStringLiteral("  (attempt %1)").arg(t.attempt + 1);
        lines << line;
    }
    if (p.active.size() > kShown)
        lines << QStringLiteral("  ... and %1 more").arg(p.active.size() - kShown);
    return lines;
}

// One line for a log file or a pipe: the counts and the best, printed when they change.
QString plainLine(const SweepOverview &o)
{
    QString line = o.countsLine();
    if (o.progress && o.progress->best)
        line += QStringLiteral("; best %1 %2 (%3)")
                    .arg(o.sweep.metricName, formatNumber(*o.progress->best), o.progress->bestRun);
    return line;
}

// The tick's notices, where the spec's `notify:` and `--notify` say: each target once, in turn
// (a delivery is bounded by remote::kNotifyTimeoutMs). A failed one is said, the watch goes on.
void deliverNotices(const QList<Notice> &notices, const std::optional<NotifyTarget> &flag, StatusBlock &block,
                    const QString &stamp)
{
    for (const Notice &n : notices) {
        QList<NotifyTarget> targets;
        if (n.target)
            targets << *n.target;
        if (flag && !targets.contains(*flag))
            targets << *flag;
        for (const NotifyTarget &t : targets) {
            const remote::NotifyResult r = remote::deliverNotice(t, n);
            if (!r.ok) {
                block.clear();
                err(QStringLiteral("[%1] %2\n").arg(stamp, r.error));
            }
        }
    }
}

}  // namespace

bool notifyOption(const QString &verb, const QCommandLineParser &p, std::optional<NotifyTarget> &target)
{
    if (!p.isSet(QStringLiteral("notify")))
        return true;
    const auto parsed = parseNotifyTarget({p.value(QStringLiteral("notify"))});
    if (!parsed) {
        target = std::nullopt;
        err(QStringLiteral("orrery sweep %1: --notify: %2\n").arg(verb, parsed.problem()));
        return false;
    }
    target = *parsed;
    return true;
}

int watchSweep(SweepOperations &ops, const Sweep &swIn, bool json, const TickPace &pace,
               const std::optional<NotifyTarget> &notify)
{
    std::optional<InterruptScope> interrupts(std::in_place);  // Ctrl-C detaches
    QString lastLine, lastHolder;
    qint64 lastPrint = 0, lastDraw = 0;
    int quietTicks = 0;
    // On a terminal one block redrawn in place; elsewhere (a pipe, a log file) timestamped lines.
    StatusBlock block(!json && stdoutIsLiveTerminal());
    SweepProgressTracker progress;
    while (!InterruptScope::requested() && !ops.isDone(swIn.id)) {
        const TickReport report = ops.tick(swIn.id);
        const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
        const QString holder =
            report.followedElsewhere.isEmpty() ? QString() : report.followedElsewhere.front().holder;
        if (!holder.isEmpty() && holder != lastHolder) {
            block.printAbove(
                QStringLiteral("[%1] followed by %2: this watch only reads, and takes over when it stops\n")
                    .arg(stamp, holder));
        } else if (holder.isEmpty() && !lastHolder.isEmpty()) {
            // Taken over, unless the other follower ended the sweep (then nobody needs the lease).
            const auto lease = ops.store().sweepLease(swIn.id);
            if (lease && lease->heldBy(ops.followerId()))
                block.printAbove(QStringLiteral("[%1] the other follower stopped: this watch acts now (%2)\n")
                                     .arg(stamp, ops.followerId()));
        }
        lastHolder = holder;
        for (const QString &e : report.events)
            block.printAbove(QStringLiteral("[%1] %2\n").arg(stamp, e));
        for (const QString &e : report.errors) {
            block.clear();
            err(QStringLiteral("[%1] %2\n").arg(stamp, e));
        }
        deliverNotices(report.notices, notify, block, stamp);
        const SweepOverview o = ops.overview(ops.sweep(swIn.id), &progress);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (block.live()) {
            if (!report.events.isEmpty() || now - lastDraw >= 250) {  // a few redraws a second at most
                block.show(statusLines(o));
                lastDraw = now;
            }
        } else {
            const QString line = plainLine(o);
            // Printed when the counts or the best change, else every 30 s with the step counts.
            if (line != lastLine || now - lastPrint > 30000) {
                QString steps;
                if (o.progress->stepsTotal > 0)
                    steps = QStringLiteral("; steps %1/%2")
                                .arg(o.progress->stepsDone)
                                .arg(o.progress->stepsTotal);
                if (o.progress->etaMs)
                    steps += QStringLiteral(", ETA %1").arg(formatDuration(*o.progress->etaMs));
                out(QStringLiteral("[%1] %2%3\n").arg(stamp, line, steps));
                lastLine = line;
                lastPrint = now;
            }
        }
        if (ops.isDone(swIn.id))
            break;
        const int wait = nextTickIntervalMs(report, pace, quietTicks);
        for (int slept = 0; slept < wait && !InterruptScope::requested(); slept += 100)
            QThread::msleep(100);
    }
    block.clear();
    interrupts.reset();
    ops.releaseLeases();  // another follower acts from its next tick, not after the lease expires
    if (InterruptScope::requested()) {
        err(QStringLiteral("detached: the trials go on; `orrery sweep watch %1` picks the sweep up again\n")
                .arg(swIn.id));
        return kOk;
    }
    if (json)
        return kOk;
    const SweepOverview o = ops.overview(ops.sweep(swIn.id));
    out(QStringLiteral("\n"));
    printSweepSummary(o);
    return o.sweep.sweepState() == SweepState::Failed ? kFailed : kOk;
}

int sweepWatch(const Context &ctx, const QCommandLineParser &p)
{
    TickPace pace{1000, 15000};
    if (p.isSet(QStringLiteral("pace"))) {
        // --pace FAST,SLOW in seconds: the first and the longest interval between ticks.
        const QStringList parts = p.value(QStringLiteral("pace")).split(QLatin1Char(','));
        bool okFast = false, okSlow = false;
        const double fast = parts.value(0).toDouble(&okFast), slow = parts.value(1).toDouble(&okSlow);
        if (parts.size() != 2 || !okFast || !okSlow || fast < 0.1 || slow < fast || slow > 3600) {
            err(QStringLiteral(
                "orrery sweep watch: --pace takes FAST,SLOW seconds (0.1 <= FAST <= SLOW <= 3600)\n"));
            return kUsage;
        }
        pace = {int(fast * 1000), int(slow * 1000)};
    }
    std::optional<NotifyTarget> notify;
    if (!notifyOption(QStringLiteral("watch"), p, notify))
        return kUsage;
    try {
        auto store = openStore(ctx);
        // The lease outlives four of the slowest ticks, so a quiet watch keeps it.
        SweepOperations ops(*store, cliOperations(pace.slowMs));
        const Sweep sw = ops.sweep(p.positionalArguments().front());
        return watchSweep(ops, sw, false, pace, notify);
    } catch (const OperationError &e) {
        return reportFailure(QStringLiteral("watch"), e);
    }
}

}  // namespace orrery::cli
