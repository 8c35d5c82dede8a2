// SPDX-License-Identifier: GPL-3.0-or-later
#include "healthcheck.h"

#include "distributed.h"
#include "faults.h"
#include "nvmlabi.h"
#include "runlog.h"

#include <torch/torch.h>
#if ORRERY_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace orrery::train {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The fault-injection hook for tests (a broken GPU or DIMM cannot be caused on purpose on a test
// machine): ORRERY_HEALTH_CHECK_FAIL names, comma-separated, the nodes whose check must fail.
// Every real check still runs there; only the verdict is forced.
bool faultInjected(const std::string &node)
{
    const char *v = std::getenv("ORRERY_HEALTH_CHECK_FAIL");
    if (!v)
        return false;
    std::stringstream names(v);
    std::string name;
    while (std::getline(names, name, ','))
        if (name == node)
            return true;
    return false;
}

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// ECC and XID state of one GPU through NVML, loaded at run time (its C ABI, as nvml.h declares
// it; the functions used exist since driver R450). Absent library or function: "not available".
class Nvml {
public:
    using Device = nvmlDevice_st *;
    using EventSet = nvmlEventSet_st *;
    struct EventData {
        Device device;
        unsigned long long eventType, eventData;
        unsigned int gpuInstanceId, computeInstanceId;
    };
    static constexpr unsigned long long kEventXidCritical = 0x8;  // nvmlEventTypeXidCriticalError

    Nvml()
    {
        m_lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!m_lib) {
            m_problem = "not available (libnvidia-ml.so.1 not found)";
            return;
        }
        auto init = reinterpret_cast<int (*)()>(::dlsym(m_lib, "nvmlInit_v2"));
        m_byBus = reinterpret_cast<int (*)(const char *, Device *)>(
            ::dlsym(m_lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        m_ecc = reinterpret_cast<int (*)(Device, int, int, unsigned long long *)>(
            ::dlsym(m_lib, "nvmlDeviceGetTotalEccErrors"));
        m_eventSetCreate = reinterpret_cast<int (*)(EventSet *)>(::dlsym(m_lib, "nvmlEventSetCreate"));
        m_register = reinterpret_cast<int (*)(Device, unsigned long long, EventSet)>(
            ::dlsym(m_lib, "nvmlDeviceRegisterEvents"));
        m_wait = reinterpret_cast<int (*)(EventSet, EventData *, unsigned int)>(
            ::dlsym(m_lib, "nvmlEventSetWait_v2"));
        m_eventSetFree = reinterpret_cast<int (*)(EventSet)>(::dlsym(m_lib, "nvmlEventSetFree"));
        m_shutdown = reinterpret_cast<int (*)()>(::dlsym(m_lib, "nvmlShutdown"));
        if (!init || !m_byBus || !m_shutdown || init() != 0) {
            m_problem = "not available (NVML did not initialise)";
            m_shutdown = nullptr;
            return;
        }
        if (m_eventSetCreate && m_eventSetCreate(&m_events) != 0)
            m_events = nullptr;
    }
    ~Nvml()
    {
        if (m_events && m_eventSetFree)
            m_eventSetFree(m_events);
        if (m_shutdown)
            m_shutdown();
        if (m_lib)
            ::dlclose(m_lib);
    }
    Nvml(const Nvml &) = delete;
    Nvml &operator=(const Nvml &) = delete;

    const std::string &problem() const { return m_problem; }

    Device device(const std::string &pciBusId)
    {
        Device d = nullptr;
        if (!m_problem.empty() || m_byBus(pciBusId.c_str(), &d) != 0)
            return nullptr;
        return d;
    }
    // Uncorrected ECC errors since the driver loaded; -1 where ECC is off or unsupported.
    long long uncorrectedEcc(Device d) const
    {
        unsigned long long n = 0;
        // NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, NVML_VOLATILE_ECC = 0.
        if (!d || !m_ecc || m_ecc(d, 1, 0, &n) != 0)
            return -1;
        return static_cast<long long>(n);
    }
    // Listens for critical XID errors on `d` from now on (the check's own run); false: cannot.
    bool watchXid(Device d)
    {
        return d && m_events && m_register && m_register(d, kEventXidCritical, m_events) == 0;
    }
    // The XID codes raised on any watched GPU since watchXid, with the GPU each came from.
    std::vector<std::pair<Device, unsigned long long>> xidsSeen()
    {
        std::vector<std::pair<Device, unsigned long long>> out;
        EventData e{};
        while (m_events && m_wait && m_wait(m_events, &e, 0) == 0)
            if (e.eventType & kEventXidCritical)
                out.emplace_back(e.device, e.eventData);
        return out;
    }

private:
    void *m_lib = nullptr;
    std::string m_problem;
    EventSet m_events = nullptr;
    int (*m_byBus)(const char *, Device *) = nullptr;
    int (*m_ecc)(Device, int, int, unsigned long long *) = nullptr;
    int (*m_eventSetCreate)(EventSet *) = nullptr;
    int (*m_register)(Device, unsigned long long, EventSet) = nullptr;
    int (*m_wait)(EventSet, EventData *, unsigned int) = nullptr;
    int (*m_eventSetFree)(EventSet) = nullptr;
    int (*m_shutdown)() = nullptr;
};

void synchronize(const torch::Device &d)
{
#if ORRERY_TORCH_CUDA
    if (d.is_cuda())
        c10::cuda::device_synchronize();
#else
    (void)d;
#endif
}

struct DeviceResult {
    std::string name;
    double gflops = 0, matmulError = 0, memoryGbps = 0, memoryGb = 0;
    long long ecc = -1;  // -1: not available
    std::vector<unsigned long long> xids;
    Nvml::Device nvml = nullptr;
    std::string failure;  // empty: passed
};

// A matmul timed and checked: C = A B in float32 on the device, its first rows against the same
// product in float64 on the CPU (a GPU with a bad SM or a flipped bit gives a large error or NaN).
void checkMatmul(const torch::Device &d, const HealthThresholds &t, DeviceResult &out)
{
    const std::int64_t n = d.is_cuda() ? 4096 : 512;  // ~0.14 TFLOP per product on a GPU, 0.27 GFLOP on CPU
    const int reps = d.is_cuda() ? 20 : 4;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(42);
    const auto a = torch::randn({n, n}, gen, torch::kFloat32).to(d);
    const auto b = torch::randn({n, n}, gen, torch::kFloat32).to(d);
    auto c = torch::matmul(a, b);  // warm-up (kernel selection, thread pool start)
    synchronize(d);
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i)
        c = torch::matmul(a, b);
    synchronize(d);
    const double s = secondsSince(t0);
    out.gflops = s > 0 ? 2.0 * double(n) * double(n) * double(n) * reps / s / 1e9 : 0;
    const std::int64_t rows = 16;
    const auto ref =
        torch::matmul(a.narrow(0, 0, rows).cpu().to(torch::kFloat64), b.cpu().to(torch::kFloat64));
    const auto got = c.narrow(0, 0, rows).cpu().to(torch::kFloat64);
    const double scale = std::max(ref.abs().max().item<double>(), 1e-30);
    out.matmulError = (got - ref).abs().max().item<double>() / scale;
    if (!std::isfinite(out.matmulError) || out.matmulError > t.matmulTolerance)
        out.failure = "matmul result off by " + std::to_string(out.matmulError) + " of its scale (limit " +
            std::to_string(t.matmulTolerance) + ")";
    else if (out.gflops < t.minMatmulGflops)
        out.failure = "matmul at " + fixed(out.gflops, 1) + " GFLOP/s, below the " +
            fixed(t.minMatmulGflops, 1) + " required";
}

// A buffer written with two bit patterns (0101..., then 1010...) and compared; GB/s counts the
// bytes written and read.
void checkMemory(const torch::Device &d, const HealthThresholds &t, DeviceResult &out)
{
    double bytes = t.cpuMemoryMb * 1e6;
#if ORRERY_TORCH_CUDA
    if (d.is_cuda()) {
        std::size_t freeBytes = 0, total = 0;
        c10::cuda::CUDAGuard guard(d.index());
        if (cudaMemGetInfo(&freeBytes, &total) == cudaSuccess)
            bytes = t.memoryFraction * double(freeBytes);
    }
#endif
    const auto n = std::max<std::int64_t>(1024, std::int64_t(bytes / 4.0));
    out.memoryGb = double(n) * 4 / 1e9;
    auto buf = torch::empty({n}, torch::TensorOptions().dtype(torch::kInt32).device(d));
    const std::int32_t patterns[] = {0x55555555, static_cast<std::int32_t>(0xAAAAAAAAu)};
    buf.zero_();  // untimed: the first touch of fresh pages is the kernel's time, not the memory's
    synchronize(d);
    const auto t0 = Clock::now();
    // Compared slice by slice: ne() makes a byte per word and sum() an int64 copy of that (eight
    // bytes per word), which over the whole buffer is twice its size (an H200's half of free
    // memory, 60 GB, asked for 111 GiB more). A slice of 2^24 words keeps both under 150 MB.
    constexpr std::int64_t slice = std::int64_t(1) << 24;
    auto wrongWords = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(d));
    for (const std::int32_t p : patterns) {
        buf.fill_(p);
        for (std::int64_t at = 0; at < n; at += slice)
            wrongWords += buf.narrow(0, at, std::min(slice, n - at)).ne(p).sum();
    }
    const std::int64_t wrong = wrongWords.item<std::int64_t>();
    const double s = secondsSince(t0);
    out.memoryGbps = s > 0 ? 2.0 * 2.0 * double(n) * 4 / s / 1e9 : 0;
    if (wrong > 0 && out.failure.empty())
        out.failure = "memory test: " + std::to_string(wrong) + " words read back wrong";
    else if (out.memoryGbps < t.minMemoryGbps && out.failure.empty())
        out.failure = "memory at " + fixed(out.memoryGbps, 1) + " GB/s, below the " +
            fixed(t.minMemoryGbps, 1) + " required";
}

struct AllreduceResult {
    bool ran = false;
    std::string backend, failure;
    double bytes = 0, algbwGbps = 0, busbwGbps = 0;
};

// One all-reduce over every node, timed after a warm-up; busbw as nccl-tests defines it.
AllreduceResult allreduce(std::unique_ptr<ProcessGroup> &group, const Rendezvous &r, const torch::Device &d,
                          const HealthThresholds &t)
{
    AllreduceResult out;
    if (r.worldSize < 2)
        return out;
    out.ran = true;
    try {
        group = std::make_unique<ProcessGroup>(r, d.is_cuda(), int(t.timeoutS));
        ProcessGroup &pg = *group;
        out.backend = pg.backend();
        const std::int64_t n = d.is_cuda() ? (64ll << 20) : (2ll << 20);  // 256 MB / 8 MB of float32
        const int reps = d.is_cuda() ? 5 : 3;
        auto x = torch::full({n}, float(r.rank + 1), torch::TensorOptions().device(d));
        pg.allreduceSum(x);  // warm-up: the connections are made here
        synchronize(d);
        const double expected = double(r.worldSize) * (r.worldSize + 1) / 2;
        const bool right = std::abs(x[0].item<double>() - expected) < 1e-3 * expected &&
            std::abs(x[n - 1].item<double>() - expected) < 1e-3 * expected;
        pg.barrier();
        const auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i)
            pg.allreduceSum(x);
        synchronize(d);
        const double s = secondsSince(t0) / reps;
        out.bytes = double(n) * 4;
        out.algbwGbps = s > 0 ? out.bytes / s / 1e9 : 0;
        out.busbwGbps = out.algbwGbps * 2.0 * (r.worldSize - 1) / r.worldSize;
        if (!right)
            out.failure = "all-reduce over " + std::to_string(r.worldSize) + " nodes gave a wrong sum";
        else if (out.busbwGbps < t.minBusbwGbps)
            out.failure = "all-reduce bus bandwidth " + fixed(out.busbwGbps, 2) + " GB/s, below the " +
                fixed(t.minBusbwGbps, 2) + " required";
        pg.barrier();
    } catch (const std::exception &e) {
        out.failure = "all-reduce over " + std::to_string(r.worldSize) + " nodes failed: " + e.what();
    }
    return out;
}

// Every rank's text on every rank (each node's verdict, for the node list rank 0 writes): the
// lengths' maximum, then one row per rank in a byte matrix summed across ranks (an all-gather
// from the all-reduce the group already has; a few kB).
std::vector<std::string> gatherText(ProcessGroup &pg, const std::string &mine)
{
    auto len = torch::tensor({double(mine.size())}, torch::kFloat64);
    pg.allreduceMax(len);
    const auto width = std::int64_t(len.item<double>());
    auto rows = torch::zeros({pg.worldSize(), std::max<std::int64_t>(1, width)}, torch::kInt32);
    for (std::size_t i = 0; i < mine.size(); ++i)
        rows[pg.rank()][std::int64_t(i)] = int(static_cast<unsigned char>(mine[i]));
    pg.allreduceSum(rows);
    std::vector<std::string> out;
    const auto a = rows.accessor<int, 2>();
    for (std::int64_t r = 0; r < pg.worldSize(); ++r) {
        std::string text;
        for (std::int64_t i = 0; i < width && a[r][i] != 0; ++i)
            text += char(a[r][i]);
        out.push_back(text);
    }
    return out;
}

nlohmann::json figure(double v, int decimals)
{
    const double scale = std::pow(10.0, decimals);
    return std::isfinite(v) ? nlohmann::json(std::round(v * scale) / scale) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<std::string> healthThresholdNames()
{
    return {"min_matmul_gflops", "min_memory_gbps",  "min_busbw_gbps", "memory_fraction",
            "cpu_memory_mb",     "matmul_tolerance", "timeout_s",      "max_ecc_errors"};
}

void HealthThresholds::set(const std::string &assignment)
{
    const auto eq = assignment.find('=');
    const std::string key = assignment.substr(0, eq);
    const std::string text = eq == std::string::npos ? std::string() : assignment.substr(eq + 1);
    double v = 0;
    try {
        std::size_t used = 0;
        v = std::stod(text, &used);
        if (used != text.size() || !std::isfinite(v) || v < 0)
            throw std::invalid_argument(text);
    } catch (const std::exception &) {
        throw std::invalid_argument("health check: " + key + " takes a number of at least 0, not '" + text +
                                    "'");
    }
    double *slot = key == "min_matmul_gflops" ? &minMatmulGflops
        : key == "min_memory_gbps"            ? &minMemoryGbps
        : key == "min_busbw_gbps"             ? &minBusbwGbps
        : key == "memory_fraction"            ? &memoryFraction
        : key == "cpu_memory_mb"              ? &cpuMemoryMb
        : key == "matmul_tolerance"           ? &matmulTolerance
        : key == "timeout_s"                  ? &timeoutS
        : key == "max_ecc_errors"             ? &maxEccErrors
                                              : nullptr;
    if (!slot) {
        std::string known;
        for (const auto &n : healthThresholdNames())
            known += (known.empty() ? "" : ", ") + n;
        throw std::invalid_argument("health check: unknown setting '" + key + "' (known: " + known + ")");
    }
    if (key == "memory_fraction" && (v <= 0 || v > 0.95))
        throw std::invalid_argument("health check: memory_fraction takes a fraction in (0, 0.95], not '" +
                                    text + "'");
    *slot = v;
}

HealthThresholds HealthThresholds::resolvedFor(bool cuda) const
{
    HealthThresholds t = *this;
    // Floors far below any working device, so only a broken or badly throttled one fails: the
    // slowest data-centre GPU in use (T4) does 8 TFLOP/s in float32 and 300 GB/s; a CPU core
    // a few GFLOP/s. Loopback Gloo is not a network worth a floor; NCCL below 1 GB/s is a
    // broken link (InfiniBand or NVLink give 10-400).
    if (t.minMatmulGflops < 0)
        t.minMatmulGflops = cuda ? 2000 : 0.2;
    if (t.minMemoryGbps < 0)
        t.minMemoryGbps = cuda ? 50 : 0.05;
    if (t.minBusbwGbps < 0)
        t.minBusbwGbps = cuda ? 1 : 0;
    return t;
}

int runHealthCheck(const std::string &runDir, const HealthThresholds &given, const std::string &deviceWanted)
{
    const auto started = Clock::now();
    Rendezvous r;
    try {
        r = rendezvousFromEnvironment();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "orrery-train: health check: %s\n", e.what());
        return 2;
    }
    bool cuda = deviceWanted == "cuda" || (deviceWanted == "auto" && torch::cuda::is_available());
    if (cuda && !torch::cuda::is_available()) {
        std::fprintf(stderr, "orrery-train: health check: --device cuda, but no CUDA device is available\n");
        return 2;
    }
    const HealthThresholds t = given.resolvedFor(cuda);
    const std::string node = nodeName();
    // One process per node checks the node's devices; a node's further ranks only join the
    // all-reduce (so a run started with a rank per GPU does not check every GPU once per rank).
    const bool checksNode = r.localRank == 0;
    std::vector<DeviceResult> devices;
    Nvml nvml;
    torch::Device allreduceDevice(torch::kCPU);
    if (checksNode) {
        if (cuda) {
#if ORRERY_TORCH_CUDA
            const int count = int(torch::cuda::device_count());
            for (int i = 0; i < count; ++i) {
                DeviceResult d;
                const auto *p = at::cuda::getDeviceProperties(c10::DeviceIndex(i));
                d.name = std::string(p->name) + " (cuda:" + std::to_string(i) + ")";
                char bus[32];
                std::snprintf(bus, sizeof bus, "%08x:%02x:%02x.0", unsigned(p->pciDomainID),
                              unsigned(p->pciBusID), unsigned(p->pciDeviceID));
                d.nvml = nvml.device(bus);
                nvml.watchXid(d.nvml);
                devices.push_back(d);
            }
#endif
        } else {
            devices.push_back(DeviceResult{});
            devices.back().name = "cpu";
        }
    }
    if (cuda)
        allreduceDevice = torch::Device(
            torch::kCUDA, c10::DeviceIndex(r.localRank % std::max<int>(1, int(torch::cuda::device_count()))));
    for (std::size_t i = 0; i < devices.size(); ++i) {
        DeviceResult &d = devices[i];
        const torch::Device dev =
            cuda ? torch::Device(torch::kCUDA, c10::DeviceIndex(i)) : torch::Device(torch::kCPU);
        try {
            checkMatmul(dev, t, d);
            checkMemory(dev, t, d);
        } catch (const std::exception &e) {
            // A CUDA error (an XID, an uncorrectable ECC error) surfaces here as an exception.
            if (d.failure.empty())
                d.failure = std::string("the check itself failed: ") + e.what();
        }
        d.ecc = nvml.uncorrectedEcc(d.nvml);
        if (d.ecc > t.maxEccErrors && d.failure.empty())
            d.failure = std::to_string(d.ecc) + " uncorrected ECC errors (limit " +
                std::to_string(static_cast<long long>(t.maxEccErrors)) + ")";
    }
    std::unique_ptr<ProcessGroup> group;
    const AllreduceResult ar = allreduce(group, r, allreduceDevice, t);
    // XIDs raised while the matmuls, memory tests and all-reduce ran.
    for (const auto &[dev, xid] : nvml.xidsSeen())
        for (DeviceResult &d : devices)
            if (d.nvml == dev) {
                d.xids.push_back(xid);
                if (d.failure.empty())
                    d.failure = "XID " + std::to_string(xid) + " during the check";
            }
    // The verdicts are gathered over a CPU group (Gloo): the all-reduce's own on CPU; on GPUs one
    // of its own at the next port.
    std::unique_ptr<ProcessGroup> cpuGroup;
    if (group && ar.failure.empty() && cuda) {
        Rendezvous next = r;
        next.masterPort = r.masterPort == 65535 ? r.masterPort - 1 : r.masterPort + 1;
        try {
            cpuGroup = std::make_unique<ProcessGroup>(next, false, int(t.timeoutS));
        } catch (const std::exception &) {
            cpuGroup.reset();
        }
    }
    ProcessGroup *gatherGroup = cuda ? cpuGroup.get() : (ar.failure.empty() ? group.get() : nullptr);
    if (!checksNode) {
        if (gatherGroup)
            gatherText(*gatherGroup, {});
        return ar.failure.empty() ? 0 : 1;
    }

    // The node's verdict: its first failing device, else the all-reduce, else the test hook.
    std::string reason;
    for (const DeviceResult &d : devices)
        if (reason.empty() && !d.failure.empty())
            reason = d.name + ": " + d.failure;
    const bool nodeFault = !reason.empty();
    if (reason.empty() && !ar.failure.empty())
        reason = ar.failure;
    if (reason.empty() && faultInjected(node))
        reason = "failed on purpose (ORRERY_HEALTH_CHECK_FAIL names this node: a test hook)";
    const bool injected = !nodeFault && ar.failure.empty() && !reason.empty();
    const bool pass = reason.empty();
    if (devices.empty() && pass)
        reason = "no device was checked";

    nlohmann::json j{
        {"node", node},
        {"pass", pass},
        {"reason", reason},
        {"device", cuda ? "cuda" : "cpu"},
        {"t", std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()}};
    nlohmann::json devs = nlohmann::json::array();
    double minGflops = INFINITY, minGbps = INFINITY;
    long long ecc = -1;
    for (const DeviceResult &d : devices) {
        minGflops = std::min(minGflops, d.gflops);
        minGbps = std::min(minGbps, d.memoryGbps);
        ecc = std::max(ecc, d.ecc);
        devs.push_back({{"name", d.name},
                        {"pass", d.failure.empty()},
                        {"reason", d.failure},
                        {"matmul_gflops", figure(d.gflops, 1)},
                        {"matmul_error", d.matmulError},
                        {"memory_gbps", figure(d.memoryGbps, 2)},
                        {"memory_gb", figure(d.memoryGb, 3)},
                        {"ecc_uncorrected", d.ecc >= 0 ? nlohmann::json(d.ecc) : nlohmann::json(nullptr)},
                        {"xid", d.xids}});
    }
    j["devices"] = devs;
    j["matmul_gflops"] = devices.empty() ? nlohmann::json(nullptr) : figure(minGflops, 1);
    j["memory_gbps"] = devices.empty() ? nlohmann::json(nullptr) : figure(minGbps, 2);
    j["ecc"] = !cuda             ? nlohmann::json("not applicable (CPU)")
        : ecc >= 0               ? nlohmann::json(ecc)
        : nvml.problem().empty() ? nlohmann::json("not available")
                                 : nlohmann::json(nvml.problem());
    if (ar.ran) {
        j["allreduce"] = {{"backend", ar.backend},
                          {"nodes", r.worldSize},
                          {"bytes", ar.bytes},
                          {"algbw_gbps", figure(ar.algbwGbps, 3)}};
        j["busbw_gbps"] = figure(ar.busbwGbps, 3);
    } else {
        j["busbw_gbps"] = nullptr;  // one node: nothing to all-reduce with
    }
    j["duration_ms"] = std::llround(secondsSince(started) * 1000);

    std::error_code ec;
    fs::create_directories(fs::path(runDir) / "health", ec);
    const std::string mine = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::vector<std::string> all{mine};
    if (gatherGroup) {
        try {
            all = gatherText(*gatherGroup, mine);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "orrery-train: health check: gathering the nodes' verdicts: %s\n", e.what());
        }
    }
    try {
        writeFileAtomically((fs::path(runDir) / "health" / (node + ".json")).string(), j.dump(1) + "\n");
        // Rank 0 also writes every node's verdict as one object by node name: the runner reads
        // this one file (Trial::health) in the same read as exit.json, with no listing.
        if (r.rank == 0) {
            nlohmann::json byNode = nlohmann::json::object();
            for (const std::string &text : all) {
                const auto v = nlohmann::json::parse(text, nullptr, false);
                if (v.is_object() && v.contains("node") && v["node"].is_string())
                    byNode[v["node"].get<std::string>()] = v;
            }
            writeFileAtomically((fs::path(runDir) / "health.json").string(), byNode.dump() + "\n");
        }
        // The attempt's verdict, as the runner reads it (docs/sweeps.md "Health check"): only a
        // node that failed its own checks names itself; where only the all-reduce failed every
        // node says so and the batch script writes the verdict without a node.
        if (!pass && (nodeFault || injected)) {
            const nlohmann::json verdict{{"state", "failed"},
                                         {"reason", "health check failed on " + node + ": " + reason},
                                         {"node", node},
                                         {"cause", "health"},
                                         {"t",
                                          std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count()}};
            writeFileAtomically((fs::path(runDir) / "exit.json").string(), verdict.dump() + "\n");
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "orrery-train: health check: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "orrery-train: health check on %s: %s%s\n", node.c_str(),
                 pass ? "passed" : "FAILED: ", pass ? "" : reason.c_str());
    return pass ? 0 : 1;
}

}  // namespace orrery::train
