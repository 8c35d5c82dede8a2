// SPDX-License-Identifier: GPL-3.0-or-later
#include "recompute.h"

namespace orrery::train {

// Placeholder until activation checkpointing lands: runs the block as it is.
torch::Tensor recomputed(const BlockFn &fn, const std::vector<torch::Tensor> &inputs)
{
    return fn(inputs);
}

}  // namespace orrery::train
