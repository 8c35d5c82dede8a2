// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#if ORRERY_TORCH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if ORRERY_TORCH_CUDA
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace orrery::train {

namespace {

std::string env(const char *name)
{
    const char *v = std::getenv(name);
    return v ? v : "";
}

int envInt(const char *name, int fallback)
{
    const std::string v = env(name);
    if (v.empty())
        return fallback;
    try {
        std::size_t used = 0;
        const int n = std::stoi(v, &used);
        if (used != v.size())
            throw std::invalid_argument(v);
        return n;
    } catch (const std::exception &) {
        throw std::runtime_error(std::string("environment variable ") + name + "='" + v +
                                 "' is not a number");
    }
}

}  // namespace

std::string firstHost(const std::string &nodelist)
{
    // The first comma at bracket depth 0 ends the first entry; a bracket range expands to its
    // first number with the range's zero padding.
    std::string entry;
    int depth = 0;
    for (char c : nodelist) {
        if (c == '[')
            ++depth;
        if (c == ']')
            --depth;
        if (c == ',' && depth == 0)
            break;
        entry += c;
    }
    const auto open = entry.find('[');
    if (open == std::string::npos)
        return entry;
    std::string first;
    for (std::size_t i = open + 1; i < entry.size() && entry[i] != ',' && entry[i] != '-' && entry[i] != ']';
         ++i)
        first += entry[i];
    return entry.substr(0, open) + first;
}

Rendezvous rendezvousFromEnvironment()
{
    Rendezvous r;
    if (!env("SLURM_PROCID").empty() && !env("SLURM_NTASKS").empty() && env("RANK").empty()) {
        r.rank = envInt("SLURM_PROCID", 0);
        r.worldSize = envInt("SLURM_NTASKS", 1);
        r.localRank = envInt("SLURM_LOCALID", 0);
        r.node = envInt("SLURM_NODEID", 0);
        r.masterAddr = env("MASTER_ADDR").empty() ? firstHost(env("SLURM_JOB_NODELIST")) : env("MASTER_ADDR");
        if (r.masterAddr.empty())
            r.masterAddr = "127.0.0.1";
        // Each array task is its own job id: derive a port from it so tasks on one node differ.
        r.masterPort = envInt("MASTER_PORT", 20000 + envInt("SLURM_JOB_ID", 0) % 20000);
        r.source = "slurm";
    } else if (!env("RANK").empty() || !env("WORLD_SIZE").empty()) {
        r.rank = envInt("RANK", 0);
        r.worldSize = envInt("WORLD_SIZE", 1);
        r.localRank = envInt("LOCAL_RANK", r.rank);
        r.node = envInt("GROUP_RANK", 0);
        r.masterAddr = env("MASTER_ADDR").empty() ? "127.0.0.1" : env("MASTER_ADDR");
        r.masterPort = envInt("MASTER_PORT", 29500);
        r.source = "env";
    }
    if (r.worldSize < 1 || r.rank < 0 || r.rank >= r.worldSize)
        throw std::runtime_error("rank " + std::to_string(r.rank) + " is not within world size " +
                                 std::to_string(r.worldSize) + " (" + r.source + ")");
    if (r.masterPort <= 0 || r.masterPort > 65535)
        throw std::runtime_error("MASTER_PORT " + std::to_string(r.masterPort) + " is not a port");
    return r;
}

ProcessGroup::ProcessGroup(const Rendezvous &r, bool cuda, int timeoutSeconds, bool always) : m_r(r)
{
    if (r.worldSize == 1 && !always)
        return;
    c10d::TCPStoreOptions so;
    // One rank (dist.process_group: always) has nobody to meet: any free port will do.
    so.port = r.worldSize == 1 ? 0 : std::uint16_t(r.masterPort);
    so.isServer = r.rank == 0;
    so.numWorkers = std::size_t(r.worldSize);
    so.waitWorkers = true;
    so.timeout = std::chrono::seconds(timeoutSeconds);
    c10::intrusive_ptr<c10d::Store> store;
    try {
        store = c10::make_intrusive<c10d::TCPStore>(r.masterAddr, so);
    } catch (const std::exception &e) {
        throw std::runtime_error("rank " + std::to_string(r.rank) + ": cannot rendezvous at " + r.masterAddr +
                                 ":" + std::to_string(r.masterPort) + " within " +
                                 std::to_string(timeoutSeconds) + " s: " + e.what());
    }
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("orrery", store);
    const auto timeout = std::chrono::milliseconds(std::int64_t(timeoutSeconds) * 1000);
    if (cuda) {
#if ORRERY_TORCH_CUDA
        auto opts = c10d::ProcessGroupNCCL::Options::create();
        opts->timeout = timeout;
        m_pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, r.rank, r.worldSize, opts);
#else
        throw std::runtime_error("this orrery-train was built without CUDA/NCCL");
#endif
    } else {
#if ORRERY_TORCH_GLOO
        auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
        // Bind to the address the other ranks reach us through: loopback for local ranks, the
        // host name across nodes.
        opts->devices.push_back(r.masterAddr == "127.0.0.1" || r.masterAddr == "localhost"
                                    ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                    : c10d::ProcessGroupGloo::createDefaultDevice());
        m_pg = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, r.rank, r.worldSize, opts);
#else
        throw std::runtime_error(
            "this orrery-train was built without Gloo (its headers were not found at build time)");
#endif
    }
}

ProcessGroup::~ProcessGroup() = default;

std::string ProcessGroup::backend() const
{
    return m_pg ? m_pg->getBackendName() : "none";
}

void ProcessGroup::healthCheck(const torch::Device &device, int seconds)
{
    if (!active())
        return;
    auto t = torch::ones({1}, torch::TensorOptions().device(device));
    std::vector<torch::Tensor> ts{t};
    auto work = m_pg->allreduce(ts);
    bool ok = false;
    try {
        ok = work->wait(std::chrono::milliseconds(std::int64_t(seconds) * 1000));
    } catch (const std::exception &e) {
        throw std::runtime_error("health check: the first allreduce failed: " + std::string(e.what()));
    }
    const double sum = t.cpu().item<double>();
    if (!ok || sum != double(m_r.worldSize))
        throw std::runtime_error("health check: allreduce of ones gave " + std::to_string(sum) +
                                 ", expected " + std::to_string(m_r.worldSize) +
                                 " (a rank is missing or a link is broken)");
    barrier();
}

void ProcessGroup::allreduceSum(torch::Tensor &t)
{
    if (active())
        allreduceAsync(t)->wait();
}

void ProcessGroup::allreduceMax(torch::Tensor &t)
{
    if (!active())
        return;
    std::vector<torch::Tensor> ts{t};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    m_pg->allreduce(ts, o)->wait();
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allreduceAsync(torch::Tensor &t)
{
    std::vector<torch::Tensor> ts{t};
    return m_pg->allreduce(ts);
}

void ProcessGroup::barrier()
{
    if (active())
        m_pg->barrier()->wait();
}

ProcessGroup::Pending::Pending(c10::intrusive_ptr<c10d::Work> work, std::function<void()> then)
    : m_work(std::move(work)), m_then(std::move(then))
{ }

void ProcessGroup::Pending::wait()
{
    if (!m_work)
        return;
    m_work->wait();
    m_work.reset();
    if (m_then)
        m_then();
    m_then = nullptr;
}

ProcessGroup::Pending ProcessGroup::reduceScatterAsync(torch::Tensor &flat, torch::Tensor &mine)
{
    if (backend() != "gloo")
        return {m_pg->_reduce_scatter_base(mine, flat), nullptr};
    const auto n = mine.numel();
    const auto offset = n * m_r.rank;
    return {allreduceAsync(flat),
            [flat, mine, offset, n]() mutable { mine.copy_(flat.narrow(0, offset, n)); }};
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allgatherAsync(torch::Tensor &flat, torch::Tensor &mine)
{
    return m_pg->_allgather_base(flat, mine);
}

namespace {

// Runs after a parameter's gradient was accumulated into .grad (what Python's
// register_post_accumulate_grad_hook installs).
class GradReadyHook : public torch::autograd::PostAccumulateGradHook {
public:
    explicit GradReadyHook(std::function<void()> f) : m_f(std::move(f)) { }
    void operator()(const torch::autograd::Variable &) override { m_f(); }

private:
    std::function<void()> m_f;
};

}  // namespace

std::vector<std::vector<std::size_t>> gradientBuckets(const std::vector<torch::Tensor> &params,
                                                      double bucketMB)
{
    // Reverse parameter order: backward produces the last layers' gradients first.
    const auto limit = std::int64_t(bucketMB * 1024 * 1024);
    std::vector<std::vector<std::size_t>> buckets;
    std::int64_t bytes = 0;
    for (std::size_t k = params.size(); k-- > 0;) {
        const auto &p = params[k];
        if (buckets.empty() || bytes + p.numel() * p.element_size() > limit) {
            buckets.emplace_back();
            bytes = 0;
        }
        buckets.back().push_back(k);
        bytes += p.numel() * p.element_size();
    }
    return buckets;
}

void onGradientAccumulated(torch::Tensor &param, std::function<void()> f)
{
    std::unique_ptr<torch::autograd::PostAccumulateGradHook> hook;
    if (f)
        hook = std::make_unique<GradReadyHook>(std::move(f));
    torch::autograd::impl::set_post_acc_grad_hooks(param, std::move(hook));
}

GradientSync::GradientSync(ProcessGroup &pg, std::vector<torch::Tensor> params, double bucketMB)
    : m_pg(pg), m_params(std::move(params))
{
    if (!pg.active())
        return;
    m_bucketOf.assign(m_params.size(), 0);
    for (auto &indices : gradientBuckets(m_params, bucketMB)) {
        for (std::size_t k : indices)
            m_bucketOf[k] = m_buckets.size();
        m_buckets.emplace_back();
        m_buckets.back().params = std::move(indices);
    }
    for (Bucket &b : m_buckets) {
        std::int64_t n = 0;
        for (std::size_t k : b.params)
            n += m_params[k].numel();
        // bf16 weights' gradients (train.bf16_weights) are summed in fp32: a bf16 sum across
        // ranks would round at every addition.
        auto options = m_params[b.params.front()].options();
        if (options.dtype() == torch::kBFloat16)
            options = options.dtype(torch::kFloat);
        b.flat = torch::zeros({n}, options);
        b.pending = b.params.size();
    }
    for (std::size_t k = 0; k < m_params.size(); ++k)
        onGradientAccumulated(m_params[k], [this, k] { onGradReady(k); });
}

GradientSync::~GradientSync()
{
    for (auto &p : m_params)
        if (m_pg.active())
            onGradientAccumulated(p, nullptr);
}

void GradientSync::onGradReady(std::size_t param)
{
    if (!m_enabled)
        return;
    Bucket &b = m_buckets[m_bucketOf[param]];
    if (--b.pending > 0)
        return;
    // The bucket is complete: pack its gradients and start the allreduce while backward goes on.
    std::int64_t offset = 0;
    torch::NoGradGuard ng;
    for (std::size_t k : b.params) {
        const auto &g = m_params[k].grad();
        const auto n = m_params[k].numel();
        b.flat.narrow(0, offset, n).copy_(g.reshape({n}));
        offset += n;
    }
    b.work = m_pg.allreduceAsync(b.flat);
}

void GradientSync::finish()
{
    if (!m_pg.active() || !m_enabled)
        return;
    torch::NoGradGuard ng;
    const double scale = 1.0 / m_pg.worldSize();
    for (Bucket &b : m_buckets) {
        if (!b.work)  // a parameter without a gradient this step: sync what we have
            throw std::runtime_error(
                "gradient sync: a bucket was not complete after backward (a parameter unused in "
                "the forward pass?)");
        b.work->wait();
        b.work.reset();
        b.pending = b.params.size();
        b.flat.mul_(scale);
        std::int64_t offset = 0;
        for (std::size_t k : b.params) {
            auto g = m_params[k].mutable_grad();
            const auto n = m_params[k].numel();
            g.copy_(b.flat.narrow(0, offset, n).view(g.sizes()));
            offset += n;
        }
    }
}

}  // namespace orrery::train
