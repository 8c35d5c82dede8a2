// SPDX-License-Identifier: GPL-3.0-or-later
//
// GPU-hours, CPU-hours and cost (docs/sweeps.md "GPU-hours and cost"): what attempts held and
// for how long, counted from the store's trial records (Trial::startedMs/endedMs/gpus/cpus), the
// worst case a sweep could use (trials × time limit × GPUs), and the budget rule the runner
// launches under. Every face shows these numbers from here; none computes its own.
//
// Pure functions; safe from any thread.
#pragma once

#include "orrery/core/store.h"
#include "orrery/core/sweepspec.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace orrery::core {

// What some attempts held: an attempt counts from when it was first seen running (Trial::
// startedMs) to when it ended, or to `now` while it runs; one never seen running counts nothing.
struct Usage {
    double gpuHours = 0;
    double cpuHours = 0;
    qint64 elapsedMs = 0;  // summed over the attempts that ran
    int attempts = 0;  // attempts that ran
    int counting = 0;  // of those, still running: their usage grows until they end
    Usage &operator+=(const Usage &other);
};
Usage attemptUsage(const Trial &attempt, qint64 nowMs);
// The sum over attempts: a run's (TrackingStore::attemptsOfRun), a trial's, a sweep's (trials()).
Usage usageOf(const QList<Trial> &attempts, qint64 nowMs);

// How the runner dates an attempt (Trial::startedMs, endedMs) from what the executor says
// (TaskStatus::elapsedMs), so usage counts its real span, not when a follower happened to look.
// A running attempt started `elapsed` ago (now, where the executor cannot say).
qint64 runningSinceMs(std::optional<qint64> elapsedMs, qint64 nowMs);
// An attempt that ended: it ended at its start plus its elapsed time where both are known, else
// at the trainer's exit.json time ("t") where that falls within the attempt, else now (when it
// was seen ended); an attempt no poll saw running started `elapsed` before its end (else 0:
// it counts nothing). Slurm's elapsed is in whole seconds, and for a job that ended it may be
// the last poll's, so the span is then held to what is certain: it starts no earlier than its
// submission (`submittedMs`) and ends no earlier than its trainer's last event (`lastEventMs`,
// 0: none), and never after now.
struct AttemptSpan {
    qint64 startedMs = 0, endedMs = 0;
};
AttemptSpan endedAttemptSpan(qint64 startedMs, std::optional<qint64> elapsedMs, std::optional<qint64> exitMs,
                             qint64 nowMs, qint64 submittedMs = 0, qint64 lastEventMs = 0);

// A Slurm duration, as `--time` takes it and squeue prints elapsed times: "MM", "MM:SS",
// "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS". "UNLIMITED", "INFINITE" and "0" (Slurm: no
// limit), and empty text, are no limit. Anything else is malformed: `error` says why.
struct SlurmDuration {
    std::optional<qint64> ms;  // nullopt: no limit (or malformed)
    QString error;
    bool ok() const { return error.isEmpty(); }
};
SlurmDuration parseSlurmDuration(const QString &text);

// A price per GPU-hour (a cluster profile's gpu_hour_price and currency).
struct Price {
    double perGpuHour = 0;
    QString currency;  // "USD", "EUR", "credits"; empty: none named
};
// 3 significant digits under 100 ("0.0833", "1.25", "12.5"), whole numbers above ("1234").
QString formatHours(double hours);
// "12.50 USD", "12.50" without a currency.
QString formatCost(double gpuHours, const Price &price);

// A table cell: "1.25" GPU-hours, "1.25 · 3.13 USD" with a price; "" when nothing ran.
QString usageCell(const Usage &usage, const std::optional<Price> &price);
// One line for people: "12.3 GPU-hours, 98.4 CPU-hours over 5 attempts (2 running): 30.75 USD";
// "nothing has run yet" when no attempt ran.
QString describeUsage(const Usage &usage, const std::optional<Price> &price);
// The same for scripts (`--json`): {gpu_hours, cpu_hours, elapsed_s, attempts, running}, plus
// cost and currency with a price.
QJsonObject usageJson(const Usage &usage, const std::optional<Price> &price);

// The most one trial attempt can use: its time limit × what it is allocated. nullopt: the spec
// sets no time limit (resources.time), so the attempt is unbounded.
std::optional<double> worstGpuHours(const SweepResources &resources);

// The most a sweep can use before anything is spent (`sweep submit --dry-run`): run cap (a grid's
// trial count) × time limit × GPUs per trial, not counting retries.
struct WorstCase {
    int trials = 0;
    int gpusPerTrial = 0;
    std::optional<qint64> timeLimitMs;  // nullopt: no time limit: unbounded
    std::optional<double> gpuHours;  // trials × limit × GPUs; nullopt: unbounded
    int retries = 0;  // each trial may run 1 + retries attempts (preemptions aside)
    std::optional<double> budget;  // the spec's budget.gpu_hours
    int firstPlanned = 0;  // trials the submission would launch at once (bayes: max_concurrent)
    int firstBatch = 0;  // of those, what the budget lets it launch (firstBatchSize)
};
WorstCase worstCase(const SweepSpec &spec, int trials, int firstPlanned);
// The lines `sweep submit --dry-run` prints, each ending in '\n':
//   worst case: 24 trials × 2h00m × 4 GPUs = 192 GPU-hours (480.00 USD at 2.50 USD/GPU-hour)
// then, as they apply, the retries' bound and what the budget does.
QString describeWorstCase(const WorstCase &worst, const std::optional<Price> &price);
// The same for scripts (`sweep submit --dry-run --json`): {trials, gpus_per_trial, time_limit_s,
// gpu_hours, gpu_hours_with_retries, retries, budget_gpu_hours, first_planned, first_batch}, null
// where unbounded or unset, plus cost (and cost_with_retries) and currency with a price.
QJsonObject worstCaseJson(const WorstCase &worst, const std::optional<Price> &price);

// The budget rule (spec `budget: {gpu_hours: N}`): a new attempt is launched only while what the
// sweep has used, plus what its active attempts may still use (each up to its time limit), plus
// this attempt's worst case, stays within the budget. So the budget is never exceeded, whatever
// the attempts do, as long as each ends by its time limit.
struct BudgetState {
    double budget = 0;
    double used = 0;  // GPU-hours every attempt has used so far
    double held = 0;  // what the active attempts may still use: limit × GPUs − used, each
    double perAttempt = 0;  // one more attempt's worst case
    // How many more attempts fit now (0: none; a large number when an attempt costs nothing).
    int room() const;
    // "6.2 of the budget's 10 GPU-hours used, 2 held by active trials; the next trial could use
    // up to 4"
    QString explain() const;
};
// nullopt when the spec sets no budget.
std::optional<BudgetState> budgetState(const SweepSpec &spec, const QList<Trial> &attempts, qint64 nowMs);
// How many of a submission's `planned` first trials it launches at once: all of them, or under a
// budget as many as fit it (at least one: the spec parser refuses a budget smaller than a trial).
int firstBatchSize(const SweepSpec &spec, int planned);

}  // namespace orrery::core
