// SPDX-License-Identifier: GPL-3.0-or-later
//
// Activation checkpointing (train.activation_checkpointing): a block run through recomputed()
// keeps only its inputs for the backward pass; its activations are computed again there. Less
// memory (one block's activations live at a time, not every block's), about one more forward of
// compute.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace orrery::train {

using BlockFn = std::function<torch::Tensor(const std::vector<torch::Tensor> &)>;

// fn(inputs), with fn's activations recomputed in the backward pass instead of kept. Gradients
// reach `inputs` and every parameter fn uses, as without it.
torch::Tensor recomputed(const BlockFn &fn, const std::vector<torch::Tensor> &inputs);

}  // namespace orrery::train
