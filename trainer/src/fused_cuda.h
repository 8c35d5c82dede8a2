// SPDX-License-Identifier: GPL-3.0-or-later
//
// The CUDA kernels of fused.h, behind plain pointers so that fused_cuda.cu needs no LibTorch
// header (nvcc compiles it in seconds). Each launches on `stream` (a cudaStream_t) and returns
// nullptr, or the launch's error.
#pragma once

#include <cstdint>

namespace orrery::train::cuda {

// y (bf16 where yBf16, else float) = LayerNorm(x) * (1 + scale[sample]) + shift[sample], and each
// row's mean and 1/std. x: rows x d floats; shift, scale: (rows / perSample) x d floats.
const char *modulateForward(const float *x, const float *shift, const float *scale, void *y, bool yBf16,
                            float *mean, float *rstd, std::int64_t rows, std::int64_t d,
                            std::int64_t perSample, float eps, void *stream);

// dx and dy * x̂ for every row (dy: bf16 where dyBf16, else float).
const char *modulateBackward(const float *x, const void *dy, bool dyBf16, const float *scale,
                             const float *mean, const float *rstd, float *dx, float *dyXhat,
                             std::int64_t rows, std::int64_t d, std::int64_t perSample, void *stream);

}  // namespace orrery::train::cuda
