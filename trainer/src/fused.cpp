// SPDX-License-Identifier: GPL-3.0-or-later
#include "fused.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>

#include <atomic>
#include <cmath>

#if ORRERY_FUSED_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "fused_cuda.h"
#endif

namespace orrery::train {

namespace F = torch::nn::functional;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

// x viewed as rows of d features; every perSample consecutive rows belong to one sample.
struct Rows {
    std::int64_t rows, d, perSample;
};

Rows rowsOf(const torch::Tensor &x)
{
    const auto d = x.size(-1), rows = x.numel() / d;
    return {rows, d, rows / x.size(0)};
}

// Sum of f(j) for j in [0, n) in 8 independent partial sums, which the compiler keeps in one
// vector register (a single running float sum is a dependency chain it may not reorder).
template<typename Term>
float rowSum(std::int64_t n, Term f)
{
    float part[8] = {};
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; ++k)
            part[k] += f(j + k);
    for (; j < n; ++j)
        part[0] += f(j);
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

template<typename Out>
void forwardCpu(const float *x, const float *shift, const float *scale, Out *y, float *mean, float *rstd,
                Rows r, float eps)
{
    at::parallel_for(0, r.rows, 64, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
            const float *xi = x + i * r.d;
            const float *sh = shift + (i / r.perSample) * r.d, *sc = scale + (i / r.perSample) * r.d;
            const float m = rowSum(r.d, [xi](std::int64_t j) { return xi[j]; }) / float(r.d);
            const float var = rowSum(r.d, [xi, m](std::int64_t j) { return (xi[j] - m) * (xi[j] - m); });
            const float rs = 1.0f / std::sqrt(var / float(r.d) + eps);
            Out *yi = y + i * r.d;
            for (std::int64_t j = 0; j < r.d; ++j)
                yi[j] = Out((xi[j] - m) * rs * (1.0f + sc[j]) + sh[j]);
            mean[i] = m;
            rstd[i] = rs;
        }
    });
}

// dx of LayerNorm-then-modulate for each row, and dy * x̂ (the per-token terms of scale's
// gradient, summed over each sample's rows by the caller).
template<typename Grad>
void backwardCpu(const float *x, const Grad *dy, const float *scale, const float *mean, const float *rstd,
                 float *dx, float *dyXhat, Rows r)
{
    at::parallel_for(0, r.rows, 64, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
            const float *xi = x + i * r.d, *sc = scale + (i / r.perSample) * r.d;
            const Grad *dyi = dy + i * r.d;
            const float m = mean[i], rs = rstd[i];
            // Over the row: g = dy (1 + scale), and g x̂.
            const auto g = [dyi, sc](std::int64_t j) { return float(dyi[j]) * (1.0f + sc[j]); };
            const float meanG = rowSum(r.d, g) / float(r.d);
            const float meanGx =
                rowSum(r.d, [&](std::int64_t j) { return g(j) * (xi[j] - m) * rs; }) / float(r.d);
            float *dxi = dx + i * r.d, *dyx = dyXhat + i * r.d;
            for (std::int64_t j = 0; j < r.d; ++j) {
                const float xhat = (xi[j] - m) * rs;
                dxi[j] = rs * (g(j) - meanG - xhat * meanGx);
                dyx[j] = float(dyi[j]) * xhat;
            }
        }
    });
}

// The output's dtype: autocast's where it is on for x's device (the next Linear casts to it
// anyway), else x's.
at::ScalarType outputType(const torch::Tensor &x)
{
    const auto device = x.device().type();
    return at::autocast::is_autocast_enabled(device) ? at::autocast::get_autocast_dtype(device)
                                                     : x.scalar_type();
}

struct ModulateFunction : torch::autograd::Function<ModulateFunction> {
    static torch::Tensor forward(AutogradContext *ctx, const torch::Tensor &x, const torch::Tensor &shift,
                                 const torch::Tensor &scale, double eps)
    {
        // A profile's operator (profile.h): bench/profile_families.py counts it as normalisation.
        RECORD_FUNCTION("orrery::fused_layer_norm_modulate", c10::ArrayRef<const c10::IValue>{});
        TORCH_CHECK(x.dim() >= 2 && x.numel() > 0, "fusedModulate: x ", x.sizes(),
                    " must be a batch of samples of tokens");
        TORCH_CHECK(shift.device() == x.device() && scale.device() == x.device(),
                    "fusedModulate: x, shift and scale must be on one device");
        const auto b = x.size(0), d = x.size(-1);
        TORCH_CHECK(shift.numel() == b * d && scale.numel() == b * d, "fusedModulate: shift ", shift.sizes(),
                    " and scale ", scale.sizes(), " must hold one vector of ", d, " per sample of ",
                    x.sizes());
        const auto out = outputType(x);
        TORCH_CHECK(out == at::kFloat || out == at::kBFloat16, "fusedModulate: no kernel for ", out);
        const auto xf = x.to(at::kFloat).contiguous();
        const auto sh = shift.to(at::kFloat).reshape({b, d}).contiguous();
        const auto sc = scale.to(at::kFloat).reshape({b, d}).contiguous();
        const Rows r = rowsOf(xf);
        auto y = torch::empty(x.sizes(), x.options().dtype(out));
        auto mean = torch::empty({r.rows}, xf.options()), rstd = torch::empty({r.rows}, xf.options());
        if (x.is_cuda()) {
#if ORRERY_FUSED_CUDA
            const c10::cuda::CUDAGuard onDevice(x.device());
            const char *error = cuda::modulateForward(
                xf.data_ptr<float>(), sh.data_ptr<float>(), sc.data_ptr<float>(), y.data_ptr(),
                out == at::kBFloat16, mean.data_ptr<float>(), rstd.data_ptr<float>(), r.rows, r.d,
                r.perSample, float(eps), at::cuda::getCurrentCUDAStream(xf.device().index()).stream());
            TORCH_CHECK(!error, "fusedModulate: ", error);
#else
            TORCH_CHECK(false, "fusedModulate: this build of orrery-train has no CUDA kernel for it");
#endif
        } else if (out == at::kBFloat16) {
            forwardCpu(xf.data_ptr<float>(), sh.data_ptr<float>(), sc.data_ptr<float>(),
                       y.data_ptr<at::BFloat16>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), r,
                       float(eps));
        } else {
            forwardCpu(xf.data_ptr<float>(), sh.data_ptr<float>(), sc.data_ptr<float>(), y.data_ptr<float>(),
                       mean.data_ptr<float>(), rstd.data_ptr<float>(), r, float(eps));
        }
        ctx->save_for_backward({xf, sc, mean, rstd});
        ctx->saved_data["x_type"] = int64_t(x.scalar_type());
        ctx->saved_data["shift"] = shift.sizes().vec();
        ctx->saved_data["shift_type"] = int64_t(shift.scalar_type());
        ctx->saved_data["scale"] = scale.sizes().vec();
        ctx->saved_data["scale_type"] = int64_t(scale.scalar_type());
        return y;
    }

    static variable_list backward(AutogradContext *ctx, variable_list grads)
    {
        RECORD_FUNCTION("orrery::fused_layer_norm_modulate_backward", c10::ArrayRef<const c10::IValue>{});
        const auto saved = ctx->get_saved_variables();
        const auto &xf = saved[0], &sc = saved[1], &mean = saved[2], &rstd = saved[3];
        auto dy = grads[0].contiguous();
        if (dy.scalar_type() != at::kBFloat16)
            dy = dy.to(at::kFloat);
        const Rows r = rowsOf(xf);
        auto dx = torch::empty_like(xf), dyXhat = torch::empty_like(xf);
        if (xf.is_cuda()) {
#if ORRERY_FUSED_CUDA
            const c10::cuda::CUDAGuard onDevice(xf.device());
            const char *error = cuda::modulateBackward(
                xf.data_ptr<float>(), dy.data_ptr(), dy.scalar_type() == at::kBFloat16, sc.data_ptr<float>(),
                mean.data_ptr<float>(), rstd.data_ptr<float>(), dx.data_ptr<float>(),
                dyXhat.data_ptr<float>(), r.rows, r.d, r.perSample,
                at::cuda::getCurrentCUDAStream(xf.device().index()).stream());
            TORCH_CHECK(!error, "fusedModulate backward: ", error);
#else
            TORCH_CHECK(false, "fusedModulate: this build of orrery-train has no CUDA kernel for it");
#endif
        } else if (dy.scalar_type() == at::kBFloat16) {
            backwardCpu(xf.data_ptr<float>(), dy.data_ptr<at::BFloat16>(), sc.data_ptr<float>(),
                        mean.data_ptr<float>(), rstd.data_ptr<float>(), dx.data_ptr<float>(),
                        dyXhat.data_ptr<float>(), r);
        } else {
            backwardCpu(xf.data_ptr<float>(), dy.data_ptr<float>(), sc.data_ptr<float>(),
                        mean.data_ptr<float>(), rstd.data_ptr<float>(), dx.data_ptr<float>(),
                        dyXhat.data_ptr<float>(), r);
        }
        const auto b = sc.size(0), d = r.d;
        auto type = [&](const char *key) { return at::ScalarType(ctx->saved_data[key].toInt()); };
        auto sizes = [&](const char *key) { return ctx->saved_data[key].toIntVector(); };
        const auto dShift = dy.to(at::kFloat).view({b, r.perSample, d}).sum(1);
        const auto dScale = dyXhat.view({b, r.perSample, d}).sum(1);
        return {dx.to(type("x_type")), dShift.reshape(sizes("shift")).to(type("shift_type")),
                dScale.reshape(sizes("scale")).to(type("scale_type")), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor fusedModulate(const torch::Tensor &x, const torch::Tensor &shift, const torch::Tensor &scale,
                            double eps)
{
    return ModulateFunction::apply(x, shift, scale, eps);
}

torch::Tensor unfusedModulate(const torch::Tensor &x, const torch::Tensor &shift, const torch::Tensor &scale,
                              double eps)
{
    // shift + norm * (1 + scale) as one addcmul: fewer passes than the textbook expression.
    return torch::addcmul(shift, F::layer_norm(x, F::LayerNormFuncOptions({x.size(-1)}).eps(eps)), 1 + scale);
}

namespace {
std::atomic<bool> g_fused{false};
}

void useFusedModulate(bool on)
{
    g_fused = on;
}

bool fusedModulateOn()
{
    return g_fused;
}

torch::Tensor modulate(const torch::Tensor &x, const torch::Tensor &shift, const torch::Tensor &scale,
                       double eps)
{
    return g_fused ? fusedModulate(x, shift, scale, eps) : unfusedModulate(x, shift, scale, eps);
}

bool fusedModulateAvailable(const torch::Device &device)
{
#if ORRERY_FUSED_CUDA
    return device.is_cpu() || device.is_cuda();
#else
    return device.is_cpu();
#endif
}

}  // namespace orrery::train
