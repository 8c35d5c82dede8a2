// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweepoverview.h"

#include "orrery/core/format.h"
#include "orrery/core/pendingreason.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

#include <cmath>

namespace orrery::core {

std::optional<double> SweepOverview::cost() const
{
    if (!price)
        return std::nullopt;
    return usage.gpuHours * price->perGpuHour;
}

QString SweepOverview::doneText() const
{
    return QStringLiteral("%1/%2").arg(counts.ended()).arg(sweep.trialCount);
}

QString SweepOverview::countsText() const
{
    QStringList parts;
    auto add = [&parts](int n, const char *word) {
        if (n > 0)
            parts << QStringLiteral("%1 %2").arg(n).arg(QLatin1String(word));
    };
    add(counts.done, "done");
    add(counts.running, "running");
    add(counts.queued, "queued");
    add(counts.failed, "failed");
    add(counts.stopped, "stopped");
    return parts.isEmpty() ? QStringLiteral("nothing submitted yet") : parts.join(QStringLiteral(", "));
}

QString SweepOverview::countsLine() const
{
    return QStringLiteral("%1 of %2 trials: %3").arg(counts.total).arg(sweep.trialCount).arg(countsText());
}

SweepOverview::Verdict SweepOverview::verdict() const
{
    switch (sweep.sweepState()) {
    case SweepState::Pending:
    case SweepState::Running:
    case SweepState::Cancelling:
        return Verdict::Active;
    case SweepState::Finished:
        return counts.failed > 0 ? Verdict::Mixed : Verdict::Good;
    case SweepState::Failed:
        return Verdict::Bad;
    case SweepState::Cancelled:
    case SweepState::Unknown:
        break;
    }
    return counts.failed > 0 ? Verdict::Mixed : Verdict::Good;
}

QString SweepOverview::stateText() const
{
    if (sweep.sweepState() == SweepState::Finished && counts.failed > 0)
        return QStringLiteral("%1 (%2 failed)").arg(sweep.state).arg(counts.failed);
    return sweep.state;
}

QString SweepOverview::trialNote(const Trial &t) const
{
    if (const QString waits = pendingText(t, nowMs); !waits.isEmpty())
        return waits;
    return t.isActive() || t.trialState() == TrialState::Pending ? t.detail : t.exitReason;
}

const RunRow *bestOf(const Sweep &sweep, const QList<const RunRow *> &runs)
{
    if (sweep.metricName.isEmpty())
        return nullptr;
    const bool maximize = sweep.metricGoal == Goal::Maximize;
    // The store's order (bestRun): "value IS NULL, value ASC|DESC, run_id"; SQLite keeps NaN as
    // NULL.
    auto first = [&](bool leaveOutEnded) {
        const RunRow *best = nullptr;
        std::optional<double> bestValue;
        for (const RunRow *r : runs) {
            if (leaveOutEnded && (r->run.status == RunStatus::Killed || r->run.status == RunStatus::Failed))
                continue;
            const LatestMetric *m = r->metric(sweep.metricName);
            const std::optional<double> v =
                m && !std::isnan(m->last.value) ? std::optional<double>(m->last.value) : std::nullopt;
            bool better = !best;
            if (best && v && !bestValue)
                better = true;
            else if (best && v && bestValue)
                better = maximize ? *v > *bestValue : *v < *bestValue;
            if (best && !better && v == bestValue)  // the same value, or neither has one
                better = r->run.id < best->run.id;
            if (better) {
                best = r;
                bestValue = v;
            }
        }
        return best;
    };
    const RunRow *best = first(true);
    if (!best || !best->metric(sweep.metricName))
        best = first(false);
    return best && best->metric(sweep.metricName) ? best : nullptr;
}

SweepOverview readSweepOverview(const TrackingStore &store, const Sweep &sweep,
                                const OverviewOptions &options)
{
    const qint64 now = options.nowMs > 0 ? options.nowMs : QDateTime::currentMSecsSinceEpoch();
    SweepOverview o;
    o.sweep = sweep;
    o.price = options.price;
    o.attempts = store.trials(sweep.id);
    // The runs the caller read, where it read them all; archived ones are not the store's to show.
    auto given = [&options](RunId run) -> const RunRow * {
        const RunRow *r = options.runs->value(run);
        return r && !r->run.archived ? r : nullptr;
    };
    o.trials = options.runs ? summarizeTrials(sweep, o.attempts, given) : store.trialSummaries(sweep.id);
    o.counts = countPhases(o.attempts);
    o.nowMs = now;
    o.waiting = queuedSummary(latestAttempts(o.attempts), now);
    o.usage = usageOf(o.attempts, now);
    for (const Trial &t : std::as_const(o.attempts))
        o.trialUsage[t.index] += attemptUsage(t, now);
    std::optional<RunRow> best;
    if (options.runs) {
        QSet<RunId> seen;
        QList<const RunRow *> runs;
        for (const Trial &t : std::as_const(o.attempts))
            if (const RunRow *r = given(t.runId); r && !seen.contains(t.runId)) {
                seen.insert(t.runId);
                runs.push_back(r);
            }
        if (const RunRow *r = bestOf(sweep, runs))
            best = *r;
    } else {
        best = store.bestRun(sweep.id);
    }
    if (best) {
        if (const LatestMetric *m = best->metric(sweep.metricName)) {
            BestRun b{best->run.id, best->run.name, best->run.runDir, -1, m->last.value, {}};
            for (const TrialSummary &t : std::as_const(o.trials))
                if (t.trial.runId == b.run)
                    b.trial = t.trial.index;
            if (options.bestVideo)
                for (const Artifact &a : store.details(b.run).artifacts)
                    if (a.kind == QLatin1String("video"))
                        b.video = a.localPath.isEmpty() ? a.remotePath : a.localPath;
            o.best = b;
        }
    }
    if (options.tracker)
        o.progress = options.tracker->update(sweep, o.trials, best, now);
    if (options.goodput)
        o.goodput = sweepGoodput(store, sweep.id, now).total;
    return o;
}

QJsonObject overviewJson(const SweepOverview &o)
{
    const Sweep &sw = o.sweep;
    QJsonArray trials;
    for (const TrialSummary &r : o.trials) {
        QJsonObject t{{QStringLiteral("index"), r.trial.index},
                      {QStringLiteral("attempts"), r.attempts},
                      {QStringLiteral("state"), r.trial.state},
                      {QStringLiteral("params"), QJsonDocument::fromJson(r.trial.params.toUtf8()).object()},
                      {QStringLiteral("step"), r.step},
                      {QStringLiteral("task"), r.trial.task},
                      {QStringLiteral("run_id"), r.trial.runId},
                      {QStringLiteral("run_dir"), r.trial.runDir},
                      {QStringLiteral("detail"), r.trial.detail},
                      {QStringLiteral("reason"), r.trial.exitReason},
                      {QStringLiteral("note"), o.trialNote(r.trial)},
                      {QStringLiteral("usage"), usageJson(o.trialUsage.value(r.trial.index), o.price)}};
        if (r.trial.expectedStartMs > 0 && r.trial.trialState() == TrialState::Queued)
            t.insert(QStringLiteral("expected_start_ms"), r.trial.expectedStartMs);
        if (r.latest)
            t.insert(QStringLiteral("latest"), jsonNumber(*r.latest));
        if (r.best)
            t.insert(QStringLiteral("best"), jsonNumber(*r.best));
        trials.append(t);
    }
    QJsonObject j{{QStringLiteral("id"), sw.id},
                  {QStringLiteral("name"), sw.name},
                  {QStringLiteral("state"), sw.state},
                  {QStringLiteral("message"), sw.message},
                  {QStringLiteral("executor"), sw.cluster.isEmpty() ? QStringLiteral("local") : sw.cluster},
                  {QStringLiteral("method"), sw.method},
                  {QStringLiteral("metric"), sw.metricName},
                  {QStringLiteral("goal"), toString(sw.metricGoal)},
                  {QStringLiteral("dir"), sw.rootDir},
                  {QStringLiteral("trial_count"), sw.trialCount},
                  {QStringLiteral("counts"),
                   QJsonObject{{QStringLiteral("done"), o.counts.done},
                               {QStringLiteral("running"), o.counts.running},
                               {QStringLiteral("queued"), o.counts.queued},
                               {QStringLiteral("failed"), o.counts.failed},
                               {QStringLiteral("stopped"), o.counts.stopped}}},
                  {QStringLiteral("usage"), usageJson(o.usage, o.price)},
                  {QStringLiteral("trials"), trials}};
    if (!o.waiting.isEmpty())
        j.insert(QStringLiteral("waiting"), o.waiting);
    if (o.goodput) {
        j.insert(QStringLiteral("goodput"), o.goodput->goodput());
        // Time lost to hangs (docs/sweeps.md "Hangs"), where there was any.
        if (o.goodput->hungS > 0)
            j.insert(QStringLiteral("hung_s"), o.goodput->hungS);
    }
    if (o.best) {
        QJsonObject b{{QStringLiteral("run_id"), o.best->run},
                      {QStringLiteral("name"), o.best->name},
                      {QStringLiteral("run_dir"), o.best->runDir},
                      {QStringLiteral("trial"), o.best->trial},
                      {QStringLiteral("video"), o.best->video},
                      {QStringLiteral("value"), jsonNumber(o.best->value)}};
        j.insert(QStringLiteral("best"), b);
    }
    return j;
}

}  // namespace orrery::core
