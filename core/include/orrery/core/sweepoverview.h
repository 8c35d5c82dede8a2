// SPDX-License-Identifier: GPL-3.0-or-later
//
// One sweep at a glance, as every face shows it (docs/sweeps.md "Following a sweep"): trials
// counted by phase, the best run and its value, GPU-hours and cost, progress and ETA, and the
// goodput summary. `orrery sweep list|status|--json`, the monitor's sweep rows and the window's
// sweep tree all render this one record; none of them counts or ranks on its own.
//
// The price comes from the caller (a cluster profile's, remote::clusterPrice): core knows no
// profiles. Reading takes one store snapshot's worth of queries; safe from any thread that owns
// its store connection.
#pragma once

#include "orrery/core/goodput.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepprogress.h"
#include "orrery/core/usage.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>

#include <optional>

namespace orrery::core {

// The sweep's best run by its metric and goal (TrackingStore::bestRun: the latest value).
struct BestRun {
    RunId run = 0;
    QString name, runDir;
    int trial = -1;  // its trial index (-1: not found among the sweep's trials)
    double value = 0;  // the metric's latest value
    QString video;  // its newest sample video: the local copy where there is one, else the executor's path
};

struct SweepOverview {
    Sweep sweep;
    QList<TrialSummary> trials;  // each trial's latest attempt and metric, by index
    QList<Trial> attempts;  // every attempt, by index then attempt
    PhaseCounts counts;  // of the latest attempts (countPhases)
    std::optional<BestRun> best;
    Usage usage;  // every attempt's (usageOf)
    QHash<int, Usage> trialUsage;  // by trial index, all of its attempts
    std::optional<Price> price;  // the executor's price per GPU-hour, where one is known
    std::optional<SweepProgress> progress;  // with a tracker: steps, rates, ETAs
    std::optional<GoodputParts> goodput;  // with OverviewOptions::goodput: the sweep's total
    // Why its queued trials wait, grouped (pendingreason.h queuedSummary): "12 queued: Resources
    // (expected start in ~14 min); 1 never starts: PartitionTimeLimit — ..."; empty: none waits.
    QString waiting;
    qint64 nowMs = 0;  // the clock the overview was read at

    Goal goal() const { return sweep.metricGoal; }
    // The cost of what has run (nullopt without a price).
    std::optional<double> cost() const;
    // Trials ended out of those planned ("3/8"), as the sweep list shows.
    QString doneText() const;
    // "2 done, 1 running, 1 failed" (only the phases that have trials; "nothing submitted yet").
    QString countsText() const;
    // "3 of 8 trials: 2 done, 1 running" (of the planned trials, those submitted).
    QString countsLine() const;
    // The sweep's state word with a warning when it ended with failed trials:
    // "finished (1 failed)"; faces colour it from verdict().
    QString stateText() const;
    enum class Verdict { Active, Good, Mixed, Bad };  // Mixed: finished, but some trials failed
    Verdict verdict() const;
    // One trial's note, as every face shows it: why a queued trial waits (pendingText, with its
    // expected start) or why a pending one is not submitted yet; else what the executor last said
    // of an active one, or how an ended one ended.
    QString trialNote(const Trial &t) const;
};

struct OverviewOptions {
    qint64 nowMs = 0;  // 0: this machine's clock
    std::optional<Price> price;
    // Keeps rates between calls (an active sweep's progress needs two looks); nullptr: no progress.
    SweepProgressTracker *tracker = nullptr;
    bool goodput = false;  // also sum the goodput (reads every run's phase records)
    // Look up the best run's newest sample video (one more read of its artifacts): what the CLI
    // prints; the window and the monitor, which read every sweep on each refresh, leave it out.
    bool bestVideo = true;
    // Every run of the store as the caller has already read it (queryRuns with no condition,
    // experiment, sweep or limit), by id: the trial summaries and the best run then come from
    // these rows instead of two more reads of each sweep's runs (the window's snapshot, which
    // reads every run anyway: 0.6 s of 10 sweeps' reads at 100,000 runs, bench_runs_scale).
    // Archived rows count as absent, as the store's own reads leave them out.
    const QHash<RunId, const RunRow *> *runs = nullptr;
};

// The sweep's best run among `runs` (its runs' rows), ranked as TrackingStore::bestRun ranks
// them: by the metric's latest value for the goal (NaN or missing last, ties to the lower id),
// failed and killed runs left out unless no other run has a value; nullptr where none has the
// metric.
const RunRow *bestOf(const Sweep &sweep, const QList<const RunRow *> &runs);

SweepOverview readSweepOverview(const TrackingStore &store, const Sweep &sweep,
                                const OverviewOptions &options);

// `sweep status --json` / `sweep list --json` / `submit --json`: the sweep, its trials (params,
// state, attempts, usage, latest and best metric) and the best run.
QJsonObject overviewJson(const SweepOverview &o);

}  // namespace orrery::core
