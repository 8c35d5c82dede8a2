// SPDX-License-Identifier: GPL-3.0-or-later
// fusedModulate (trainer/src/fused.h) on CPU against LibTorch's layer_norm + addcmul, in process:
// the output and the gradients of x, shift and scale, for widths with and without a tail past a
// multiple of 8, one sample and several, 3- and 4-dimensional tokens, bf16 autocast (output in
// bf16, within bf16's rounding), bf16 shift and scale (gradients back in bf16); a shift that does
// not hold one vector per sample and tokens without a batch are refused. No Qt: LibTorch only, as
// the trainer. Exits non-zero with the failed checks on stderr. On a build with CUDA and a GPU it
// checks the CUDA kernel the same way.
#include "fused.h"

#include <ATen/autocast_mode.h>

#include <cstdio>
#include <string>

namespace {

using orrery::train::fusedModulate;
using orrery::train::unfusedModulate;

int failures = 0;

void check(bool ok, const std::string &what)
{
    if (!ok) {
        std::fprintf(stderr, "FAIL: %s\n", what.c_str());
        ++failures;
    }
}

double maxDiff(const torch::Tensor &a, const torch::Tensor &b)
{
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

struct Case {
    std::string name;
    std::vector<std::int64_t> tokens;  // x's shape; the last is the width
    torch::Dtype modulation = torch::kFloat;  // shift's and scale's dtype (adaLN's Linear output)
    bool autocast = false;
};

// Forward and backward of both paths with the same inputs and the same upstream gradient.
void compare(const Case &c, const torch::Device &device)
{
    torch::manual_seed(7);
    const auto o = torch::TensorOptions().device(device);
    const auto b = c.tokens.front(), d = c.tokens.back();
    std::vector<std::int64_t> vec(c.tokens.size(), 1);
    vec.front() = b;
    vec.back() = d;
    // Tokens off zero and of unit-ish spread, as a residual stream is; shift and scale small, as
    // adaLN's are.
    const auto x0 = torch::randn(c.tokens, o) * 3 + 0.5;
    const auto shift0 = (torch::randn(vec, o) * 0.2).to(c.modulation);
    const auto scale0 = (torch::randn(vec, o) * 0.2).to(c.modulation);
    torch::Tensor upstream;
    std::vector<torch::Tensor> outs, grads;
    for (const bool fused : {false, true}) {
        auto x = x0.clone().requires_grad_(true), shift = shift0.clone().requires_grad_(true),
             scale = scale0.clone().requires_grad_(true);
        if (c.autocast) {
            at::autocast::set_autocast_enabled(device.type(), true);
            at::autocast::set_autocast_dtype(device.type(), at::kBFloat16);
        }
        auto y = fused ? fusedModulate(x, shift, scale, 1e-6) : unfusedModulate(x, shift, scale, 1e-6);
        if (c.autocast) {
            at::autocast::set_autocast_enabled(device.type(), false);
            at::autocast::clear_cache();
            // The next Linear would take bf16: compare what it would get.
            y = y.to(at::kBFloat16);
        }
        if (!upstream.defined())
            upstream = torch::randn(y.sizes(), o).to(y.scalar_type());
        y.backward(upstream);
        outs.push_back(y.detach());
        grads.insert(grads.end(), {x.grad(), shift.grad(), scale.grad()});
    }
    const bool bf16 = c.autocast || c.modulation == torch::kBFloat16;
    // bf16 keeps 8 bits of mantissa: outputs of magnitude ~3 round by up to ~0.016. (With bf16
    // shift and scale the unfused path also rounds 1 + scale to bf16; the fused one does not.)
    const double outTol = bf16 ? 0.04 : 1e-5, gradTol = bf16 ? 0.05 : 2e-4;
    const std::string at = c.name + " on " + device.str() + ": ";
    check(outs[1].scalar_type() == outs[0].scalar_type(), at + "output dtypes differ");
    check(maxDiff(outs[0], outs[1]) <= outTol,
          at + "outputs differ by " + std::to_string(maxDiff(outs[0], outs[1])));
    const char *names[] = {"x", "shift", "scale"};
    for (int i = 0; i < 3; ++i) {
        const auto &plain = grads[std::size_t(i)], &fused = grads[std::size_t(3 + i)];
        check(fused.defined() && fused.sizes() == plain.sizes() && fused.scalar_type() == plain.scalar_type(),
              at + names[i] + "'s gradient has another shape or dtype");
        if (!fused.defined())
            continue;
        // Relative to the gradient's size: scale's and shift's are sums over many tokens.
        const double scaleOf = std::max(1.0, plain.abs().max().item<double>());
        const double diff = maxDiff(plain, fused) / scaleOf;
        check(diff <= gradTol,
              at + names[i] + "'s gradients differ by " + std::to_string(diff) + " (relative)");
    }
}

}  // namespace

int main()
{
    torch::set_num_threads(2);
    const std::vector<Case> cases{
        {"4-d tokens, width 64", {2, 3, 16, 64}},
        {"width 37 (a tail past 8s)", {3, 5, 37}},
        {"one sample, width 8", {1, 4, 8}},
        {"width 1152 (dit-large's)", {2, 4, 1152}},
        {"bf16 shift and scale", {2, 6, 48}, torch::kBFloat16},
        {"bf16 autocast", {2, 3, 16, 64}, torch::kFloat, true},
    };
    std::vector<torch::Device> devices{torch::kCPU};
    if (torch::cuda::is_available() && orrery::train::fusedModulateAvailable(torch::Device(torch::kCUDA, 0)))
        devices.emplace_back(torch::kCUDA, 0);
    for (const auto &device : devices)
        for (const Case &c : cases)
            compare(c, device);

    // A shift that is not one vector per sample is refused, naming the shapes.
    bool refused = false;
    try {
        fusedModulate(torch::randn({2, 4, 8}), torch::randn({2, 1, 4}), torch::randn({2, 1, 8}), 1e-6);
    } catch (const c10::Error &e) {
        refused = std::string(e.what()).find("one vector of 8 per sample") != std::string::npos;
    }
    check(refused, "a shift of the wrong width was not refused by name");
    refused = false;
    try {
        fusedModulate(torch::randn({8}), torch::randn({8}), torch::randn({8}), 1e-6);
    } catch (const c10::Error &e) {
        refused = std::string(e.what()).find("must be a batch of samples of tokens") != std::string::npos;
    }
    check(refused, "tokens without a batch were not refused by name");

    std::printf("%s: %zu cases on %zu device(s), %d failed checks\n", failures ? "FAIL" : "PASS",
                cases.size(), devices.size(), failures);
    return failures ? 1 : 0;
}
