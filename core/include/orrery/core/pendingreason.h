// SPDX-License-Identifier: GPL-3.0-or-later
//
// Why a queued trial waits, in words a user understands (docs/sweeps.md "Why is it pending?"):
// Slurm's reason code (squeue's %r, kept in TaskStatus::detail as "PENDING (Resources)") as a
// sentence, and whether it clears by itself, needs someone to act, or never clears (a request a
// partition or QOS can never satisfy). One table: `sweep status`, the window's sweep tree and the
// monitor all show these words (core/sweepoverview.h queuedSummary), none keeps its own.
//
// Pure functions; safe from any thread.
#pragma once

#include "orrery/core/store.h"

#include <QList>
#include <QString>

#include <cstdint>
#include <optional>

namespace orrery::core {

enum class PendingOutlook : std::uint8_t {
    Waits,  // clears by itself as jobs end or time passes (Priority, Resources, a limit in use)
    NeedsAction,  // held until someone releases it (JobHeldUser, JobHeldAdmin, launch failed requeued held)
    Never,  // the request exceeds a limit it can never meet (PartitionTimeLimit, PartitionNodeLimit, ...)
};

struct PendingReason {
    QString code;  // Slurm's reason code as squeue prints it: "Resources", "PartitionTimeLimit"
    QString words;  // "waiting for free nodes or GPUs"; the code itself where the table has none
    PendingOutlook outlook = PendingOutlook::Waits;
};

// The reason code of an executor's detail: "PENDING (Resources)" → "Resources",
// "PENDING (ReqNodeNotAvail, UnavailableNodes:node2)" → "ReqNodeNotAvail"; empty when the detail
// gives none ("PENDING (None)", no parentheses).
QString pendingCode(const QString &detail);

// The table: Slurm's reason code → words and outlook. An unknown code is shown as Slurm says it
// (words "Slurm says <code>"), and as Waits: Orrery does not call a wait hopeless on a guess.
PendingReason pendingReason(const QString &code);

// One queued trial's reason and expected start, as the faces show it: "waiting for free nodes
// or GPUs (Resources), expected start in ~14 min"; "never starts: the time limit is above the
// partition's maximum (PartitionTimeLimit)". Empty for a trial that is not queued or has no
// reason. `nowMs`: this machine's clock.
QString pendingText(const Trial &t, qint64 nowMs);

// The queued trials of a sweep grouped by reason, most first, with the earliest expected start
// of each group, the reasons that never clear first: "12 queued: Resources (expected start in
// ~14 min); 1 never starts: PartitionTimeLimit — the time limit is above the partition's
// maximum"; then the attempts recorded pending, held by the executor's limits: "199 not submitted
// yet: waiting for room under the cluster's MaxArraySize 1001". `latest`: each trial's latest
// attempt. Empty when no trial is queued with a reason or pending.
QString queuedSummary(const QList<Trial> &latest, qint64 nowMs);

// "in ~14 min", "in ~2 h", "now" (at or before nowMs): how far away an expected start is.
QString startsIn(qint64 startMs, qint64 nowMs);

}  // namespace orrery::core
