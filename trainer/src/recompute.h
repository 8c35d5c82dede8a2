// SPDX-License-Identifier: GPL-3.0-or-later
//
// Activation checkpointing (train.activation_checkpointing): a block run through recomputed()
// keeps only its inputs for the backward pass; its activations are computed again there. Less
// memory (one block's activations live at a time, not every block's), about one more forward of
// compute.
//
// Rules for a block run through it (what torch.utils.checkpoint's reentrant form asks, as the
// recompute must repeat the first forward exactly):
// - No randomness inside the block: the models use no RNG (no dropout, no stochastic depth). A
//   block that draws random numbers must save and restore the generators' state around the
//   recompute first, or its gradients belong to a different forward.
// - Each parameter is used by one recomputed block or by none: the block's backward is a nested
//   backward that accumulates its parameters' gradients there, and GradientSync counts one
//   post-accumulate hook per parameter per backward.
// - Inputs are not modified in place after the call (the saved inputs' version check fails).
// The autocast state (train.precision bf16, CPU or CUDA) of the forward is restored for the
// recompute. Without grad mode (sampling, evaluation) it is a plain call.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace orrery::train {

using BlockFn = std::function<torch::Tensor(const std::vector<torch::Tensor> &)>;

// fn(inputs), with fn's activations recomputed in the backward pass instead of kept. Gradients
// reach `inputs` and every parameter fn uses, as without it. `enter` and `leave` (if given) run
// around each of fn's two runs — its forward, and its recompute with the nested backward — as
// ZeRO stage 3 gathers a block's parameters there and frees them after (shard.h).
torch::Tensor recomputed(const BlockFn &fn, const std::vector<torch::Tensor> &inputs,
                         const std::function<void()> &enter = {}, const std::function<void()> &leave = {});

}  // namespace orrery::train
