// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweeprules.h"

#include "orrery/core/format.h"

#include "textutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QJsonValue>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <stdexcept>

namespace orrery::core {

// An attempt's reason when it left no exit.json: the executor's word only.
constexpr char kNoExitJson[] = " (no exit.json)";
constexpr char kEndedWithoutExitJson[] = "ended without exit.json";

// --- an attempt's verdict --------------------------------------------------------------------

QString AttemptVerdict::exitReason() const
{
    return step.isEmpty()  ? reason
        : reason.isEmpty() ? QStringLiteral("step %1").arg(step)
                           : QStringLiteral("%1 (step %2)").arg(reason, step);
}

namespace {

// exit.json's words (completed, failed, preempted) are trial states too; anything else from a
// trainer, and a file that does not say (TrackingStore::applyExit's test: JSON, an object, a
// "state"), is a failure.
void judgeExitJson(const QByteArray &exitJson, AttemptVerdict &v)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(exitJson, &parseError);
    const QJsonObject o = doc.object();
    const QString state = o.value(QLatin1String("state")).toString();
    const bool readable = parseError.error == QJsonParseError::NoError && doc.isObject() && !state.isEmpty();
    v.ended = readable ? trialStateFromText(state) : TrialState::Failed;
    if (v.ended != TrialState::Completed && v.ended != TrialState::Preempted)
        v.ended = TrialState::Failed;
    v.reason = readable ? o.value(QLatin1String("reason")).toString()
                        : QStringLiteral("unreadable exit.json: ") +
            (parseError.error != QJsonParseError::NoError ? parseError.errorString()
                                                          : QStringLiteral("no \"state\""));
    const QJsonValue step = o.value(QLatin1String("step"));
    v.step = step.isUndefined() ? QString() : QString::number(step.toInteger());
    if (const double t = o.value(QLatin1String("t")).toDouble(); t > 0)
        v.exitMs = qint64(t * 1000);
}

}  // namespace

std::optional<AttemptVerdict> attemptVerdict(const AttemptOutcome &outcome)
{
    const TaskStatus &st = outcome.status;
    if (!outcome.exitJson && st.state == TaskStatus::State::Unknown && !outcome.readAnswered)
        return std::nullopt;  // nothing known yet
    AttemptVerdict v;
    if (outcome.exitJson) {
        judgeExitJson(*outcome.exitJson, v);
    } else if (st.state == TaskStatus::State::Ended) {
        // No exit.json (a command of the user's need not write one): the exit status decides,
        // 0 completed, 75 (EX_TEMPFAIL) preempted, anything else failed.
        v.ended = st.exitCode == 0 ? TrialState::Completed
            : st.exitCode == kExitPreempted || st.detail.contains(QLatin1String("PREEMPTED"))
            ? TrialState::Preempted
            : TrialState::Failed;
        v.reason = v.ended == TrialState::Completed ? QString()
            : st.detail.isEmpty()                   ? QString::fromLatin1(kEndedWithoutExitJson)
                                                    : st.detail + QLatin1String(kNoExitJson);
        v.runEnd = v.ended == TrialState::Completed ? RunStatus::Finished
            : v.ended == TrialState::Preempted      ? RunStatus::Killed
                                                    : RunStatus::Failed;
    } else {
        v.ended = TrialState::Lost;
        v.reason = QStringLiteral("the executor has no record of the task and it left no exit.json");
        v.runEnd = RunStatus::Failed;
    }
    v.state = outcome.before == TrialState::Stopping ? TrialState::Stopped
        : outcome.before == TrialState::Cancelling   ? TrialState::Cancelled
                                                     : v.ended;
    return v;
}

// --- bad nodes --------------------------------------------------------------------------------

namespace {
const QString kNodeFaultPrefix = QStringLiteral("node fault on ");
}

std::optional<NodeFault> nodeFault(const AttemptOutcome &outcome)
{
    if (outcome.before != TrialState::Queued && outcome.before != TrialState::Running)
        return std::nullopt;  // stopped or cancelled by us: not the node's doing
    NodeFault f;
    if (outcome.exitJson) {
        const QJsonObject o = QJsonDocument::fromJson(*outcome.exitJson).object();
        f.cause = o.value(QLatin1String("cause")).toString();
        if (o.value(QLatin1String("state")).toString() != QLatin1String("failed"))
            return std::nullopt;
        // A device's fault in words: in an exit.json without a cause, or one whose cause is the
        // layer that met it (the bundled trainer's cuda and nccl: faults.h); not its bugs or OOMs.
        const bool deviceLayer =
            f.cause.isEmpty() || f.cause == QLatin1String("cuda") || f.cause == QLatin1String("nccl");
        if (deviceLayer && !deviceFaultWords(o.value(QLatin1String("reason")).toString()).isEmpty())
            f.cause = QStringLiteral("device");
        if (f.cause != QLatin1String("health") && f.cause != QLatin1String("node") &&
            f.cause != QLatin1String("device"))
            return std::nullopt;
        const QString node = o.value(QLatin1String("node")).toString().trimmed();
        f.nodes = !node.isEmpty()       ? QStringList{node}
            : outcome.nodes.size() == 1 ? outcome.nodes
                                        : QStringList();
        f.reason = o.value(QLatin1String("reason")).toString();
        if (f.reason.isEmpty())
            f.reason = f.cause == QLatin1String("health") ? QStringLiteral("health check failed")
                                                          : QStringLiteral("node-level failure");
    } else if (outcome.status.state == TaskStatus::State::Ended) {
        const QString word = outcome.status.detail.section(QLatin1Char(' '), 0, 0);
        if (word == QLatin1String("NODE_FAIL")) {
            f.cause = QStringLiteral("node-fail");
            f.nodes = outcome.nodes;
            f.reason = QStringLiteral("Slurm reported NODE_FAIL");
        } else if (word == QLatin1String("OUT_OF_MEMORY") && outcome.nodes.size() == 1) {
            // On one node the OOM-kill is that node's; over several, Slurm does not say whose.
            f.cause = QStringLiteral("oom");
            f.nodes = outcome.nodes;
            f.reason = QStringLiteral("Slurm reported OUT_OF_MEMORY");
        } else {
            return std::nullopt;
        }
    } else {
        return std::nullopt;
    }
    f.nodes.removeAll(QString());
    if (f.nodes.isEmpty())
        return std::nullopt;  // nobody to blame: an ordinary failure
    return f;
}

QString deviceFaultWords(const QString &reason)
{
    static const QRegularExpression words(
        QStringLiteral("uncorrectable ECC error|unspecified launch failure|fallen off the bus|"
                       "(?:device|devices|device\\(s\\)) (?:is |are |is/are )?busy or unavailable|"
                       "no CUDA-capable device|unhandled cuda error|unhandled system error|\\bXid\\b"),
        QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = words.match(reason);
    return m.hasMatch() ? m.captured(0) : QString();
}

QString nodeFaultReason(const NodeFault &fault)
{
    return QStringLiteral("%1%2 (%3): %4")
        .arg(kNodeFaultPrefix, fault.nodes.join(QLatin1Char(',')), fault.cause, fault.reason);
}

bool isNodeFault(const Trial &attempt)
{
    return attempt.trialState() == TrialState::Failed && attempt.exitReason.startsWith(kNodeFaultPrefix);
}

QString nodeNameError(const QString &node)
{
    static const QRegularExpression name(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._\\-]*$"));
    if (node.isEmpty())
        return QStringLiteral("a node name is required");
    if (!name.match(node).hasMatch() || node.size() > 255)
        return QStringLiteral("'%1' is not a node name (letters, digits, '.', '_' and '-')")
            .arg(node.left(100));
    return {};
}

SuspectNode userSuspect(const QString &cluster, const QString &node, const QString &reason, qint64 nowMs)
{
    if (const QString e = nodeNameError(node); !e.isEmpty())
        throw std::invalid_argument(e.toStdString());
    if (reason.trimmed().isEmpty())
        throw std::invalid_argument("a reason is required (--reason TEXT): it is shown with the node");
    return SuspectNode{cluster, node, reason.trimmed(), QStringLiteral("user"), nowMs, 0};
}

Exclusion excludedNodes(const QList<SuspectNode> &suspects, const QStringList &schedulable, int needed)
{
    Exclusion e;
    QStringList candidates;  // oldest first
    for (const SuspectNode &s : suspects)
        if ((schedulable.isEmpty() || schedulable.contains(s.node)) && !candidates.contains(s.node))
            candidates << s.node;
    if (!schedulable.isEmpty()) {
        const qsizetype room = std::max<qsizetype>(0, schedulable.size() - std::max(1, needed));
        while (candidates.size() > room)
            e.dropped << candidates.takeFirst();
    }
    e.exclude = candidates;
    if (!e.dropped.isEmpty())
        e.note =
            QStringLiteral("suspect node%1 %2 not excluded: the partition has %3 node%4 and a trial needs "
                           "%5; excluding %6 would leave too few")
                .arg(e.dropped.size() == 1 ? QString() : QStringLiteral("s"),
                     e.dropped.join(QStringLiteral(", ")))
                .arg(schedulable.size())
                .arg(schedulable.size() == 1 ? QString() : QStringLiteral("s"))
                .arg(std::max(1, needed))
                .arg(e.dropped.size() == 1 ? QStringLiteral("it") : QStringLiteral("them"));
    return e;
}

// --- an attempt's time span ------------------------------------------------------------------

qint64 runningAttemptStartMs(qint64 submittedMs, std::optional<qint64> elapsedMs, qint64 nowMs)
{
    return std::max(runningSinceMs(elapsedMs, nowMs), std::min(submittedMs, nowMs));
}

qint64 attemptLastEventMs(const QList<ProcessPhases> &phases, qint64 submittedMs)
{
    qint64 last = 0;
    for (const ProcessPhases &p : phases)
        if (p.processStartMs >= submittedMs)
            last = std::max(last, p.updatedMs);
    return last;
}

AttemptSpan endedSpan(qint64 startedMs, qint64 submittedMs, std::optional<qint64> elapsedMs,
                      std::optional<qint64> exitMs, const QList<ProcessPhases> &phases, qint64 nowMs)
{
    return endedAttemptSpan(startedMs, elapsedMs, exitMs, nowMs, submittedMs,
                            attemptLastEventMs(phases, submittedMs));
}

LiveAttempt liveAttempt(const Trial &read, const TaskStatus &status, qint64 nowMs)
{
    LiveAttempt live{read, false, false, {}};
    Trial &t = live.trial;
    if (!status.detail.isEmpty())
        t.detail = status.detail;
    // A queued attempt's expected start, as the scheduler now says it (0: none given).
    if (status.state == TaskStatus::State::Queued)
        t.expectedStartMs = status.expectedStartMs.value_or(0);
    const bool running = status.state == TaskStatus::State::Running;
    if (!status.nodes.isEmpty())
        t.nodes = status.nodes.join(QLatin1Char(','));
    if (status.state == TaskStatus::State::Queued && read.trialState() == TrialState::Running &&
        !read.nodes.isEmpty() && status.nodes.isEmpty()) {
        live.requeuedFrom = read.nodes.split(QLatin1Char(','), Qt::SkipEmptyParts);
        t.nodes.clear();
        t.detail = QStringLiteral("requeued by the scheduler from %1; %2")
                       .arg(live.requeuedFrom.join(QLatin1Char(',')), t.detail);
    }
    if (running && t.startedMs == 0)
        t.startedMs = runningAttemptStartMs(t.submittedMs, status.elapsedMs, nowMs);
    if (running && read.trialState() == TrialState::Queued) {
        t.setState(TrialState::Running);
        live.startedRunning = true;
    }
    live.changed = t.trialState() != read.trialState() || t.detail != read.detail ||
        t.startedMs != read.startedMs || t.nodes != read.nodes || t.expectedStartMs != read.expectedStartMs;
    return live;
}

// --- resubmission ----------------------------------------------------------------------------

AttemptCounts countEarlierAttempts(const QList<Trial> &attempts, const Trial &ended)
{
    int from = ended.userRetry ? ended.attempt : 0;
    for (const Trial &a : attempts)
        if (a.index == ended.index && a.userRetry && a.attempt < ended.attempt)
            from = std::max(from, a.attempt);
    AttemptCounts c;
    for (const Trial &a : attempts) {  // by attempt (TrackingStore::trials' order)
        if (a.index != ended.index || a.id == ended.id || a.attempt < from || a.attempt > ended.attempt)
            continue;
        if (a.trialState() == TrialState::Preempted)
            ++c.preemptions;
        else if (isHungAttempt(a))  // hangs have their own bound (kMaxHangs), not `retries`
            ++c.hangs;
        else if (isNodeFault(a))
            ++c.nodeFaults;
        else if (phaseOf(a.trialState()) == Phase::Failed) {
            ++c.failures;
            c.previousReason = a.exitReason;
        }
    }
    return c;
}

QString whyNotResubmitted(const QList<Trial> &attempts, const Trial &ended, TrialState verdict, int retries)
{
    const AttemptCounts c = countEarlierAttempts(attempts, ended);
    if (isHungAttempt(ended))
        return c.hangs + 1 > kMaxHangs ? QStringLiteral("hung %1 times").arg(c.hangs + 1) : QString();
    if (verdict == TrialState::Preempted)
        return c.preemptions + 1 > kMaxPreemptions
            ? QStringLiteral("preempted %1 times").arg(c.preemptions + 1)
            : QString();
    if (isNodeFault(ended) && c.nodeFaults + 1 <= kMaxNodeFaults)
        return {};  // a bad node's doing, not the trial's: retried elsewhere, `retries` untouched
    if (c.failures + 1 > retries)
        return retries == 0 ? QStringLiteral("no retries (retries: 0)")
                            : QStringLiteral("failed %1 times").arg(c.failures + 1);
    // Only a reason the program gave (exit.json): two bare exit statuses say nothing of the cause
    // (a full disk and a crash both read "FAILED (NonZeroExitCode) (no exit.json)").
    if (c.failures > 0 && c.previousReason == ended.exitReason &&
        !ended.exitReason.endsWith(QLatin1String(kNoExitJson)) &&
        ended.exitReason != QLatin1String(kEndedWithoutExitJson))
        return QStringLiteral("failed the same way twice (same reason, same step): not retried again");
    return {};
}

Trial nextAttempt(const Trial &t)
{
    Trial next = t;
    next.id = 0;
    next.attempt = t.attempt + 1;
    next.state.clear();
    next.exitReason.clear();
    next.detail.clear();
    next.nodes.clear();
    next.task.clear();
    next.slurmJobId.clear();
    next.slurmTaskId.clear();
    next.submittedMs = 0;
    next.startedMs = 0;
    next.endedMs = 0;
    next.progressMs = 0;  // this attempt's own progress (the hang rule's)
    next.health.clear();
    next.expectedStartMs = 0;
    next.userRetry = false;
    return next;
}

ResubmitDecision decideResubmission(const QList<Trial> &attempts, const Trial &ended, int retries,
                                    int budgetRoom)
{
    const TrialState verdict = ended.trialState();
    const bool preempted = verdict == TrialState::Preempted;
    ResubmitDecision r;
    r.state = verdict;
    r.exitReason = ended.exitReason;
    r.why = whyNotResubmitted(attempts, ended, verdict, retries);
    if (!r.why.isEmpty()) {
        r.action = Resubmit::GivenUp;
        if (preempted)  // out of preemptions: the trial ends as failed
            r.state = TrialState::Failed;
        return r;
    }
    // A resubmission is a launch like any other: within the budget.
    if (budgetRoom <= 0) {
        r.action = Resubmit::OverBudget;
        if (preempted)
            r.state = TrialState::Failed;
        r.exitReason += QStringLiteral("; not resubmitted: the budget could be exceeded");
        return r;
    }
    r.action = Resubmit::Yes;
    r.next = nextAttempt(ended);
    return r;
}

bool runnerResubmits(const QList<Trial> &attempts, const Trial &latest, int retries)
{
    const TrialState state = latest.trialState();
    const bool runnerMayRetry =
        state == TrialState::Failed || state == TrialState::Lost || state == TrialState::Preempted;
    const bool outOfPreemptions = state != TrialState::Preempted &&
        countEarlierAttempts(attempts, latest).preemptions >= kMaxPreemptions;
    return runnerMayRetry && !latest.task.isEmpty() && !outOfPreemptions &&
        whyNotResubmitted(attempts, latest, state, retries).isEmpty();
}

// --- hangs ---------------------------------------------------------------------------------

HangLimits hangLimits(std::optional<qint64> hangTimeoutMs, qint64 longestGapMs)
{
    HangLimits l;
    if (hangTimeoutMs) {
        l.progressMs = *hangTimeoutMs;
        l.startupMs = 2 * *hangTimeoutMs;
        l.rule = QStringLiteral("hang_timeout %1").arg(formatDuration(*hangTimeoutMs));
        return l;
    }
    const qint64 paced = kHangPaceFactor * std::max<qint64>(longestGapMs, 0);
    l.progressMs = std::max(kHangFloorMs, paced);
    l.startupMs = kAutoStartupGraceMs;
    l.rule = paced > kHangFloorMs ? QStringLiteral("hang_timeout auto: %1, %2 × the longest gap seen, %3")
                                        .arg(formatDuration(l.progressMs))
                                        .arg(kHangPaceFactor)
                                        .arg(formatDuration(longestGapMs))
                                  : QStringLiteral("hang_timeout auto: %1").arg(formatDuration(l.progressMs));
    return l;
}

bool isHungAttempt(const Trial &t)
{
    return t.exitReason.startsWith(QLatin1String(kHungPrefix));
}

QList<Hang> hungAttempts(const QMap<int, Trial> &latest, std::optional<qint64> hangTimeoutMs,
                         const QHash<int, qint64> &longestGapMs, qint64 nowMs)
{
    QList<Hang> hangs;
    for (const Trial &t : latest) {
        if (t.trialState() != TrialState::Running || t.startedMs <= 0)
            continue;
        const HangLimits l = hangLimits(hangTimeoutMs, longestGapMs.value(t.index, 0));
        const bool progressed = t.progressMs >= t.startedMs;
        const qint64 since = progressed ? t.progressMs : t.startedMs;
        const qint64 limit = progressed ? l.progressMs : l.startupMs;
        const qint64 idle = nowMs - since;
        if (isHungAttempt(t)) {
            if (idle > limit + kHangKillGraceMs)
                hangs.append({t.index, Hang::Action::Kill, t.exitReason});
            continue;
        }
        if (idle <= limit)
            continue;
        const QString message = progressed
            ? QStringLiteral("no progress for %1 (%2)").arg(formatDuration(idle), l.rule)
            : QStringLiteral("no progress in the %1 since it started (%2; %3 allowed before the first)")
                  .arg(formatDuration(idle), l.rule, formatDuration(limit));
        hangs.append({t.index, Hang::Action::End, message});
    }
    return hangs;
}

// --- array limits --------------------------------------------------------------------------

int submitRoom(const SubmitLimits &limits, int active, int waiting, QString *why)
{
    int room = std::max(0, waiting);
    QString binding;
    const auto cap = [&](int limit, int allowed, const QString &words) {
        if (limit > 0 && allowed < room) {
            room = std::max(0, allowed);
            binding = words.arg(limit);
        }
    };
    cap(limits.maxArraySize, limits.maxArraySize, QStringLiteral("the cluster's MaxArraySize %1"));
    cap(limits.maxSubmitJobs, limits.maxSubmitJobs - active,
        QStringLiteral("your limit of %1 submitted jobs (MaxSubmitJobs)"));
    cap(limits.maxJobCount, limits.maxJobCount - active, QStringLiteral("the cluster's MaxJobCount %1"));
    if (why)
        *why = binding;
    return room;
}

int laterBatchRoom(int maxConcurrent, int active, int budgetRoom, const SubmitLimits &limits, int waiting,
                   QString *why)
{
    const int wanted = std::min({std::max(1, maxConcurrent) - active, budgetRoom, waiting});
    if (wanted <= 0) {
        if (why)
            why->clear();
        return 0;
    }
    return submitRoom(limits, active, wanted, why);
}

// --- early stopping --------------------------------------------------------------------------

bool stopsEarly(const SweepSpec &spec)
{
    return spec.earlyTerminate && !spec.metricName.isEmpty();
}

QList<EarlyStop> earlyStops(const SweepSpec &spec, const QMap<int, Trial> &latest,
                            const QList<Trial> &attempts,
                            const QHash<int, QList<std::pair<qint64, double>>> &points)
{
    if (!stopsEarly(spec))
        return {};
    QSet<int> retriedByUser;
    for (const Trial &a : attempts)
        if (a.userRetry)
            retriedByUser.insert(a.index);
    QList<TrialHistory> histories;
    for (const Trial &t : latest) {
        TrialHistory h;
        h.trial = t.index;
        h.running = t.trialState() == TrialState::Running && !retriedByUser.contains(t.index);
        h.points = points.value(t.index);
        if (!h.points.isEmpty())
            histories.append(h);
    }
    QList<EarlyStop> stops;
    for (const StopDecision &s :
         decideEarlyStops(*spec.earlyTerminate, spec.goal, spec.metricName, histories))
        stops.append({int(s.trial), s.reason, QStringLiteral("stopped early: ") + s.reason});
    return stops;
}

// --- the sweep's verdict ---------------------------------------------------------------------

SweepTally tallyTrials(const QMap<int, Trial> &latest)
{
    SweepTally c;
    c.trials = latest.size();
    for (const Trial &t : latest) {
        if (t.isActive()) {
            ++c.active;
            c.running += t.trialState() == TrialState::Running ? 1 : 0;
        } else if (t.trialState() == TrialState::Pending)
            ++c.pending;
        else if (t.trialState() == TrialState::Completed)
            ++c.completed;
        else if (t.trialState() == TrialState::Stopped)
            ++c.stopped;
        else if (t.trialState() == TrialState::Cancelled)
            ++c.cancelled;
        else
            ++c.failed;
    }
    return c;
}

std::optional<TargetHit> targetReached(const SweepSpec &spec, const QMap<int, Trial> &latest,
                                       const QHash<int, double> &lastValues)
{
    if (!spec.metricTarget || spec.metricName.isEmpty())
        return std::nullopt;
    const double target = *spec.metricTarget;
    for (const Trial &t : latest) {
        const auto v = lastValues.find(t.index);
        if (t.trialState() != TrialState::Completed || v == lastValues.end() || std::isnan(*v))
            continue;
        const bool reached = spec.goal == Goal::Maximize ? *v >= target : *v <= target;
        if (reached)
            return TargetHit{
                t.index, *v,
                QStringLiteral("metric.target reached: trial %1 completed with %2 %3 (target %4 %5)")
                    .arg(t.index)
                    .arg(spec.metricName, formatDouble(*v),
                         spec.goal == Goal::Maximize ? QStringLiteral(">=") : QStringLiteral("<="),
                         formatDouble(target))};
    }
    return std::nullopt;
}

QList<int> notStartedTrials(const QMap<int, Trial> &latest)
{
    QList<int> out;
    for (const Trial &t : latest)
        if (t.trialState() == TrialState::Queued && !t.task.isEmpty())
            out << t.index;
    return out;
}

std::optional<SweepVerdict> sweepVerdict(const SweepTally &c, const SweepSpec &spec, SweepState now,
                                         int planned, const QString &budgetStop, const QString &targetStop)
{
    const bool open = c.cancelled == 0 && now != SweepState::Cancelling;
    const int toLaunch = spec.method == SearchMethod::Bayes ? spec.runCap : spec.budgetGpuHours ? planned : 0;
    const bool unlaunched = open && c.trials < toLaunch;
    // Pending attempts wait on the executor's limits (submitRoom), not on the budget: they are
    // launched as room frees, so the sweep goes on while any is left.
    const bool moreToCome =
        (unlaunched || (open && c.pending > 0)) && budgetStop.isEmpty() && targetStop.isEmpty();
    if (c.active > 0 || moreToCome)
        return std::nullopt;
    SweepVerdict v;
    v.state = now == SweepState::Cancelling ? SweepState::Cancelled
        : c.completed + c.stopped == 0      ? SweepState::Failed
                                            : SweepState::Finished;
    if (!targetStop.isEmpty())
        v.message = unlaunched ? QStringLiteral("%1; %2 of %3 trials not launched; ")
                                     .arg(targetStop)
                                     .arg(toLaunch - c.trials)
                                     .arg(toLaunch)
                               : targetStop + QStringLiteral("; ");
    else if (unlaunched)
        v.message = QStringLiteral("stopped by its budget: %1; %2 of %3 trials not launched; ")
                        .arg(budgetStop)
                        .arg(toLaunch - c.trials)
                        .arg(toLaunch);
    v.message += QStringLiteral("%1 completed, %2 stopped early, %3 failed")
                     .arg(c.completed)
                     .arg(c.stopped)
                     .arg(c.failed);
    if (c.cancelled)
        v.message += QStringLiteral(", %1 cancelled").arg(c.cancelled);
    return v;
}

}  // namespace orrery::core
