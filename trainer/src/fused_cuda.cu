// SPDX-License-Identifier: GPL-3.0-or-later
//
// fused.h's LayerNorm + adaLN modulation on CUDA: one warp a row, the row's sums by warp shuffles,
// the row read from global memory (L1/L2) once per pass. Eight rows a block of 256 threads.
#include "fused_cuda.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace orrery::train::cuda {

namespace {

constexpr int kWarp = 32, kRowsPerBlock = 8;

__device__ float warpSum(float v)
{
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__device__ float toFloat(float v)
{
    return v;
}
__device__ float toFloat(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
template<typename T>
__device__ T fromFloat(float v);
template<>
__device__ float fromFloat<float>(float v)
{
    return v;
}
template<>
__device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v)
{
    return __float2bfloat16(v);
}

template<typename Out>
__global__ void forwardKernel(const float *__restrict__ x, const float *__restrict__ shift,
                              const float *__restrict__ scale, Out *__restrict__ y, float *__restrict__ mean,
                              float *__restrict__ rstd, long long rows, long long d, long long perSample,
                              float eps)
{
    const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;  // the whole warp: a row is one warp's
    const float *xr = x + row * d;
    const float *sh = shift + (row / perSample) * d, *sc = scale + (row / perSample) * d;
    float sum = 0;
    for (long long j = lane; j < d; j += kWarp)
        sum += xr[j];
    const float m = warpSum(sum) / float(d);
    float var = 0;
    for (long long j = lane; j < d; j += kWarp)
        var += (xr[j] - m) * (xr[j] - m);
    const float rs = rsqrtf(warpSum(var) / float(d) + eps);
    Out *yr = y + row * d;
    for (long long j = lane; j < d; j += kWarp)
        yr[j] = fromFloat<Out>((xr[j] - m) * rs * (1.0f + sc[j]) + sh[j]);
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = rs;
    }
}

template<typename Grad>
__global__ void backwardKernel(const float *__restrict__ x, const Grad *__restrict__ dy,
                               const float *__restrict__ scale, const float *__restrict__ mean,
                               const float *__restrict__ rstd, float *__restrict__ dx,
                               float *__restrict__ dyXhat, long long rows, long long d, long long perSample)
{
    const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const float *xr = x + row * d, *sc = scale + (row / perSample) * d;
    const Grad *dyr = dy + row * d;
    const float m = mean[row], rs = rstd[row];
    float sumG = 0, sumGx = 0;
    for (long long j = lane; j < d; j += kWarp) {
        const float g = toFloat(dyr[j]) * (1.0f + sc[j]);
        sumG += g;
        sumGx += g * (xr[j] - m) * rs;
    }
    const float meanG = warpSum(sumG) / float(d), meanGx = warpSum(sumGx) / float(d);
    float *dxr = dx + row * d, *dyx = dyXhat + row * d;
    for (long long j = lane; j < d; j += kWarp) {
        const float xhat = (xr[j] - m) * rs, dyj = toFloat(dyr[j]);
        dxr[j] = rs * (dyj * (1.0f + sc[j]) - meanG - xhat * meanGx);
        dyx[j] = dyj * xhat;
    }
}

const char *launched()
{
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

unsigned blocks(std::int64_t rows)
{
    return unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace

const char *modulateForward(const float *x, const float *shift, const float *scale, void *y, bool yBf16,
                            float *mean, float *rstd, std::int64_t rows, std::int64_t d,
                            std::int64_t perSample, float eps, void *stream)
{
    if (rows == 0)
        return nullptr;
    const auto s = static_cast<cudaStream_t>(stream);
    if (yBf16)
        forwardKernel<<<blocks(rows), kRowsPerBlock * kWarp, 0, s>>>(
            x, shift, scale, static_cast<__nv_bfloat16 *>(y), mean, rstd, rows, d, perSample, eps);
    else
        forwardKernel<<<blocks(rows), kRowsPerBlock * kWarp, 0, s>>>(x, shift, scale, static_cast<float *>(y),
                                                                     mean, rstd, rows, d, perSample, eps);
    return launched();
}

const char *modulateBackward(const float *x, const void *dy, bool dyBf16, const float *scale,
                             const float *mean, const float *rstd, float *dx, float *dyXhat,
                             std::int64_t rows, std::int64_t d, std::int64_t perSample, void *stream)
{
    if (rows == 0)
        return nullptr;
    const auto s = static_cast<cudaStream_t>(stream);
    if (dyBf16)
        backwardKernel<<<blocks(rows), kRowsPerBlock * kWarp, 0, s>>>(
            x, static_cast<const __nv_bfloat16 *>(dy), scale, mean, rstd, dx, dyXhat, rows, d, perSample);
    else
        backwardKernel<<<blocks(rows), kRowsPerBlock * kWarp, 0, s>>>(
            x, static_cast<const float *>(dy), scale, mean, rstd, dx, dyXhat, rows, d, perSample);
    return launched();
}

}  // namespace orrery::train::cuda
