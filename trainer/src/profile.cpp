// SPDX-License-Identifier: GPL-3.0-or-later
#include "profile.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include <filesystem>
#include <set>

namespace orrery::train {

namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::set<ActivityType> activities(bool cuda)
{
    std::set<ActivityType> a{ActivityType::CPU};
    if (cuda)
        a.insert(ActivityType::CUDA);
    return a;
}

// What torch.profiler.profile() asks for by default: no shapes, memory, stacks or FLOPs, so the
// profiled steps run as the others do.
ProfilerConfig config()
{
    return ProfilerConfig(ProfilerState::KINETO);
}

}  // namespace

void StepProfiler::waitForDevice() const
{
#if ORRERY_TORCH_CUDA
    if (m_cuda)
        torch::cuda::synchronize();
#endif
}

StepProfiler::StepProfiler(std::int64_t first, std::int64_t steps, bool cuda, std::string tracePath)
    : m_first(steps > 0 ? first : -1), m_last(first + steps - 1), m_cuda(cuda), m_path(std::move(tracePath))
{
    // Kineto's start-up (CUPTI's on CUDA) happens here, before the window, as the Python
    // profiler's warm-up does.
    if (m_first >= 0)
        kineto::prepareProfiler(config(), activities(m_cuda));
}

StepProfiler::~StepProfiler()
{
    if (m_active)
        kineto::disableProfiler();  // an exception left the window: no trace
}

void StepProfiler::beginStep(std::int64_t step)
{
    if (step != m_first || m_active)
        return;
    waitForDevice();  // the window holds this step's kernels and no earlier ones
    kineto::enableProfiler(config(), activities(m_cuda));
    m_active = true;
}

bool StepProfiler::endStep(std::int64_t step)
{
    if (!m_active || step < m_last)
        return false;
    waitForDevice();
    m_active = false;
    const auto result = kineto::disableProfiler();
    std::filesystem::create_directories(std::filesystem::path(m_path).parent_path());
    result->save(m_path);
    return true;
}

}  // namespace orrery::train
