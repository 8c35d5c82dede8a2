// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where this process stands in the job (rendezvous), the process group (c10d TCPStore + NCCL on
// CUDA, Gloo on CPU), a start-up health check, and DDP-style gradient sync: parameters in
// buckets, each bucket's allreduce launched from the parameters' post-accumulate-grad hooks as
// soon as the bucket is complete, so communication overlaps the rest of the backward pass.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace c10d {
class Backend;
class Work;
}  // namespace c10d

namespace orrery::train {

struct Rendezvous {
    int rank = 0, worldSize = 1, localRank = 0;
    int node = 0;  // this process's node among the job's (SLURM_NODEID, torchrun's GROUP_RANK)
    std::string masterAddr = "127.0.0.1";
    int masterPort = 29500;
    std::string source = "single process";  // "slurm", "env", "--nproc"
};

// From SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID (MASTER_ADDR = first host of
// SLURM_JOB_NODELIST, MASTER_PORT derived from the job id unless set), else RANK/WORLD_SIZE/
// LOCAL_RANK/MASTER_ADDR/MASTER_PORT, else a single process. Throws std::runtime_error when the
// environment is inconsistent.
Rendezvous rendezvousFromEnvironment();

// The first host of a Slurm hostlist: "gpu[01-04,07],cpu1" → "gpu01".
std::string firstHost(const std::string &nodelist);

class ProcessGroup {
public:
    // Connects every rank (blocks until all have joined or timeout). World size 1: nothing, unless
    // `always` (dist.process_group: always), which builds the NCCL/Gloo group for one rank so that
    // the distributed path (health check, buckets, collectives) can be checked on one GPU.
    ProcessGroup(const Rendezvous &r, bool cuda, int timeoutSeconds, bool always = false);
    ~ProcessGroup();

    int rank() const { return m_r.rank; }
    int worldSize() const { return m_r.worldSize; }
    // Whether collectives run at all (a group was built); "nccl", "gloo" or "none".
    bool active() const { return bool(m_pg); }
    std::string backend() const;

    // A small allreduce and a barrier within `seconds`; throws with a clear message otherwise
    // (a pre-flight check, as SageMaker's: a dead NIC or a wrong MASTER_ADDR fails here, in
    // seconds, not at the first gradient sync).
    void healthCheck(const torch::Device &device, int seconds);

    // Sum across ranks, in place (blocking).
    void allreduceSum(torch::Tensor &t);
    // Max across ranks, in place (blocking).
    void allreduceMax(torch::Tensor &t);
    c10::intrusive_ptr<c10d::Work> allreduceAsync(torch::Tensor &t);
    void barrier();

    // A collective in flight; wait() completes it on this rank.
    class Pending {
    public:
        Pending() = default;
        Pending(c10::intrusive_ptr<c10d::Work> work, std::function<void()> then);
        void wait();
        bool active() const { return bool(m_work); }

    private:
        c10::intrusive_ptr<c10d::Work> m_work;
        std::function<void()> m_then;
    };
    // `flat` (a multiple of the world size) summed across ranks, this rank's contiguous slice of
    // it into `mine`. NCCL reduce-scatters; on Gloo it is emulated by an allreduce of `flat` in
    // place (torch 2.11's ProcessGroupGloo::_reduce_scatter_base does the same on a clone):
    // twice a ring reduce-scatter's traffic, and `flat` is overwritten.
    Pending reduceScatterAsync(torch::Tensor &flat, torch::Tensor &mine);
    // Every rank's `mine` into `flat` (rank r's at r * mine.numel()): NCCL's all-gather, Gloo's
    // native allgather (into a temporary, copied out).
    c10::intrusive_ptr<c10d::Work> allgatherAsync(torch::Tensor &flat, torch::Tensor &mine);

private:
    Rendezvous m_r;
    c10::intrusive_ptr<c10d::Backend> m_pg;
};

// Parameter indices in buckets of about `bucketMB`, filled in reverse registration order (the
// order in which backward produces gradients).
std::vector<std::vector<std::size_t>> gradientBuckets(const std::vector<torch::Tensor> &params,
                                                      double bucketMB);
// Calls `f` after each backward has accumulated `param`'s gradient into .grad (Python's
// register_post_accumulate_grad_hook); an empty `f` removes it.
void onGradientAccumulated(torch::Tensor &param, std::function<void()> f);

// DDP's gradient sync for `params` (in registration order; buckets are filled in reverse, the
// order in which backward produces gradients). syncEnabled(false) for accumulation micro-steps.
class GradientSync {
public:
    GradientSync(ProcessGroup &pg, std::vector<torch::Tensor> params, double bucketMB);
    ~GradientSync();
    void setSyncEnabled(bool on) { m_enabled = on; }
    // After backward: waits for the in-flight allreduces and writes the averaged gradients.
    void finish();
    std::size_t bucketCount() const { return m_buckets.size(); }

private:
    struct Bucket {
        std::vector<std::size_t> params;
        torch::Tensor flat;
        std::size_t pending = 0;
        c10::intrusive_ptr<c10d::Work> work;
    };
    void onGradReady(std::size_t param);

    ProcessGroup &m_pg;
    std::vector<torch::Tensor> m_params;
    std::vector<Bucket> m_buckets;
    std::vector<std::size_t> m_bucketOf;
    std::atomic<bool> m_enabled{true};
};

}  // namespace orrery::train
