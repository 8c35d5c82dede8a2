// SPDX-License-Identifier: GPL-3.0-or-later
//
// The training run: rectified-flow training of the video UNet with AdamW (the fused kernel),
// warmup + cosine LR, gradient clipping and accumulation, EMA, bf16 autocast on CUDA, DDP-style
// gradient sync, checkpoints (atomic; on SIGUSR1/SIGTERM too, agreed across ranks), sample
// videos, evaluation, and the run directory's events.jsonl / exit.json.
#pragma once

#include "config.h"

#include <cstdint>
#include <string>

namespace orrery::train {

struct RunOptions {
    Config config;
    std::string configPath;  // as given, for the start event
    std::string runDir;
    bool resume = false;  // --resume auto
    std::int64_t stopAtStep = 0;  // --stop-at-step N: stop after step N as if preempted (tests, debugging)
};

// Exit codes: 0 completed, 1 failed (exit.json says why), 75 preempted (EX_TEMPFAIL: a
// checkpoint was written; requeue and run again with --resume auto).
constexpr int kExitPreempted = 75;

int runTraining(const RunOptions &options);

// `--inspect`: a checkpoint's meta data and, per tensor, its shape, sum and L2 norm, as JSON
// (what tests compare, and a quick look at a checkpoint from a shell).
std::string inspectCheckpoint(const std::string &path);

// `--evaluate`: the trainer's evaluation (docs/trainer.md, "Evaluation") of a checkpoint's EMA
// weights with `config`'s model, data, eval and sample settings, as JSON: so sampler settings
// (sample.steps, guidance, time_power, clip_x0) can be compared on one trained model. `path` is a
// checkpoint file or a run dir (its latest). With `samplesDir`, the sample video and contact
// sheet are written there too. Nothing in the run dir changes.
std::string evaluateCheckpoint(const Config &config, const std::string &path, const std::string &samplesDir);

// Parameters of the model `config` describes (`--check-config` prints it).
std::int64_t modelParameterCount(const Config &config);

}  // namespace orrery::train
