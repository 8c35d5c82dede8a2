// SPDX-License-Identifier: GPL-3.0-or-later
//
// ZeRO stages 1 and 2 (dist.shard: optimizer | gradients): the parameters are moved into flat
// buckets (the model's parameters become views into them), each bucket padded to a multiple of
// the world size and split into one contiguous slice per rank. A rank updates only its slices
// (the optimizer keeps AdamW's moments for them alone), then the updated slices are all-gathered
// into every rank's parameters. Stage 1 allreduces the gradients as DDP does; stage 2
// reduce-scatters them, each bucket as soon as backward completes it, and frees the full
// gradients, so a rank keeps only its gradient slices between steps.
#pragma once

#include "distributed.h"

#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <vector>

namespace orrery::train {

// Owns the flat buckets and their communication; not thread-safe (backward's hooks run on the
// thread that called backward, on CPU and CUDA alike for these leaf tensors).
class ShardedParameters {
public:
    ShardedParameters(ProcessGroup &pg, std::vector<torch::Tensor> params, double bucketMB,
                      bool shardGradients);
    ~ShardedParameters();
    ShardedParameters(const ShardedParameters &) = delete;
    ShardedParameters &operator=(const ShardedParameters &) = delete;

    // As GradientSync: with gradient accumulation only the last micro-step's backward syncs;
    // the others accumulate the full gradients locally (as FSDP's no_sync).
    void setSyncEnabled(bool on) { m_enabled = on; }
    // After the last micro-step's backward: this rank's slices of the averaged gradients, one per
    // bucket.
    std::vector<torch::Tensor> gradientSlices();
    // This rank's slices of the parameters: views, so an update writes the model's parameters.
    std::vector<torch::Tensor> parameterSlices() const;
    // Every rank's updated slices into every rank's parameters.
    void gatherParameters();
    void zeroGradients();

    // Per-bucket slices (of every rank) as whole tensors shaped as the parameters; every rank
    // calls it, the result is filled only where `wanted`.
    std::vector<torch::Tensor> gatherPerParameter(const std::vector<torch::Tensor> &slices, bool wanted);
    // This rank's slice of each bucket, from whole per-parameter tensors.
    std::vector<torch::Tensor> slicesOf(const std::vector<torch::Tensor> &whole) const;
    // The first parameter of each bucket (whose step count stands for the bucket's).
    std::size_t firstParameter(std::size_t bucket) const { return m_buckets[bucket].params.front(); }
    std::size_t bucketOf(std::size_t param) const { return m_bucketOf[param]; }
    std::size_t bucketCount() const { return m_buckets.size(); }
    // Every slice's element count, one per bucket.
    std::vector<std::int64_t> sliceSizes() const;

private:
    struct Bucket {
        std::vector<std::size_t> params;
        std::vector<std::int64_t> offsets;  // of each parameter in `flat`
        std::int64_t padded = 0, slice = 0;
        torch::Tensor flat;  // the parameters (padding zero)
        torch::Tensor gradFlat;  // stage 1: persistent; stage 2: only while its reduction is in flight
        torch::Tensor gradSlice;
        std::size_t pending = 0;
        bool launched = false, ready = false;
        ProcessGroup::Pending reduction;
    };
    void onGradReady(std::size_t param);
    void pack(Bucket &b, torch::Tensor &into);
    void launch(Bucket &b);
    void complete(Bucket &b);

    ProcessGroup &m_pg;
    std::vector<torch::Tensor> m_params;
    std::vector<Bucket> m_buckets;
    std::vector<std::size_t> m_bucketOf;
    std::deque<std::size_t> m_inFlight;
    const bool m_shardGradients;
    const int m_world, m_rank;
    bool m_enabled = true;
};

}  // namespace orrery::train
