// SPDX-License-Identifier: GPL-3.0-or-later
//
// System metrics (the `system` events of events.jsonl): each rank samples its own process — CPU %
// since its previous sample (100 = one core busy; the data loader threads count), resident
// memory — and, on CUDA, its GPU through NVML: utilisation, memory used (as nvidia-smi shows it,
// every process on the GPU) and power. NVML is loaded at run time with dlopen, so a trainer built
// with CUDA still runs where libnvidia-ml is missing (then without the GPU figures, said once).
// Rank 0 gathers every rank's sample and writes one event per node and GPU:
//   node<n>/cpu_pct, node<n>/rss_gb   the trainer's processes on node n, summed
//   gpu<r>/util, gpu<r>/mem_gb, gpu<r>/power_w   the GPU of rank r
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace orrery::train {

struct SystemSample {
    static constexpr int kFields = 6;  // packed as floats for the gather: see pack()/unpack()
    double node = 0, cpuPct = 0, rssGb = 0;
    double gpuUtil = -1, gpuMemGb = -1, gpuPowerW = -1;  // -1: not measured (CPU, or no NVML)

    void pack(float *out) const;
    static SystemSample unpack(const float *in);
};

class SystemMonitor {
public:
    // cudaDevice: this rank's CUDA device index, or -1 for a CPU run (NVML is not loaded then).
    SystemMonitor(int node, int cudaDevice);
    ~SystemMonitor();
    SystemMonitor(const SystemMonitor &) = delete;
    SystemMonitor &operator=(const SystemMonitor &) = delete;

    // This process now; CPU % over the time since the previous call (or since construction).
    SystemSample sample();
    // Why there are no GPU figures on a CUDA run ("" when there are, or on CPU): to be reported once.
    const std::string &gpuProblem() const { return m_gpuProblem; }

private:
    struct Nvml;
    int m_node;
    double m_lastCpu = 0, m_lastWall = 0;
    std::unique_ptr<Nvml> m_nvml;
    std::string m_gpuProblem;
};

// One `system` event's values from every rank's sample (index = rank).
std::vector<std::pair<std::string, double>> systemValues(const std::vector<SystemSample> &ranks);

}  // namespace orrery::train
