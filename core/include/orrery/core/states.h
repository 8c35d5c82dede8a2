// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The states of trials (one per attempt) and sweeps: the one table of what the runner writes, the
// text stored for each, its phase and whether it is still active. Faces (the CLI, the monitor,
// the GUI) ask these functions; none compares state strings of its own.

#include <QString>
#include <QStringView>

#include <cstdint>

namespace orrery::core {

// An attempt of a trial, as SweepRunner moves it along:
//   pending → queued → running → completed | failed | preempted | lost
//   running → stopping (early stopping asked it to stop) → stopped
//   queued/running → cancelling (the user cancelled the sweep) → cancelled
// A failed, lost or preempted attempt may be followed by a new attempt of the same trial.
enum class TrialState : std::uint8_t {
    Pending,  // recorded, not yet handed to an executor
    Queued,  // handed to the executor, waiting for a slot
    Running,
    Stopping,  // early stopping cancelled it; it runs until the executor says it ended
    Cancelling,  // the sweep was cancelled; likewise
    Completed,
    Failed,
    Preempted,  // checkpointed and ended by the scheduler; resubmitted without using a retry
    Stopped,  // ended by early stopping
    Cancelled,
    Lost,  // the executor forgot the task and it left no exit.json
    Unknown,  // text this version does not write (a newer Orrery's store)
};

// A sweep as a whole.
enum class SweepState : std::uint8_t {
    Pending,  // recorded, its first batch not yet submitted
    Running,
    Cancelling,  // cancelled; some trials have not ended yet
    Finished,  // every trial ended and at least one completed (or was stopped early)
    Failed,  // every trial ended and none completed
    Cancelled,
    Unknown,
};

// What a table counts a trial as.
enum class Phase : std::uint8_t {
    Queued,  // pending, queued, preempted (it comes back), unknown
    Running,  // running, and stopping/cancelling: its processes still run
    Done,  // completed
    Failed,  // failed, lost
    Stopped,  // stopped early or cancelled
};

QString toText(TrialState state);
QString toText(SweepState state);
QString toText(Phase phase);
// Unknown for any other text (never throws: a store may come from a newer version).
TrialState trialStateFromText(QStringView text);
SweepState sweepStateFromText(QStringView text);

Phase phaseOf(TrialState state);
// Still has (or will have) processes: queued, running, stopping, cancelling.
bool isActive(TrialState state);
// Ended for good or to be followed by a new attempt: completed, failed, preempted, stopped,
// cancelled, lost.
bool hasEnded(TrialState state);
// Pending, running or cancelling: the runner still follows it.
bool isActive(SweepState state);

}  // namespace orrery::core
