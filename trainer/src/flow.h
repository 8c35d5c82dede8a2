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

// The training loss of a batch: the mean squared velocity error, each sample weighted by
// 1 / c_out(t)^2 when `unitWeight` (EDM's weighting: the preconditioned network's own error counts
// the same at every t; plain v-MSE weighs the nearly-clean times most and the noisy ones, where
// the layout is decided, least).
inline torch::Tensor flowLoss(const torch::Tensor &v, const torch::Tensor &target, const torch::Tensor &t,
                              const ModelOptions &o, bool unitWeight)
{
    if (o.predictX0) {
        // The clean clip's squared error, (v's error x t)^2: every t alike. JiT's v-loss (1 / t^2
        // more weight near t = 0) gave the quickstart's UNet worse colours (0.40 against 0.38).
        const auto tb = broadcastTime(t).to(torch::kFloat32).clamp_min(kFlowTimeFloor);
        return ((v.to(torch::kFloat32) - target) * tb).square().mean();
    }
    if (!unitWeight)
        return torch::mse_loss(v.to(torch::kFloat32), target);
    const auto weight = flowInputVariance(t, o.dataStd) / (o.dataStd * o.dataStd);  // 1 / c_out^2
    const auto error = (v.to(torch::kFloat32) - target).square().mean({1, 2, 3, 4}, /*keepdim=*/true);
    return (weight * error).mean();
}

// Euler sampling with classifier-free guidance (cond and uncond in one batch), at the times
// t_i = (1 - i/steps)^timePower: a power above 1 spends the steps near t = 0, where the last step
// leaves t_last x (the model's error on the noise) in the sample (EDM's rho schedule does the same).
// clipX0: each step's predicted clean clip is clamped to [-1, 1] before stepping towards it.
torch::Tensor sampleFlow(DenoiserImpl &model, const torch::Tensor &noise, const torch::Tensor &labels,
                         std::int64_t nullLabel, int steps, double guidance, double timePower = 1.0,
                         bool clipX0 = false, const torch::Tensor &reference = {});

}  // namespace orrery::train
