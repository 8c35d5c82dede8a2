// SPDX-License-Identifier: GPL-3.0-or-later
//
// Training checkpoints: checkpoints/step-N.ckpt (written atomically), `latest` naming the newest,
// the newest train.keep_checkpoints kept. A checkpoint is consolidated: the whole model, its EMA
// and the optimizer state, whatever world size and dist.shard wrote it, so a run resumes at any
// world size. The data position and every random draw are functions of (seed, step, rank), so
// the step and the seed are the whole RNG and data state.
#pragma once

#include "model.h"

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace orrery::train {

class Optimizer;

struct Checkpointer {
    std::filesystem::path dir;
    int keep;

    static std::string name(std::int64_t step);
    std::optional<std::filesystem::path> latest() const;

    // Every rank calls it (a sharded optimizer state is gathered); only `lead` writes.
    void save(std::int64_t step, DenoiserImpl &model, DenoiserImpl &ema, Optimizer &optimizer,
              std::uint64_t seed, int world, bool lead);
    // Model, EMA and optimizer state from `file`; returns its step.
    static std::int64_t load(const std::filesystem::path &file, DenoiserImpl &model, DenoiserImpl &ema,
                             Optimizer &optimizer);
    // Only the EMA weights (what evaluation and sampling use): no optimizer state in memory.
    static std::int64_t loadEma(const std::filesystem::path &file, DenoiserImpl &ema);
};

// Reads `key` of a checkpoint into `into` (same shape); throws naming the file and the key when
// it is missing or of another shape (a checkpoint of another config).
void readCheckpointTensor(torch::serialize::InputArchive &in, const std::string &file, const std::string &key,
                          torch::Tensor &into);

}  // namespace orrery::train
