// SPDX-License-Identifier: GPL-3.0-or-later
#include "dit.h"

#include "fused.h"
#include "recompute.h"

namespace orrery::train {

namespace F = torch::nn::functional;

namespace {

// LayerNorm then adaLN's shift and scale is fused.h's modulate (train.fused_modulation). The DiT
// at small widths is bound by elementwise work, so the gated residuals are one addcmul each.

// adaLN's k shift/scale/gate vectors, each [B, 1, 1, D] to broadcast over [B, T', S, D].
std::vector<torch::Tensor> modulation(torch::nn::Linear &adaLN, const torch::Tensor &c, std::int64_t k)
{
    return adaLN(F::silu(c)).view({c.size(0), 1, 1, -1}).chunk(k, -1);
}

// DiT's initialisation: Xavier-uniform Linear weights, zero biases.
void xavierInit(torch::nn::Linear &l)
{
    torch::NoGradGuard ng;
    torch::nn::init::xavier_uniform_(l->weight);
    torch::nn::init::zeros_(l->bias);
}

// Fixed sin-cos positions: half of the width for the row, half for the column ([S, D]), and the
// whole width for the frame ([T', D]), as Latte's separate spatial and temporal embeddings.
torch::Tensor spacePositions(std::int64_t rows, std::int64_t cols, std::int64_t width, const torch::Device &d)
{
    const auto r = torch::arange(rows, torch::TensorOptions().device(d)).repeat_interleave(cols);
    const auto c = torch::arange(cols, torch::TensorOptions().device(d)).repeat({rows});
    return torch::cat({sinusoidal(r, width / 2), sinusoidal(c, width / 2)}, 1);
}

}  // namespace

DiTAttentionImpl::DiTAttentionImpl(std::int64_t width, std::int64_t heads, const char *site)
    : m_heads(heads), m_site(site)
{
    qkv = register_module("qkv", torch::nn::Linear(width, 3 * width));
    proj = register_module("proj", torch::nn::Linear(width, width));
    xavierInit(qkv);
    xavierInit(proj);
}

torch::Tensor DiTAttentionImpl::forward(const torch::Tensor &x)
{
    const auto n = x.size(0), l = x.size(1), w = x.size(2);
    // [N, L, 3D] -> 3 x [N, heads, L, d], strided views that SDPA takes as they are.
    const auto q = qkv(x).view({n, l, 3, m_heads, w / m_heads}).permute({2, 0, 3, 1, 4});
    const auto o = attend(q[0], q[1], q[2], m_site);
    return proj(o.transpose(1, 2).reshape({n, l, w}));
}

DiTBlockImpl::DiTBlockImpl(std::int64_t width, std::int64_t heads, double mlpRatio, bool full,
                           bool localMixing)
    : m_full(full)
{
    spatial = register_module("attn", DiTAttention(width, heads, full ? "joint" : "spatial"));
    if (!full)
        temporal = register_module("temporal", DiTAttention(width, heads, "temporal"));
    const auto hidden = std::int64_t(double(width) * mlpRatio);
    fc1 = register_module("fc1", torch::nn::Linear(width, hidden));
    fc2 = register_module("fc2", torch::nn::Linear(hidden, width));
    xavierInit(fc1);
    xavierInit(fc2);
    if (localMixing)
        localMix = register_module(
            "local_mix",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(hidden, hidden, 3).padding(1).groups(hidden)));
    // Shift, scale and gate per sub-layer; zero, so the block starts as the identity (adaLN-Zero).
    adaLN = register_module("ada_ln", torch::nn::Linear(width, (full ? 6 : 9) * width));
    zeroInit(*adaLN);
}

torch::Tensor DiTBlockImpl::forward(const torch::Tensor &x, const torch::Tensor &c, std::int64_t gridWidth)
{
    const auto b = x.size(0), frames = x.size(1), s = x.size(2), w = x.size(3);
    const auto m = modulation(adaLN, c, m_full ? 6 : 9);
    auto h = modulate(x, m[0], m[1]);
    // Spatial (or, full, joint space-time) attention: tokens [B*T', S, D] (or [B, T'*S, D]) are views.
    h = spatial(m_full ? h.view({b, frames * s, w}) : h.view({b * frames, s, w})).view(x.sizes());
    auto out = torch::addcmul(x, m[2], h);
    std::size_t next = 3;
    if (!m_full) {
        // Temporal: every spatial position over its frames, [B*S, T', D].
        h = modulate(out, m[3], m[4]).transpose(1, 2).reshape({b * s, frames, w});
        h = temporal(h).view({b, s, frames, w}).transpose(1, 2);
        out = torch::addcmul(out, m[5], h);
        next = 6;
    }
    h = fc1(modulate(out, m[next], m[next + 1]));
    if (localMix) {
        // Each token's hidden features plus its 3x3 neighbours' in the frame (LocalViT's MLP).
        const auto hidden = h.size(3), rows = s / gridWidth;
        const auto grid = h.reshape({b * frames, rows, gridWidth, hidden}).permute({0, 3, 1, 2});
        h = h + localMix(grid).permute({0, 2, 3, 1}).reshape(h.sizes());
    }
    h = fc2(F::gelu(h, F::GELUFuncOptions().approximate("tanh")));
    return torch::addcmul(out, m[next + 2], h);
}

VideoDiTImpl::VideoDiTImpl(const ModelOptions &o) : DenoiserImpl(o)
{
    const std::int64_t w = o.channels;
    if (w % o.heads != 0 || w % 4 != 0)
        throw std::runtime_error("model.channels " + std::to_string(w) +
                                 " must be a multiple of 4 and of model.heads " + std::to_string(o.heads));
    const std::int64_t inCh = o.inChannels * (o.referenceFrame ? 2 : 1);
    patchEmbed = register_module("patch_embed", torch::nn::Linear(inCh * o.patchT * o.patch * o.patch, w));
    xavierInit(patchEmbed);
    time1 = register_module("time1", torch::nn::Linear(w, w));
    time2 = register_module("time2", torch::nn::Linear(w, w));
    classEmb = register_module("class_emb", torch::nn::Embedding(o.classes + 1, w));
    {
        torch::NoGradGuard ng;
        for (auto *l : {&time1, &time2}) {
            torch::nn::init::normal_((*l)->weight, 0.0, 0.02);
            torch::nn::init::zeros_((*l)->bias);
        }
        // The label's embedding keeps PyTorch's N(0, 1) (as the UNet's), not DiT's 0.02: through
        // zero-initialised adaLN a label that small barely reaches the blocks in a short run.
        // dit-tiny at the quickstart's budget (80 steps, lr 1e-3): the object's colour error
        // 0.68 -> 0.33 (docs/trainer.md "The first sample a newcomer sees").
    }
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (std::int64_t i = 0; i < o.depth; ++i)
        blocks->push_back(DiTBlock(w, o.heads, o.mlpRatio, o.fullAttention, o.localMixing));
    finalAdaLN = register_module("final_ada_ln", torch::nn::Linear(w, 2 * w));
    zeroInit(*finalAdaLN);
    const std::int64_t perPixel = o.pixelHead ? kPixelHeadChannels : o.inChannels;
    finalLinear =
        register_module("final_linear", torch::nn::Linear(w, perPixel * o.patchT * o.patch * o.patch));
    if (o.pixelHead) {
        // Each patch's features per pixel, then a 3x3 convolution over them and the input frame:
        // the output starts at zero through the convolution instead.
        xavierInit(finalLinear);
        pixelHead = register_module(
            "pixel_head",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(perPixel + inCh, o.inChannels, 3).padding(1)));
        zeroInit(*pixelHead);
    } else {
        zeroInit(*finalLinear);
    }
}

torch::Tensor VideoDiTImpl::network(const torch::Tensor &x, const torch::Tensor &t,
                                    const torch::Tensor &labels, const torch::Tensor &reference)
{
    const auto b = x.size(0), c = x.size(1), frames = x.size(2), h = x.size(3), wd = x.size(4);
    const auto p = m_opt.patch, pt = m_opt.patchT, w = m_opt.channels;
    TORCH_CHECK(frames % pt == 0 && h % p == 0 && wd % p == 0, "clip ", x.sizes(),
                " is not a whole number of patches of ", pt, " x ", p, " x ", p);
    const auto tn = frames / pt, hn = h / p, wn = wd / p;
    auto in = x;
    if (m_opt.referenceFrame) {
        TORCH_CHECK(reference.defined(), "this model is conditioned on a reference frame");
        in = torch::cat({in, reference.unsqueeze(2).expand({b, c, frames, h, wd})}, 1);
    }
    const auto ci = in.size(1);
    // [B, C, T, H, W] -> tokens [B, T', S, C*pt*p*p] -> [B, T', S, D]
    auto tokens = patchEmbed(in.reshape({b, ci, tn, pt, hn, p, wn, p})
                                 .permute({0, 2, 4, 6, 1, 3, 5, 7})
                                 .reshape({b, tn, hn * wn, ci * pt * p * p}));
    const auto pos = spacePositions(hn, wn, w, x.device()).unsqueeze(0) +
        sinusoidal(torch::arange(tn, torch::TensorOptions().device(x.device())), w).unsqueeze(1);
    tokens = tokens + pos.to(tokens.dtype());
    // Flow time in [0, 1] scaled to the usual 0..1000 range of timestep embeddings, as the UNet.
    const auto cond = time2(F::silu(time1(sinusoidal(t * 1000.0, w).to(x.dtype())))) + classEmb(labels);
    for (std::size_t i = 0; i < blocks->size(); ++i) {
        auto block = blocks[i]->as<DiTBlock>();
        if (m_opt.activationCheckpointing) {
            const int unit = int(i);
            const BlockScope &scope = m_scope;
            tokens = recomputed(
                [block, wn](const std::vector<torch::Tensor> &v) { return block->forward(v[0], v[1], wn); },
                {tokens, cond},
                scope.enter ? std::function<void()>([&scope, unit] { scope.enter(unit); }) : nullptr,
                scope.leave ? std::function<void()>([&scope, unit] { scope.leave(unit); }) : nullptr);
        } else {
            tokens = block->forward(tokens, cond, wn);
        }
    }
    const auto fm = modulation(finalAdaLN, cond, 2);
    const auto out = finalLinear(modulate(tokens, fm[0], fm[1]));
    // [B, T', S, K*pt*p*p] -> [B, K, T, H, W]
    const auto k = out.size(3) / (pt * p * p);
    auto pixels = out.view({b, tn, hn, wn, k, pt, p, p})
                      .permute({0, 4, 1, 5, 2, 6, 3, 7})
                      .reshape({b, k, frames, h, wd});
    if (!pixelHead)
        return pixels;
    // Per frame: [B*T, K + C_in, H, W] -> [B*T, C, H, W] -> [B, C, T, H, W]
    const auto frameMajor = [&](const torch::Tensor &v) {
        return v.permute({0, 2, 1, 3, 4}).reshape({b * frames, v.size(1), h, wd});
    };
    pixels = pixelHead(torch::cat({frameMajor(pixels), frameMajor(in).to(pixels.dtype())}, 1));
    return pixels.view({b, frames, c, h, wd}).permute({0, 2, 1, 3, 4});
}

}  // namespace orrery::train
