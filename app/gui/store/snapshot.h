// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the window shows at one instant, read in one go on the reader thread: the experiments →
// sweeps → trials tree (each sweep's overview, as the CLI prints it) and the runs the filter
// selects, with their params and latest metrics.
#pragma once

#include "orrery/core/params.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepoverview.h"

#include <QHash>
#include <QSet>

#include <QList>
#include <QStringList>

#include <optional>

namespace orrery::gui {

// A sweep as `orrery sweep status` sees it (core::SweepOverview: counts, best, GPU-hours and
// cost at its cluster's price, progress, goodput), and its experiment's name.
struct SweepNode : core::SweepOverview {
    QString experiment;
    QList<core::SweptParam> swept;  // core::sweptParams: what leads its views
    QHash<core::RunId, double> runGoodput;  // each trial's run's goodput, where it was asked for
};

// Which sweep each run belongs to, and the sweep that leads a view of some runs (UX.md "Views
// built around the sweep"): its swept params and metric come first in the table, the parallel
// coordinates, the scatter, the video captions and the importance panel.
struct SweepIndex {
    QList<SweepNode> sweeps;
    QHash<core::RunId, core::SweepId> sweepOfRun;  // runs of no sweep are absent

    const SweepNode *sweep(core::SweepId id) const;
    const SweepNode *sweepOf(core::RunId run) const;
    // The sweep most of `runs` belong to (a tie: the newest sweep); nullptr when none does.
    const SweepNode *leadingSweep(const QList<core::RunId> &runs) const;
    // The swept params of the sweeps of `runs`: the leading sweep's first, in its spec's order,
    // then the others' not already listed. Empty when no run belongs to a sweep.
    QList<core::SweptParam> sweptParams(const QList<core::RunId> &runs) const;
};

struct Snapshot {
    QList<core::Experiment> experiments;
    QList<SweepNode> sweeps;
    QList<core::RunRow> runs;  // as the filter selects them, newest first, with every param
    QStringList paramKeys, metricKeys;
    QString readOnlyReason;
    QList<core::RunId> gone;  // of the `selected` runs readSnapshot was given, those deleted
    // Archived runs while the query leaves them out: the tree marks their trials and no sweep
    // stands for them (Compare, parallel coordinates); empty with RunQuery::includeArchived.
    QSet<core::RunId> archived;

    SweepIndex index() const;  // of `sweeps` (each run's sweep from its trials)
};

// `trackers` (optional) keeps each active sweep's SweepProgressTracker between calls; those of
// sweeps no longer active are dropped. One caller at a time. `selected`: the runs the window has
// selected, of which those deleted meanwhile (by the CLI, another window) come back in `gone`.
using ProgressTrackers = QHash<core::SweepId, core::SweepProgressTracker>;
// `goodput`: also each sweep trial's run's goodput (every run's phase records: the Runs table's
// Goodput column, read only while it is shown).
Snapshot readSnapshot(const core::TrackingStore &store, const core::RunQuery &runs,
                      ProgressTrackers *trackers = nullptr, const QList<core::RunId> &selected = {},
                      bool goodput = false);

}  // namespace orrery::gui
