// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where a trainer process's wall time goes, for goodput (docs/trainer.md "Phase timings"): every
// second from the process's start is in exactly one phase, on the steady clock. The process is in
// one phase at a time; enter() closes the current one. Snapshots are cumulative, so the last
// `phases` event a killed process wrote still tells where its time went up to then.
//
// Owned by the training loop's thread; not thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>

namespace orrery::train {

// When this process started, in unix seconds: from /proc/self/stat (its start in clock ticks
// since boot) and /proc/uptime, so the dynamic loading of LibTorch before main() counts; a rank
// that a `--nproc` launcher started takes the launcher's start from ORRERY_PROCESS_START. Falls
// back to the first call's time where /proc cannot be read.
double processStartUnix();

class PhaseClock {
public:
    enum Phase { Startup, Train, Checkpoint, Eval, Sample, Other, kPhases };

    PhaseClock();  // in Startup, since the process started

    // Closes the current phase and opens `p`. No GPU sync: the caller syncs at a boundary where
    // queued device work would otherwise be charged to the next phase.
    void enter(Phase p);
    Phase current() const { return m_current; }

    // The process's start (unix s) and the cumulative seconds of each phase up to now.
    double processStart() const { return m_processStart; }
    std::array<double, kPhases> seconds() const;

    // The `values` of a `phases` event: process_start, resume_step, checkpoint_step and
    // <phase>_s for each phase (docs/trainer.md).
    nlohmann::json values(std::int64_t resumeStep, std::int64_t checkpointStep) const;

private:
    double m_processStart = 0;
    double m_switched = 0;  // steady seconds when the current phase began
    Phase m_current = Startup;
    std::array<double, kPhases> m_done{};
};

}  // namespace orrery::train
