// SPDX-License-Identifier: GPL-3.0-or-later
//
// The optimizer step of data-parallel training: gradient sync across ranks (DDP-style buckets,
// distributed.h), global-norm clipping, AdamW (the fused kernel) and the EMA of the weights.
// dist.shard chooses what is partitioned across the ranks (ZeRO): none, the optimizer state
// (stage 1), + the gradients (2), + the parameters (3). train.bf16_weights (dist.shard none) keeps
// the model's parameters in bf16 for the step and an fp32 master copy that AdamW, the EMA and
// checkpoints use.
#pragma once

#include "config.h"
#include "distributed.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace orrery::train {

class ShardedParameters;

class Optimizer {
public:
    // `params`: the model's; `units`: each parameter's unit (DenoiserImpl::parameterUnits), for
    // dist.shard parameters.
    Optimizer(ProcessGroup &pg, const Config &c, std::vector<torch::Tensor> params,
              const std::vector<int> &units = {});
    // The EMA copy's parameters (in the same order), set to the weights' values now (stage 3:
    // kept as slices, and the copy's own tensors freed).
    void startEma(std::vector<torch::Tensor> emaParams);
    ~Optimizer();
    Optimizer(const Optimizer &) = delete;
    Optimizer &operator=(const Optimizer &) = delete;

    // Before each micro-step's backward: whether its gradients are synchronised (with gradient
    // accumulation, only the last micro-step's are).
    void setSyncEnabled(bool on);
    // After the last micro-step's backward: finishes the gradient sync, clips the global norm to
    // optim.grad_clip, takes the AdamW step at `lr`, updates the EMA (decay warmed up by `step`)
    // and zeroes the gradients. Returns the gradient norm before clipping, a device scalar (no
    // host sync).
    torch::Tensor step(double lr, std::int64_t step);

    // The optimizer state, consolidated (whatever the world size and sharding): every rank calls
    // save() (a sharded state is gathered), the state is written only where `out` is given.
    void save(torch::serialize::OutputArchive *out);
    // Loads a consolidated state written at any world size; `file` names it in errors.
    void load(torch::serialize::InputArchive &in, const std::string &file);

    // dist.shard parameters (ZeRO stage 3; otherwise these do nothing). Before each micro-step's
    // forward: the parameters outside the blocks whole (until step() frees them). A block's own
    // (the model's block scope calls them): whole while it runs, freed after.
    void beforeForward();
    void enterUnit(int unit);
    void leaveUnit(int unit);
    // Every parameter and the EMA whole on every rank (a checkpoint's save or load, every rank
    // calls it), then freed again; `adopt`: what was read into them becomes the slices. With bf16
    // weights the parameters hold the fp32 master copy in between (what a checkpoint holds), and
    // release() makes their bf16 copies from it again.
    void materialize();
    void release(bool adopt = false);
    // The EMA whole where `here` (sampling and evaluation: the lead; every rank calls it, the
    // others only take part in the gathers), then freed again.
    void materializeEma(bool here);
    void releaseEma();
    // This rank's bytes kept between steps for the parameters, their gradients, the optimizer
    // state and the EMA (what ZeRO divides).
    std::int64_t residentBytes() const;

    std::size_t bucketCount() const;
    // What dist.shard this optimizer runs ("none", "optimizer", "gradients", "parameters").
    std::string sharding() const;
    // This rank's optimizer-state bytes (AdamW's moments and step counts), as allocated.
    std::int64_t stateBytes() const;

private:
    ProcessGroup &m_pg;
    const Config &m_c;
    // Unsharded: one moment and step count per parameter. Sharded: one per bucket, this rank's
    // slice of it (m_shards).
    std::vector<torch::Tensor> m_params, m_ema, m_expAvg, m_expAvgSq, m_steps;
    std::vector<torch::Tensor> m_emaSlices;  // stage 3: the EMA kept as slices of the buckets
    // train.bf16_weights: the fp32 master copy, its gradients, and the parameters' bf16 data while
    // they hold the master copy (materialize() to release()).
    std::vector<torch::Tensor> m_master, m_masterGrads, m_lowered;
    bool m_stage3 = false, m_emaWhole = true, m_bf16Weights = false;
    // The updated weights: the master copy with bf16 weights, else the parameters.
    const std::vector<torch::Tensor> &weights() const { return m_bf16Weights ? m_master : m_params; }
    std::unique_ptr<GradientSync> m_sync;
    std::unique_ptr<ShardedParameters> m_shards;
};

}  // namespace orrery::train
