// SPDX-License-Identifier: GPL-3.0-or-later
//
// Rectified flow (Liu et al. 2022; SD3's choice): x_t = (1 - t) x0 + t eps, the model predicts the
// velocity v = eps - x0, and sampling integrates dx/dt = v from t = 1 (noise) to 0 with Euler
// steps. Chosen over v-prediction with a cosine schedule because the target and the sampler are
// one line each, the paths are straight (few sampling steps suffice) and there is no schedule to
// tune. Training times are uniform by default (train.time_sampling): SD3's logit-normal puts
// little weight near t = 0 and 1, and at our small budgets that left the ends of the sampling path
// undertrained — samples kept visible noise (measured on tiny: P(t < 1/16) is 0.3%).
#pragma once

#include "model.h"

#include <torch/torch.h>

namespace orrery::train {

inline torch::Tensor broadcastTime(const torch::Tensor &t)
{
    return t.view({-1, 1, 1, 1, 1});
}

inline torch::Tensor noisyInput(const torch::Tensor &x0, const torch::Tensor &noise, const torch::Tensor &t)
{
    const auto tb = broadcastTime(t).to(x0.dtype());
    return (1 - tb) * x0 + tb * noise;
}

inline torch::Tensor velocityTarget(const torch::Tensor &x0, const torch::Tensor &noise)
{
    return noise - x0;
}

// Euler sampling with classifier-free guidance (cond and uncond in one batch).
torch::Tensor sampleFlow(VideoUNet &model, const torch::Tensor &noise, const torch::Tensor &labels,
                         std::int64_t nullLabel, int steps, double guidance,
                         const torch::Tensor &reference = {});

}  // namespace orrery::train
