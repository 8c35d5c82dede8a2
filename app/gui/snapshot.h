// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the window shows at one instant, read in one go on the reader thread: the experiments →
// sweeps → trials tree and the runs the filter selects, with their params and latest metrics.
#pragma once

#include "orrery/core/store.h"
#include "orrery/core/sweepprogress.h"

#include <QHash>

#include <QList>
#include <QStringList>

#include <optional>

namespace orrery::gui {

struct SweepNode {
    core::Sweep sweep;
    QString experiment;
    QList<core::TrialSummary> trials;
    core::PhaseCounts counts;
    std::optional<double> best;  // the best run's latest value of the sweep's metric (store.bestRun)
    // Steps done and to go, rates and ETAs, as `sweep watch` shows them: active sweeps, when the
    // reader keeps trackers between snapshots (a rate needs two of them).
    std::optional<core::SweepProgress> progress;
};

struct Snapshot {
    QList<core::Experiment> experiments;
    QList<SweepNode> sweeps;
    QList<core::RunRow> runs;  // as the filter selects them, newest first, with every param
    QStringList paramKeys, metricKeys;
    QString readOnlyReason;
};

// `trackers` (optional) keeps each active sweep's SweepProgressTracker between calls; those of
// sweeps no longer active are dropped. One caller at a time.
using ProgressTrackers = QHash<core::SweepId, core::SweepProgressTracker>;
Snapshot readSnapshot(const core::TrackingStore &store, const core::RunQuery &runs,
                      ProgressTrackers *trackers = nullptr);

}  // namespace orrery::gui
