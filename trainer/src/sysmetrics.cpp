// SPDX-License-Identifier: GPL-3.0-or-later
#include "sysmetrics.h"
#include "nvmlabi.h"

#if ORRERY_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace orrery::train {

namespace {

double wallSeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpuSeconds()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);  // every thread of the process
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
        1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double residentGb()
{
    std::ifstream statm("/proc/self/statm");
    long long pages = 0, resident = 0;
    if (statm >> pages >> resident)
        return double(resident) * double(::sysconf(_SC_PAGESIZE)) / 1e9;
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) * 1024.0 / 1e9;  // the peak, where /proc is missing
}

}  // namespace

// The few NVML entry points used, declared as nvml.h does (a stable C ABI), resolved with dlsym.
struct SystemMonitor::Nvml {
    using Device = nvmlDevice_st *;
    struct Utilization {
        unsigned int gpu, memory;
    };
    struct Memory {
        unsigned long long total, free, used;
    };
    void *lib = nullptr;
    Device device = nullptr;
    int (*shutdown)() = nullptr;
    int (*utilization)(Device, Utilization *) = nullptr;
    int (*memory)(Device, Memory *) = nullptr;
    int (*power)(Device, unsigned int *) = nullptr;

    // Throws a message for the one-time warning.
    explicit Nvml(const std::string &pciBusId)
    {
        lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            throw std::runtime_error(std::string("NVML not loaded (") + ::dlerror() +
                                     "): system metrics without GPU utilisation, memory and power");
        auto symbol = [&](const char *name) {
            void *f = ::dlsym(lib, name);
            if (!f)
                throw std::runtime_error(std::string("NVML has no ") + name);
            return f;
        };
        auto init = reinterpret_cast<int (*)()>(symbol("nvmlInit_v2"));
        auto byBus =
            reinterpret_cast<int (*)(const char *, Device *)>(symbol("nvmlDeviceGetHandleByPciBusId_v2"));
        shutdown = reinterpret_cast<int (*)()>(symbol("nvmlShutdown"));
        utilization =
            reinterpret_cast<int (*)(Device, Utilization *)>(symbol("nvmlDeviceGetUtilizationRates"));
        memory = reinterpret_cast<int (*)(Device, Memory *)>(symbol("nvmlDeviceGetMemoryInfo"));
        power = reinterpret_cast<int (*)(Device, unsigned int *)>(symbol("nvmlDeviceGetPowerUsage"));
        if (const int rc = init(); rc != 0)
            throw std::runtime_error("nvmlInit failed (" + std::to_string(rc) + ")");
        // By PCI bus id: CUDA's device index is not NVML's where CUDA_VISIBLE_DEVICES reorders.
        if (const int rc = byBus(pciBusId.c_str(), &device); rc != 0)
            throw std::runtime_error("NVML does not know the GPU at " + pciBusId + " (" + std::to_string(rc) +
                                     ")");
    }
    ~Nvml()
    {
        if (shutdown)
            shutdown();
        if (lib)
            ::dlclose(lib);
    }
};

void SystemSample::pack(float *out) const
{
    const double v[kFields] = {node, cpuPct, rssGb, gpuUtil, gpuMemGb, gpuPowerW};
    for (int i = 0; i < kFields; ++i)
        out[i] = float(v[i]);
}

SystemSample SystemSample::unpack(const float *in)
{
    return {in[0], in[1], in[2], in[3], in[4], in[5]};
}

SystemMonitor::SystemMonitor(int node, int cudaDevice)
    : m_node(node), m_lastCpu(cpuSeconds()), m_lastWall(wallSeconds())
{
#if ORRERY_TORCH_CUDA
    if (cudaDevice >= 0) {
        const auto *p = at::cuda::getDeviceProperties(c10::DeviceIndex(cudaDevice));
        char bus[32];
        std::snprintf(bus, sizeof bus, "%08x:%02x:%02x.0", unsigned(p->pciDomainID), unsigned(p->pciBusID),
                      unsigned(p->pciDeviceID));
        try {
            m_nvml = std::make_unique<Nvml>(bus);
        } catch (const std::exception &e) {
            m_gpuProblem = e.what();
        }
    }
#else
    (void)cudaDevice;
#endif
}

SystemMonitor::~SystemMonitor() = default;

SystemSample SystemMonitor::sample()
{
    SystemSample s;
    s.node = m_node;
    const double cpu = cpuSeconds(), wall = wallSeconds();
    s.cpuPct = wall > m_lastWall ? 100.0 * (cpu - m_lastCpu) / (wall - m_lastWall) : 0.0;
    m_lastCpu = cpu;
    m_lastWall = wall;
    s.rssGb = residentGb();
    if (m_nvml) {
        Nvml::Utilization u{};
        Nvml::Memory mem{};
        unsigned int milliwatts = 0;
        if (m_nvml->utilization(m_nvml->device, &u) == 0)
            s.gpuUtil = u.gpu;
        if (m_nvml->memory(m_nvml->device, &mem) == 0)
            s.gpuMemGb = double(mem.used) / 1e9;
        if (m_nvml->power(m_nvml->device, &milliwatts) == 0)
            s.gpuPowerW = milliwatts / 1000.0;
    }
    return s;
}

std::vector<std::pair<std::string, double>> systemValues(const std::vector<SystemSample> &ranks)
{
    std::vector<std::pair<std::string, double>> out;
    std::vector<std::pair<double, double>> nodes;  // cpu, rss per node index
    for (const SystemSample &s : ranks) {
        const auto n = std::size_t(std::max(0.0, std::round(s.node)));
        if (nodes.size() <= n)
            nodes.resize(n + 1, {-1.0, 0.0});
        nodes[n].first = std::max(nodes[n].first, 0.0) + s.cpuPct;
        nodes[n].second += s.rssGb;
    }
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        if (nodes[n].first < 0)
            continue;  // no rank on this node index
        const std::string p = "node" + std::to_string(n) + "/";
        out.emplace_back(p + "cpu_pct", nodes[n].first);
        out.emplace_back(p + "rss_gb", nodes[n].second);
    }
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        const std::string p = "gpu" + std::to_string(r) + "/";
        if (ranks[r].gpuUtil >= 0)
            out.emplace_back(p + "util", ranks[r].gpuUtil);
        if (ranks[r].gpuMemGb >= 0)
            out.emplace_back(p + "mem_gb", ranks[r].gpuMemGb);
        if (ranks[r].gpuPowerW >= 0)
            out.emplace_back(p + "power_w", ranks[r].gpuPowerW);
    }
    return out;
}

}  // namespace orrery::train
