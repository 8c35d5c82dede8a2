// SPDX-License-Identifier: GPL-3.0-or-later
//
// A window of training steps under LibTorch's profiler (Kineto): the operators on the host and,
// on CUDA, every kernel, copy and memset on the device, written as a Chrome trace that Perfetto,
// chrome://tracing and TensorBoard open, and that bench/profile_families.py sums by kernel family
// beside the PyTorch peer's trace of the same model (docs/trainer.md "Profiling a step").
//
// train.profile_steps > 0 turns it on; each rank writes profile/rank-<R>.pt.trace.json. The step's
// parts are marked orrery::step, orrery::data, orrery::forward, orrery::backward and
// orrery::optimizer (the peer marks the same), which cost nothing while no profiler listens.
#pragma once

#include <cstdint>
#include <string>

namespace orrery::train {

class StepProfiler {
public:
    // Steps [first, first + steps) are profiled; steps == 0 turns it off.
    StepProfiler(std::int64_t first, std::int64_t steps, bool cuda, std::string tracePath);
    ~StepProfiler();
    StepProfiler(const StepProfiler &) = delete;
    StepProfiler &operator=(const StepProfiler &) = delete;

    // Before step `step`'s work: starts the profiler at the window's first step.
    void beginStep(std::int64_t step);
    // After step `step`'s optimizer step: at the window's last step, waits for the device, stops
    // the profiler and writes the trace. True when it wrote it.
    bool endStep(std::int64_t step);

    const std::string &tracePath() const { return m_path; }

private:
    void waitForDevice() const;

    std::int64_t m_first, m_last;
    bool m_cuda;
    bool m_active = false;
    std::string m_path;
};

}  // namespace orrery::train
