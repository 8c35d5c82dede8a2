// SPDX-License-Identifier: GPL-3.0-or-later
//
// Goodput: where the wall time of a run went (docs/sweeps.md "Goodput"). Pure functions over a
// run's attempts (the trials table) and its trainer processes' phase records (the `phases`
// events, table run_phases); the store-reading wrappers at the end only fetch those and call them.
//
// Per attempt, from its submission to its end:
//   queue       submitted → the job started (the executor's start, or the process's if earlier)
//   startup     the job started → the trainer's first step (LibTorch load, rendezvous, health
//               check, model, checkpoint load, data warm-up)
//   training    training steps, less the lost ones
//   checkpoint  writing checkpoints;  eval, samples: evaluation and sample videos
//   lost        steps redone after a resume (on the attempt that redid them, at its time per
//               step), and the steps after the last checkpoint of an attempt that ended with no
//               later attempt to redo them
//   hung        an attempt the runner ended as hung (sweeprules.h hungAttempts): from its last
//               progress to its end, taken out of rest (a hung process logs no phases)
//   rest        wall − all of the above: the trainer's end, time after its last event (a killed
//               process; the executor noticing the end), gaps the trainer cannot see. Never
//               negative: where the parts exceed the wall (a process whose clock says it started
//               before its submission), `overrunS` says by how much and rest is 0. An excess
//               within the clocks' resolution (10 ms) is rounding: rest is 0, no overrun.
// An ended attempt's wall runs to its end as recorded, or to its trainer's last event if that is
// later (an end seen at a follower's tick or in Slurm's whole seconds can fall just before it).
// Parts add up to the wall time. A run is the sum of its attempts, a sweep the sum of its runs;
// goodput = training ÷ wall.
#pragma once

#include "orrery/core/store.h"

#include <QList>
#include <QString>

namespace orrery::core {

struct GoodputParts {
    double queueS = 0, startupS = 0, trainingS = 0, checkpointS = 0, evalS = 0, sampleS = 0, lostS = 0,
           restS = 0;
    double hungS = 0;  // time lost to hangs (docs/sweeps.md "Hangs")
    double wallS = 0;
    double overrunS = 0;  // how far the measured parts exceeded the wall (0 when they fit)
    qint64 lostSteps = 0;

    double goodput() const { return wallS > 0 ? trainingS / wallS : 0; }
    double sumOfParts() const
    {
        return queueS + startupS + trainingS + checkpointS + evalS + sampleS + lostS + hungS + restS;
    }
    GoodputParts &operator+=(const GoodputParts &o);
};

// The parts in the order every face lists them, each with its label ("queue", "start-up",
// "training", "checkpoints", "evaluation", "samples", "lost (12 steps redone)", "hung", "rest"); the wall
// is not among them (they add up to it).
struct GoodputPart {
    QString label;
    double seconds = 0;
};
QList<GoodputPart> labelledParts(const GoodputParts &parts);

struct AttemptGoodput {
    int attempt = 0;  // the trial's attempt number; -1: a process with no trial record
    QString state;  // the attempt's TrialState word ("" without a trial record)
    GoodputParts parts;
    int processes = 0;  // trainer processes seen (0: never started, or no `phases` events)
    qint64 resumeStep = 0, lastStep = 0;  // the first process's resume step, the last step reached
    qint64 trainedSteps = 0;  // steps its processes trained (redone ones included)
};

struct RunGoodput {
    RunId run = 0;
    int trialIndex = -1;  // in its sweep; -1: not a sweep's run
    GoodputParts total;
    QList<AttemptGoodput> attempts;
};

struct SweepGoodput {
    SweepId sweep = 0;
    GoodputParts total;
    QList<RunGoodput> runs;  // by trial index
};

// The goodput of one run from its attempts (`attempts`, any order; empty: a run not launched by a
// sweep, each process then its own attempt, ending at its last event or at `runEndMs`) and its
// processes' phase records. A process belongs to the attempt whose submitted → ended overlaps its
// start → last event the most (the trainer's clock is the cluster's, the attempts' this
// machine's). Attempts still active end at `nowMs`.
RunGoodput computeRunGoodput(const QList<Trial> &attempts, const QList<ProcessPhases> &processes,
                             qint64 runEndMs, qint64 nowMs);

// The store-reading wrappers. nowMs 0: this machine's clock.
RunGoodput runGoodput(const TrackingStore &store, RunId run, qint64 nowMs = 0);
SweepGoodput sweepGoodput(const TrackingStore &store, SweepId sweep, qint64 nowMs = 0);

}  // namespace orrery::core
