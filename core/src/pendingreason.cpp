// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/pendingreason.h"

#include <QHash>
#include <QMap>

#include <algorithm>

namespace orrery::core {

namespace {

struct Row {
    const char *code;
    const char *words;
    PendingOutlook outlook;
};

constexpr auto W = PendingOutlook::Waits;
constexpr auto A = PendingOutlook::NeedsAction;
constexpr auto N = PendingOutlook::Never;

// Slurm's job_state_reason codes as squeue's %r prints them (slurm.h, Slurm 22.05 to 24.11) and
// what each means for a person waiting on a trial. "Never" only where Slurm itself does not start
// the job until the request or the limit changes: a time limit or node count outside the
// partition's (PartitionTimeLimit: captured on the fixture's `debug` partition, MaxTime 30 min,
// with a one-hour trial), a per-job QOS or association maximum, a dependency that failed, an
// account or QOS the user may not use.
constexpr Row kReasons[] = {
    {"Priority", "waiting behind jobs of higher priority", W},
    {"Resources", "waiting for free nodes or GPUs", W},
    {"Dependency", "waiting for a job it depends on", W},
    {"BeginTime", "waiting for its requested start time", W},
    {"JobArrayTaskLimit", "held back by the sweep's max_concurrent (the array's %N throttle)", W},
    {"ReqNodeNotAvail", "a node it needs is down, drained or reserved", W},
    {"NodeDown", "a node it needs is down", W},
    {"PartitionDown", "its partition is down", W},
    {"PartitionInactive", "its partition is inactive", W},
    {"Reservation", "waiting for its reservation to start", W},
    {"Licenses", "waiting for licenses", W},
    {"Cleaning", "a previous run of it is still being cleaned up", W},
    {"Prolog", "the node's prolog is running", W},
    {"BurstBufferResources", "waiting for burst buffer space", W},
    {"FrontEndDown", "no front end node is available", W},
    {"MaxRequeue", "requeued more often than allowed; held", A},
    {"QOSMaxJobsPerUserLimit", "your QOS's limit on running jobs per user is reached", W},
    {"QOSMaxJobsPerAccountLimit", "your QOS's limit on running jobs per account is reached", W},
    {"QOSMaxGRESPerUser", "your QOS's limit on GPUs per user is in use by your other jobs", W},
    {"QOSMaxGRESPerAccount", "your QOS's limit on GPUs per account is in use", W},
    {"QOSMaxCpuPerUserLimit", "your QOS's limit on CPUs per user is in use by your other jobs", W},
    {"QOSMaxNodePerUserLimit", "your QOS's limit on nodes per user is in use by your other jobs", W},
    {"QOSMaxMemoryPerUser", "your QOS's limit on memory per user is in use by your other jobs", W},
    {"QOSGrpGRES", "your QOS's group limit on GPUs is in use", W},
    {"QOSGrpCpuLimit", "your QOS's group limit on CPUs is in use", W},
    {"QOSGrpNodeLimit", "your QOS's group limit on nodes is in use", W},
    {"QOSGrpJobsLimit", "your QOS's group limit on running jobs is reached", W},
    {"QOSGrpMemLimit", "your QOS's group limit on memory is in use", W},
    {"QOSGrpGRESRunMinutes", "your QOS's group budget of GPU-minutes in flight is used", W},
    {"QOSGrpCPURunMinutesLimit", "your QOS's group budget of CPU-minutes in flight is used", W},
    {"AssocGrpGRES", "your account's group limit on GPUs is in use", W},
    {"AssocGrpCpuLimit", "your account's group limit on CPUs is in use", W},
    {"AssocGrpNodeLimit", "your account's group limit on nodes is in use", W},
    {"AssocGrpJobsLimit", "your account's group limit on running jobs is reached", W},
    {"AssocMaxJobsLimit", "your account's limit on running jobs is reached", W},
    {"AssocGrpMemLimit", "your account's group limit on memory is in use", W},
    {"AssocGrpGRESRunMinutes", "your account's budget of GPU-minutes in flight is used", W},
    {"AssocGrpCPURunMinutesLimit", "your account's budget of CPU-minutes in flight is used", W},
    {"JobHeldUser", "held by its owner: `scontrol release <job id>` lets it start", A},
    {"JobHeldAdmin", "held by an administrator: ask them to release it", A},
    {"launch failed requeued held",
     "its launch failed on a node and Slurm requeued it held: check the node, then `scontrol release`", A},
    {"PartitionTimeLimit", "the time limit is above the partition's maximum (MaxTime)", N},
    {"PartitionNodeLimit", "the node count is outside the partition's limits", N},
    {"PartitionConfig", "the request asks for more than the partition has (CPUs, GPUs or memory)", N},
    {"BadConstraints", "no node can satisfy its constraints", N},
    {"DependencyNeverSatisfied", "a job it depends on failed, so it can never start", N},
    {"QOSMaxWallDurationPerJobLimit", "the time limit is above your QOS's maximum per job", N},
    {"AssocMaxWallDurationPerJobLimit", "the time limit is above your account's maximum per job", N},
    {"QOSMaxGRESPerJob", "it asks for more GPUs than your QOS allows per job", N},
    {"QOSMaxCpuPerJobLimit", "it asks for more CPUs than your QOS allows per job", N},
    {"QOSMaxNodePerJobLimit", "it asks for more nodes than your QOS allows per job", N},
    {"InvalidAccount", "its account is not valid for you", N},
    {"InvalidQOS", "its QOS is not valid for you", N},
};

const Row *find(const QString &code)
{
    static const QHash<QString, const Row *> byCode = [] {
        QHash<QString, const Row *> h;
        for (const Row &r : kReasons)
            h.insert(QLatin1String(r.code), &r);
        return h;
    }();
    return byCode.value(code, nullptr);
}

QString expectedText(qint64 startMs, qint64 nowMs)
{
    return startMs > 0 ? QStringLiteral("expected start %1").arg(startsIn(startMs, nowMs)) : QString();
}

}  // namespace

QString pendingCode(const QString &detail)
{
    const qsizetype open = detail.indexOf(QLatin1Char('('));
    const qsizetype close = detail.lastIndexOf(QLatin1Char(')'));
    if (open < 0 || close <= open)
        return {};
    QString code = detail.mid(open + 1, close - open - 1).trimmed();
    // "ReqNodeNotAvail, UnavailableNodes:node2": the code is the first word group.
    if (const qsizetype comma = code.indexOf(QLatin1Char(',')); comma > 0)
        code = code.left(comma).trimmed();
    return code == QLatin1String("None") ? QString() : code;
}

PendingReason pendingReason(const QString &code)
{
    if (const Row *r = find(code))
        return {code, QLatin1String(r->words), r->outlook};
    return {code, QStringLiteral("Slurm says %1").arg(code), PendingOutlook::Waits};
}

QString startsIn(qint64 startMs, qint64 nowMs)
{
    const qint64 minutes = (startMs - nowMs + 30'000) / 60'000;
    if (startMs <= nowMs || minutes <= 0)
        return QStringLiteral("now");
    if (minutes < 120)
        return QStringLiteral("in ~%1 min").arg(minutes);
    if (minutes < 48 * 60)
        return QStringLiteral("in ~%1 h").arg((minutes + 30) / 60);
    return QStringLiteral("in ~%1 days").arg((minutes + 12 * 60) / (24 * 60));
}

QString pendingText(const Trial &t, qint64 nowMs)
{
    if (t.trialState() != TrialState::Queued)
        return {};
    const QString code = pendingCode(t.detail);
    if (code.isEmpty())
        return t.expectedStartMs > 0 ? expectedText(t.expectedStartMs, nowMs) : QString();
    const PendingReason r = pendingReason(code);
    QString text = QStringLiteral("%1 (%2)").arg(r.words, r.code);
    if (r.outlook == PendingOutlook::Never)
        return QStringLiteral("never starts: ") + text;
    if (r.outlook == PendingOutlook::NeedsAction)
        return QStringLiteral("held: ") + text;
    if (t.expectedStartMs > 0)
        text += QStringLiteral(", ") + expectedText(t.expectedStartMs, nowMs);
    return text;
}

QString queuedSummary(const QList<Trial> &latest, qint64 nowMs)
{
    struct Group {
        int count = 0;
        qint64 earliest = 0;
        PendingReason reason;
    };
    QMap<QString, Group> groups;
    QMap<QString, int> notSubmitted;  // pending attempts by why they are held
    for (const Trial &t : latest) {
        if (t.trialState() == TrialState::Pending) {
            QString why = t.detail;
            if (why.startsWith(QLatin1String("held: ")))
                why = why.mid(6);
            ++notSubmitted[why];
            continue;
        }
        if (t.trialState() != TrialState::Queued)
            continue;
        const QString code = pendingCode(t.detail);
        if (code.isEmpty())
            continue;
        Group &g = groups[code];
        g.reason = pendingReason(code);
        ++g.count;
        if (t.expectedStartMs > 0 && (g.earliest == 0 || t.expectedStartMs < g.earliest))
            g.earliest = t.expectedStartMs;
    }
    QList<Group> order(groups.begin(), groups.end());
    // What never clears first (it needs the user), then what needs an action, then by count.
    std::stable_sort(order.begin(), order.end(), [](const Group &a, const Group &b) {
        if (a.reason.outlook != b.reason.outlook)
            return int(a.reason.outlook) > int(b.reason.outlook);
        return a.count > b.count;
    });
    QStringList parts;
    for (const Group &g : std::as_const(order)) {
        switch (g.reason.outlook) {
        case PendingOutlook::Never:
            parts << QStringLiteral("%1 never start%2: %3 — %4")
                         .arg(g.count)
                         .arg(g.count == 1 ? QStringLiteral("s") : QString())
                         .arg(g.reason.code, g.reason.words);
            break;
        case PendingOutlook::NeedsAction:
            parts << QStringLiteral("%1 held: %2 — %3").arg(g.count).arg(g.reason.code, g.reason.words);
            break;
        case PendingOutlook::Waits:
            parts << (g.earliest > 0 ? QStringLiteral("%1 queued: %2 (%3)")
                                           .arg(g.count)
                                           .arg(g.reason.code, expectedText(g.earliest, nowMs))
                                     : QStringLiteral("%1 queued: %2 — %3")
                                           .arg(g.count)
                                           .arg(g.reason.code, g.reason.words));
            break;
        }
    }
    for (auto it = notSubmitted.cbegin(); it != notSubmitted.cend(); ++it)
        parts << (it.key().isEmpty()
                      ? QStringLiteral("%1 not submitted yet").arg(it.value())
                      : QStringLiteral("%1 not submitted yet: %2").arg(it.value()).arg(it.key()));
    return parts.join(QStringLiteral("; "));
}

}  // namespace orrery::core
