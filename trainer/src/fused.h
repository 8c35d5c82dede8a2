// SPDX-License-Identifier: GPL-3.0-or-later
//
// The DiT's LayerNorm and adaLN modulation as one operator with a hand-written forward and
// backward (docs/trainer.md "Fused LayerNorm and modulation"):
//
//     y = LayerNorm(x) * (1 + scale) + shift      (no affine of its own, eps as DiT's 1e-6)
//
// x [B, ..., D], shift and scale [B, 1, ..., 1, D]: one vector per sample, broadcast over its
// tokens. Unfused this is LayerNorm (x read, normalised tokens written) then addcmul (both read,
// y written), and under autocast a cast of y to bf16 for the next Linear; fused, x is read once
// and y written once, already in autocast's dtype. The backward reads x, dy and the row
// statistics once for dx; shift's and scale's gradients are per-sample sums.
//
// CPU: rows in parallel (at::parallel_for). CUDA: one warp a row (fused_cuda.cu), compiled where
// the trainer's CUDA build is. train.fused_modulation picks it (auto: off until a GPU run has
// checked and timed the kernel against the unfused path: bench/trainer_gpu.sh fused).
#pragma once

#include <torch/torch.h>

namespace orrery::train {

torch::Tensor fusedModulate(const torch::Tensor &x, const torch::Tensor &shift, const torch::Tensor &scale,
                            double eps);

// The same through LibTorch's own operators: what fusedModulate is checked against.
torch::Tensor unfusedModulate(const torch::Tensor &x, const torch::Tensor &shift, const torch::Tensor &scale,
                              double eps);

// Whether fusedModulate can run on `device` in this build (CPU always; CUDA where compiled).
bool fusedModulateAvailable(const torch::Device &device);

// Whether the DiT's blocks use fusedModulate (for the process; set from train.fused_modulation
// by configureKernels in model.h) or unfusedModulate.
void useFusedModulate(bool on);
bool fusedModulateOn();
torch::Tensor modulate(const torch::Tensor &x, const torch::Tensor &shift, const torch::Tensor &scale,
                       double eps = 1e-6);  // DiT's

}  // namespace orrery::train
