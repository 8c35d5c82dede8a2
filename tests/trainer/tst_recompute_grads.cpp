// SPDX-License-Identifier: GPL-3.0-or-later
// recomputed() (trainer/src/recompute.h) on a toy block, in process, against the same block run
// plainly: the same gradients for the parameters and the inputs, with several inputs, inputs that
// do not require grad, gradient accumulation over two backward passes, bf16 autocast on CPU, and
// one post-accumulate-grad hook per parameter per backward (GradientSync's bucket trigger). No Qt:
// LibTorch only, as the trainer. Exits non-zero with the failed checks on stderr.
#include "recompute.h"

#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/function_hook.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace {

using orrery::train::recomputed;

int failures = 0;

void check(bool ok, const std::string &what)
{
    if (!ok) {
        std::fprintf(stderr, "FAIL: %s\n", what.c_str());
        ++failures;
    }
}

// Two inputs as a UNet block takes them (features and an embedding), layers with parameters, a
// nonlinearity and a normalisation, so the recompute has activations worth recomputing.
struct ToyBlockImpl : torch::nn::Module {
    torch::nn::Linear in{nullptr}, out{nullptr};
    torch::nn::LayerNorm norm{nullptr};
    ToyBlockImpl()
    {
        in = register_module("in", torch::nn::Linear(16, 32));
        out = register_module("out", torch::nn::Linear(32, 16));
        norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({32})));
    }
    torch::Tensor forward(const torch::Tensor &x, const torch::Tensor &e)
    {
        return x + out(torch::gelu(norm(in(x) + e)));
    }
};
TORCH_MODULE(ToyBlock);

struct Grads {
    std::vector<torch::Tensor> params;
    torch::Tensor x, e;
    torch::Tensor out;
};

struct Case {
    bool xGrad = true, eGrad = true, recompute = false, autocast = false;
    int backwards = 1;
};

// Two blocks in a row from the same seed, so each case starts from the same weights and inputs.
Grads run(const Case &c)
{
    torch::manual_seed(7);
    ToyBlock a, b;
    auto x = torch::randn({4, 16}).requires_grad_(c.xGrad);
    auto e = torch::randn({4, 32}).requires_grad_(c.eGrad);
    const auto block = [&](ToyBlock &m, const torch::Tensor &h) {
        if (!c.recompute)
            return m->forward(h, e);
        return recomputed([&m](const std::vector<torch::Tensor> &in) { return m->forward(in[0], in[1]); },
                          {h, e});
    };
    torch::Tensor out;
    for (int i = 0; i < c.backwards; ++i) {
        if (c.autocast) {  // as train.cpp: autocast around the forward pass only
            at::autocast::set_autocast_enabled(at::kCPU, true);
            at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
        }
        out = block(b, block(a, x));
        if (c.autocast) {
            at::autocast::set_autocast_enabled(at::kCPU, false);
            at::autocast::clear_cache();
        }
        (out.to(torch::kFloat32).square().mean() * (i + 1)).backward();
    }
    Grads g;
    for (auto &m : {a, b})
        for (const auto &p : m->parameters())
            g.params.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    g.x = c.xGrad ? x.grad() : torch::Tensor();
    g.e = c.eGrad ? e.grad() : torch::Tensor();
    g.out = out.detach();
    return g;
}

double worst(const Grads &u, const Grads &v)
{
    double d = 0;
    const auto diff = [&d](const torch::Tensor &p, const torch::Tensor &q) {
        if (p.defined() != q.defined()) {
            d = INFINITY;
            return;
        }
        if (p.defined())
            d = std::max(d, ((p - q).abs().max() / p.abs().max().clamp_min(1e-12)).item<double>());
    };
    for (std::size_t i = 0; i < u.params.size(); ++i)
        diff(u.params[i], v.params[i]);
    diff(u.x, v.x);
    diff(u.e, v.e);
    diff(u.out.to(torch::kFloat32), v.out.to(torch::kFloat32));
    return d;
}

void sameGradients(const std::string &name, Case c, double tolerance)
{
    c.recompute = false;
    const Grads plain = run(c);
    c.recompute = true;
    const Grads re = run(c);
    for (const auto &p : re.params)
        check(p.defined(), name + ": a parameter got no gradient");
    const double d = worst(plain, re);
    check(d <= tolerance, name + ": gradients differ by " + std::to_string(d));
}

// Counts what GradientSync counts: the post-accumulate-grad hooks of each parameter.
class CountingHook : public torch::autograd::PostAccumulateGradHook {
public:
    explicit CountingHook(int *n) : m_n(n) { }
    void operator()(const torch::autograd::Variable &) override { ++*m_n; }

private:
    int *m_n;
};

void oneHookPerParameterPerBackward()
{
    torch::manual_seed(7);
    ToyBlock a, b;
    const auto params = [&] {
        auto ps = a->parameters();
        for (const auto &p : b->parameters())
            ps.push_back(p);
        return ps;
    }();
    std::vector<int> calls(params.size(), 0);
    for (std::size_t k = 0; k < params.size(); ++k)
        torch::autograd::impl::set_post_acc_grad_hooks(params[k], std::make_unique<CountingHook>(&calls[k]));
    const auto e = torch::randn({4, 32});
    const auto fn = [&](ToyBlock &m) {
        return [&m](const std::vector<torch::Tensor> &in) { return m->forward(in[0], in[1]); };
    };
    for (int step = 0; step < 2; ++step) {
        const auto h = recomputed(fn(a), {torch::randn({4, 16}), e});
        recomputed(fn(b), {h, e}).sum().backward();
    }
    for (std::size_t k = 0; k < params.size(); ++k) {
        check(calls[k] == 2,
              "parameter " + std::to_string(k) + ": " + std::to_string(calls[k]) +
                  " post-accumulate hooks in 2 backward passes");
        torch::autograd::impl::set_post_acc_grad_hooks(params[k], nullptr);
    }
}

void withoutGradModeItIsAPlainCall()
{
    ToyBlock a;
    torch::NoGradGuard ng;
    const auto out =
        recomputed([&a](const std::vector<torch::Tensor> &in) { return a->forward(in[0], in[1]); },
                   {torch::randn({4, 16}), torch::randn({4, 32})});
    check(!out.requires_grad() && !out.grad_fn(), "under NoGradGuard the output has a graph");
}

}  // namespace

int main()
{
    torch::set_num_threads(1);  // the same kernels and reduction order in both runs
    sameGradients("two inputs that require grad", {}, 1e-6);
    sameGradients("features without grad", {.xGrad = false}, 1e-6);
    sameGradients("no input requires grad", {.xGrad = false, .eGrad = false}, 1e-6);
    sameGradients("two backward passes accumulate", {.backwards = 2}, 1e-6);
    sameGradients("bf16 autocast on CPU", {.autocast = true}, 1e-6);
    // And the autocast check can fail: fp32 gradients are not the bf16 ones.
    check(worst(run({.autocast = true}), run({})) > 1e-4, "bf16 and fp32 gradients agree: autocast was off");
    oneHookPerParameterPerBackward();
    withoutGradModeItIsAPlainCall();
    if (failures == 0)
        std::puts("recomputed(): all checks passed");
    return failures == 0 ? 0 : 1;
}
