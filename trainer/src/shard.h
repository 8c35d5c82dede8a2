// SPDX-License-Identifier: GPL-3.0-or-later
//
// ZeRO stages 1 and 2 (dist.shard: optimizer | gradients): the parameters are moved into flat
// buckets (the model's parameters become views into them), each bucket padded to a multiple of
// the world size and split into one contiguous slice per rank. A rank updates only its slices
// (the optimizer keeps AdamW's moments for them alone), then the updated slices are all-gathered
// into every rank's parameters. Stage 1 allreduces the gradients as DDP does; stage 2
// reduce-scatters them, each bucket as soon as backward completes it, and frees the full
// gradients, so a rank keeps only its gradient slices between steps.
//
// Stage 3 (dist.shard: parameters) keeps only each rank's slice of the parameters too. Its buckets
// follow the model's units (each DiT block, and one for the rest: `units`): a block's bucket is
// all-gathered when the block runs (gatherUnit) and freed after it (releaseUnit), in its forward
// and again around its recomputed backward (activation checkpointing: nothing of the block is
// kept between them); the rest is gathered for the whole step. Every backward reduce-scatters
// each bucket's gradients into the slice (with gradient accumulation too), so between steps a
// rank holds 1/N of the parameters, gradients and optimizer state.
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
    enum class Stage { Optimizer = 1, Gradients = 2, Parameters = 3 };
    // `units` (stage 3): each parameter's unit, a block's index or -1 (the rest); one bucket each.
    ShardedParameters(ProcessGroup &pg, std::vector<torch::Tensor> params, double bucketMB, Stage stage,
                      const std::vector<int> &units = {});
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
    // Every rank's updated slices into every rank's parameters (stages 1 and 2; stage 3 gathers
    // each unit when it runs).
    void gatherParameters();
    // Stage 3: the unit's parameters whole (every rank calls it), and freed again. Other stages:
    // nothing.
    void gatherUnit(int unit);
    void releaseUnit(int unit);
    // Stage 3: every unit whole, or every unit freed; `adopt`: the whole parameters' values (a
    // checkpoint read into them) become the slices first.
    void gatherAll();
    void releaseAll(bool adopt = false);
    bool shardsParameters() const { return m_stage == Stage::Parameters; }
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
        torch::Tensor flat;  // the parameters (padding zero); stage 3: only while gathered
        torch::Tensor paramSlice;  // stage 3: this rank's slice, kept
        torch::Tensor gradFlat;  // stage 1: persistent; stage 2: only while its reduction is in flight
        torch::Tensor gradSlice;
        torch::Tensor gradPart;  // stage 3: this backward's reduced slice, added to gradSlice
        bool gathered = true;
        std::size_t pending = 0;
        bool launched = false, ready = false;
        ProcessGroup::Pending reduction;
    };
    void onGradReady(std::size_t param);
    void pack(Bucket &b, torch::Tensor &into);
    void launch(Bucket &b);
    void complete(Bucket &b);
    void gather(Bucket &b);
    void release(Bucket &b);
    // A parameter's shape as built (stage 3 frees the tensors between uses).
    struct Size {
        std::int64_t numel = 0;
        std::vector<std::int64_t> shape;
    };
    const Size &sizeOf(std::size_t param) const { return m_sizes[param]; }
    std::vector<Size> m_sizes;

    ProcessGroup &m_pg;
    std::vector<torch::Tensor> m_params;
    std::vector<Bucket> m_buckets;
    std::vector<std::size_t> m_bucketOf;
    std::deque<std::size_t> m_inFlight;
    const Stage m_stage;
    const bool m_shardGradients;
    std::vector<std::size_t> m_unitBucket;  // stage 3: unit + 1 -> its bucket
    const int m_world, m_rank;
    bool m_enabled = true;
};

}  // namespace orrery::train
