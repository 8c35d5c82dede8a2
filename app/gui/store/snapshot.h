// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the window shows at one instant, read in one go on the reader thread: the experiments →
// sweeps → trials tree (each sweep's overview, as the CLI prints it) and the runs the filter
// selects, with their params and latest metrics.
#pragma once

#include "orrery/core/store.h"
#include "orrery/core/sweepoverview.h"

#include <QHash>

#include <QList>
#include <QStringList>

#include <optional>

namespace orrery::gui {

// A sweep as `orrery sweep status` sees it (core::SweepOverview: counts, best, GPU-hours and
// cost at its cluster's price, progress, goodput), and its experiment's name.
struct SweepNode : core::SweepOverview {
    QString experiment;
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
