// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/goodput.h"

#include "orrery/core/sweeprules.h"

#include <QDateTime>
#include <QMap>

#include <algorithm>
#include <limits>

namespace orrery::core {

namespace {

double seconds(qint64 ms)
{
    return double(ms) / 1000.0;
}

// The processes of one attempt (indexes into the run's processes, by start).
struct Slot {
    const Trial *trial = nullptr;  // nullptr: a process with no trial record
    QList<qsizetype> processes;
};

// Each process belongs to the attempt whose life (submitted → ended) overlaps its own (start →
// last event) the most; with no overlap (clocks apart), the nearest. So a process whose clock is
// a little behind still finds its attempt, and a short attempt keeps its own process even when
// the retry was submitted seconds after it started.
QList<Slot> assign(const QList<Trial> &attempts, const QList<ProcessPhases> &processes, qint64 nowMs)
{
    QList<Slot> out;
    if (attempts.isEmpty()) {
        for (qsizetype i = 0; i < processes.size(); ++i)
            out.push_back({nullptr, {i}});
        return out;
    }
    for (const Trial &t : attempts)
        out.push_back({&t, {}});
    for (qsizetype i = 0; i < processes.size(); ++i) {
        const ProcessPhases &p = processes[i];
        qsizetype best = 0;
        qint64 bestOverlap = std::numeric_limits<qint64>::min();
        for (qsizetype k = 0; k < attempts.size(); ++k) {
            const qint64 end = attempts[k].endedMs > 0 ? attempts[k].endedMs : nowMs;
            const qint64 overlap = std::min(std::max(p.updatedMs, p.processStartMs), end) -
                std::max(p.processStartMs, attempts[k].submittedMs);
            if (overlap >= bestOverlap) {
                best = k;
                bestOverlap = overlap;
            }
        }
        out[best].processes.push_back(i);
    }
    return out;
}

}  // namespace

GoodputParts &GoodputParts::operator+=(const GoodputParts &o)
{
    queueS += o.queueS;
    startupS += o.startupS;
    trainingS += o.trainingS;
    checkpointS += o.checkpointS;
    evalS += o.evalS;
    sampleS += o.sampleS;
    lostS += o.lostS;
    restS += o.restS;
    hungS += o.hungS;
    wallS += o.wallS;
    overrunS += o.overrunS;
    lostSteps += o.lostSteps;
    return *this;
}

RunGoodput computeRunGoodput(const QList<Trial> &attemptsIn, const QList<ProcessPhases> &processesIn,
                             qint64 runEndMs, qint64 nowMs)
{
    QList<Trial> attempts = attemptsIn;
    std::stable_sort(attempts.begin(), attempts.end(),
                     [](const Trial &a, const Trial &b) { return a.attempt < b.attempt; });
    QList<ProcessPhases> processes = processesIn;
    std::stable_sort(processes.begin(), processes.end(), [](const ProcessPhases &a, const ProcessPhases &b) {
        return a.processStartMs < b.processStartMs;
    });
    RunGoodput out;
    if (!attempts.isEmpty()) {
        out.run = attempts.front().runId;
        out.trialIndex = attempts.front().index;
    }
    // The furthest step any earlier process reached: a process that resumed below it redoes
    // the steps in between.
    QList<qint64> reachedBefore(processes.size(), 0);
    for (qsizetype i = 1; i < processes.size(); ++i)
        reachedBefore[i] = std::max(reachedBefore[i - 1], processes[i - 1].step);

    for (const Slot &slot : assign(attempts, processes, nowMs)) {
        AttemptGoodput a;
        GoodputParts &g = a.parts;
        qint64 lastEvent = 0;
        for (qsizetype i : slot.processes)
            lastEvent = std::max(lastEvent, processes[i].updatedMs);
        qint64 begin = 0, end = 0;
        bool ended = true;
        if (slot.trial) {
            const Trial &t = *slot.trial;
            a.attempt = t.attempt;
            a.state = t.state;
            ended = !t.isActive();
            begin = t.submittedMs > 0      ? t.submittedMs
                : slot.processes.isEmpty() ? t.startedMs
                                           : processes[slot.processes.front()].processStartMs;
            end = t.endedMs > 0 ? t.endedMs : ended ? std::max(lastEvent, begin) : nowMs;
        } else {
            a.attempt = -1;
            begin = processes[slot.processes.front()].processStartMs;
            end = lastEvent;
            // The run's end (exit.json) closes its last process.
            ended = slot.processes.back() != processes.size() - 1 || runEndMs > 0;
            if (slot.processes.back() == processes.size() - 1 && runEndMs > end)
                end = runEndMs;
        }
        // An attempt lives at least until its trainer's last event: an end seen at a follower's tick,
        // or Slurm's in whole seconds, can fall a little before it.
        if (ended)
            end = std::max(end, lastEvent);
        end = std::max(end, begin);
        g.wallS = seconds(end - begin);

        if (slot.processes.isEmpty()) {
            // Never seen running, or no `phases` events (killed in start-up, an older trainer).
            const qint64 started =
                slot.trial && slot.trial->startedMs > 0 ? std::clamp(slot.trial->startedMs, begin, end) : end;
            g.queueS = seconds(started - begin);
        } else {
            // Queue until the job started (the executor's word, if it saw it before the process
            // did), start-up from then: srun and the profile's setup lines come before the process.
            const ProcessPhases &first = processes[slot.processes.front()];
            const qint64 jobStart = slot.trial && slot.trial->startedMs > 0
                ? std::min(slot.trial->startedMs, first.processStartMs)
                : first.processStartMs;
            const qint64 job = std::clamp(jobStart, begin, end);
            const qint64 process = std::clamp(first.processStartMs, job, end);
            g.queueS = seconds(job - begin);
            g.startupS = seconds(process - job);
            a.resumeStep = first.resumeStep;
            for (qsizetype i : slot.processes) {
                const ProcessPhases &p = processes[i];
                g.startupS += p.startupS;
                g.checkpointS += p.checkpointS;
                g.evalS += p.evalS;
                g.sampleS += p.sampleS;
                const qint64 trained = std::max<qint64>(0, p.step - p.resumeStep);
                a.trainedSteps += trained;
                a.lastStep = std::max(a.lastStep, p.step);
                // Steps redone: from its resume step up to what an earlier process had reached.
                const qint64 redoneTo =
                    std::clamp(reachedBefore[i], p.resumeStep, std::max(p.step, p.resumeStep));
                qint64 lost = redoneTo - p.resumeStep;
                // The run's last process, ended: steps after its newest checkpoint are gone too.
                if (ended && i == processes.size() - 1)
                    lost += std::max<qint64>(0, p.step - std::max(p.checkpointStep, redoneTo));
                const double perStep = trained > 0 ? p.trainS / double(trained) : 0;
                const double lostS = std::min(p.trainS, double(lost) * perStep);
                g.lostSteps += lost;
                g.lostS += lostS;
                g.trainingS += p.trainS - lostS;
            }
        }
        a.processes = int(slot.processes.size());
        const double rest =
            g.wallS - (g.queueS + g.startupS + g.trainingS + g.checkpointS + g.evalS + g.sampleS + g.lostS);
        g.restS = std::max(0.0, rest);
        // A hung attempt (ended by the runner): from its last progress to its end, out of rest.
        if (slot.trial && slot.trial->exitReason.startsWith(QLatin1String(kHungPrefix))) {
            const Trial &t = *slot.trial;
            const qint64 from = t.progressMs >= begin ? t.progressMs : t.startedMs > 0 ? t.startedMs : begin;
            g.hungS = std::min(g.restS, seconds(std::max<qint64>(0, end - from)));
            g.restS -= g.hungS;
        }
        // Within the clocks' resolution (a process start from /proc is in 10 ms ticks, events
        // in whole ms) an excess is rounding, not a disagreement worth a note.
        constexpr double kResolutionS = 0.01;
        g.overrunS = -rest > kResolutionS ? -rest : 0.0;
        out.total += g;
        out.attempts.push_back(a);
    }
    return out;
}

RunGoodput runGoodput(const TrackingStore &store, RunId run, qint64 nowMs)
{
    if (nowMs <= 0)
        nowMs = QDateTime::currentMSecsSinceEpoch();
    const auto r = store.run(run);
    RunGoodput g =
        computeRunGoodput(store.attemptsOfRun(run), store.runPhases(run), r ? r->endTimeMs : 0, nowMs);
    g.run = run;
    return g;
}

SweepGoodput sweepGoodput(const TrackingStore &store, SweepId sweep, qint64 nowMs)
{
    if (nowMs <= 0)
        nowMs = QDateTime::currentMSecsSinceEpoch();
    SweepGoodput out;
    out.sweep = sweep;
    QMap<int, QList<Trial>> byIndex;  // a trial's attempts share its run
    for (const Trial &t : store.trials(sweep))
        byIndex[t.index].push_back(t);
    for (const QList<Trial> &attempts : std::as_const(byIndex)) {
        const RunId run = attempts.front().runId;
        const auto r = store.run(run);
        RunGoodput g = computeRunGoodput(attempts, run ? store.runPhases(run) : QList<ProcessPhases>{},
                                         r ? r->endTimeMs : 0, nowMs);
        g.run = run;
        out.total += g.total;
        out.runs.push_back(g);
    }
    return out;
}

QList<GoodputPart> labelledParts(const GoodputParts &g)
{
    return {
        {QStringLiteral("queue"), g.queueS},
        {QStringLiteral("start-up"), g.startupS},
        {QStringLiteral("training"), g.trainingS},
        {QStringLiteral("checkpoints"), g.checkpointS},
        {QStringLiteral("evaluation"), g.evalS},
        {QStringLiteral("samples"), g.sampleS},
        {g.lostSteps > 0 ? QStringLiteral("lost (%1 steps redone)").arg(g.lostSteps) : QStringLiteral("lost"),
         g.lostS},
        {QStringLiteral("hung"), g.hungS},
        {QStringLiteral("rest"), g.restS}};
}

}  // namespace orrery::core
