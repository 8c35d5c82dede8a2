// SPDX-License-Identifier: GPL-3.0-or-later
#include "model.h"
#include "recompute.h"

#include "config.h"
#include "dit.h"
#include "fused.h"

#include <ATen/SDPBackend.h>

#include <cmath>
#include <map>
#include <mutex>

namespace orrery::train {

namespace F = torch::nn::functional;
using torch::indexing::Slice;

namespace {

// 32 groups as in the DDPM/LDM UNets, fewer when the channels do not allow it.
std::int64_t groups(std::int64_t channels)
{
    for (std::int64_t g : {32, 16, 8, 4, 2, 1})
        if (channels % g == 0 && channels / g >= 2)
            return g;
    return 1;
}

// Each pixel of x [N, C, H, W] repeated factor x factor times.
torch::Tensor upsampleNearest(const torch::Tensor &x, std::int64_t factor)
{
    const auto f = double(factor);
    return F::interpolate(
        x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{f, f}).mode(torch::kNearest));
}

}  // namespace

torch::Tensor sinusoidal(const torch::Tensor &positions, std::int64_t dim)
{
    const std::int64_t half = dim / 2;
    const auto freqs = torch::exp(
        -std::log(10000.0) *
        torch::arange(half, torch::TensorOptions().dtype(torch::kFloat32).device(positions.device())) / half);
    const auto args = positions.to(torch::kFloat32).unsqueeze(1) * freqs.unsqueeze(0);
    return torch::cat({torch::cos(args), torch::sin(args)}, 1);
}

void zeroInit(torch::nn::Module &m)
{
    torch::NoGradGuard ng;
    for (auto &p : m.parameters())
        p.zero_();
}

ResBlockImpl::ResBlockImpl(std::int64_t in, std::int64_t out, std::int64_t embDim)
{
    norm1 = register_module("norm1", torch::nn::GroupNorm(groups(in), in));
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
    embProj = register_module("emb_proj", torch::nn::Linear(embDim, 2 * out));
    norm2 = register_module("norm2", torch::nn::GroupNorm(groups(out), out));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(out, out, 3).padding(1)));
    zeroInit(*conv2);  // each block starts as the identity
    if (in != out)
        skip = register_module("skip", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1)));
}

torch::Tensor ResBlockImpl::forward(const torch::Tensor &x, const torch::Tensor &emb)
{
    auto h = conv1(F::silu(norm1(x)));
    const auto ss = embProj(F::silu(emb)).unsqueeze(-1).unsqueeze(-1).chunk(2, 1);
    h = norm2(h) * (1 + ss[0]) + ss[1];  // scale-shift (FiLM), as in improved DDPM
    h = conv2(F::silu(h));
    return (skip ? skip(x) : x) + h;
}

namespace {

std::mutex g_attentionMutex;
std::string g_attentionForced;  // train.attention_backend when not auto
std::map<std::string, std::string> g_attentionUsed;  // site -> kernel

const char *kernelName(std::int64_t choice)
{
    switch (at::SDPBackend(choice)) {
    case at::SDPBackend::math:
        return "math";
    case at::SDPBackend::flash_attention:
        return "flash_attention";
    case at::SDPBackend::efficient_attention:
        return "efficient_attention";
    case at::SDPBackend::cudnn_attention:
        return "cudnn_attention";
    case at::SDPBackend::overrideable:
        return "overrideable";
    case at::SDPBackend::error:
        break;
    }
    return "none";
}

}  // namespace

void selectAttentionBackend(const std::string &name)
{
    auto &ctx = at::globalContext();
    const bool all = name == "auto";
    ctx.setSDPUseFlash(all || name == "flash");
    ctx.setSDPUseMemEfficient(all || name == "efficient");
    ctx.setSDPUseCuDNN(all || name == "cudnn");
    ctx.setSDPUseMath(all || name == "math");
    const std::lock_guard lock(g_attentionMutex);
    g_attentionForced = all ? std::string() : name;
}

void configureKernels(const Config &c, const torch::Device &device)
{
    selectAttentionBackend(c.s("train.attention_backend"));
    const std::string fused = c.s("train.fused_modulation");
    // auto is off: on CPU the operator is as fast as LibTorch's two (bench/RESULTS.md "Fused
    // LayerNorm and modulation"), and CUDA's kernel waits for a GPU run to check and time it
    // (bench/trainer_gpu.sh fused).
    const bool on = fused == "on";
    if (on && !fusedModulateAvailable(device))
        throw ConfigError("train.fused_modulation on: this build of orrery-train has no " + device.str() +
                          " kernel for it");
    useFusedModulate(on);
}

torch::Tensor attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v, const char *site)
{
    const std::lock_guard lock(g_attentionMutex);  // uncontended: a few calls a forward
    if (!g_attentionUsed.count(site)) {
        std::int64_t choice = std::int64_t(at::SDPBackend::error);
        try {
            choice = at::_fused_sdp_choice(q, k, v);
        } catch (const c10::Error &) { }
        if (choice == std::int64_t(at::SDPBackend::error))
            throw ConfigError(
                "train.attention_backend " + g_attentionForced + ": LibTorch has no such kernel for " + site +
                " attention here (" + q.device().str() + ", " + std::string(c10::toString(q.scalar_type())) +
                ", head dimension " + std::to_string(q.size(-1)) + "); auto picks one that runs");
        g_attentionUsed[site] = kernelName(choice);
    }
    return at::scaled_dot_product_attention(q, k, v);
}

std::string attentionBackendsUsed()
{
    const std::lock_guard lock(g_attentionMutex);
    std::set<std::string> kernels;
    std::string all;
    for (const auto &[site, kernel] : g_attentionUsed) {
        kernels.insert(kernel);
        all += (all.empty() ? "" : ", ") + site + ": " + kernel;
    }
    return kernels.size() == 1 ? *kernels.begin() : all;
}

SpatialAttentionImpl::SpatialAttentionImpl(std::int64_t channels, std::int64_t heads) : m_heads(heads)
{
    norm = register_module("norm", torch::nn::GroupNorm(groups(channels), channels));
    qkv = register_module("qkv", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 3 * channels, 1)));
    proj = register_module("proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 1)));
    zeroInit(*proj);
}

torch::Tensor SpatialAttentionImpl::forward(const torch::Tensor &x)
{
    const auto n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const auto d = c / m_heads;
    // The 1x1 convolutions as Linears over tokens [N, HW, C], so that each head's d features are
    // contiguous in q, k, v: LibTorch's flash kernels (CPU and CUDA) take only those, and the
    // [N, 3C, H, W] layout of the convolution's output sent every UNet's spatial attention on CPU
    // to the math kernel (cuDNN's took it on a GPU). The parameters are the convolutions', as
    // before.
    const auto tokens = norm(x).flatten(2).transpose(1, 2);
    const auto q = F::linear(tokens, qkv->weight.flatten(1), qkv->bias)
                       .view({n, h * w, 3, m_heads, d})
                       .permute({2, 0, 3, 1, 4});  // 3 x [N, heads, HW, d]
    const auto o = attend(q[0], q[1], q[2], "spatial");
    const auto out = F::linear(o.transpose(1, 2).reshape({n, h * w, c}), proj->weight.flatten(1), proj->bias);
    return x + out.transpose(1, 2).reshape({n, c, h, w});
}

TemporalAttentionImpl::TemporalAttentionImpl(std::int64_t channels, std::int64_t heads,
                                             std::int64_t maxFrames)
    : m_heads(heads)
{
    norm = register_module("norm", torch::nn::GroupNorm(groups(channels), channels));
    qkv = register_module("qkv", torch::nn::Linear(channels, 3 * channels));
    proj = register_module("proj", torch::nn::Linear(channels, channels));
    zeroInit(*proj);  // the motion module starts switched off
    framePos = register_buffer("frame_pos", sinusoidal(torch::arange(maxFrames), channels));
}

torch::Tensor TemporalAttentionImpl::forward(const torch::Tensor &x, std::int64_t frames)
{
    const auto n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const auto b = n / frames;
    const auto d = c / m_heads;
    // [B*T, C, H, W] -> [B*H*W, T, C]: every pixel attends over the frames of its clip.
    auto seq = norm(x).reshape({b, frames, c, h, w}).permute({0, 3, 4, 1, 2}).reshape({b * h * w, frames, c});
    seq = seq + framePos.index({Slice(0, frames)}).to(seq.dtype());
    const auto q = qkv(seq).reshape({b * h * w, frames, 3, m_heads, d}).permute({2, 0, 3, 1, 4});
    auto o = attend(q[0], q[1], q[2], "temporal");  // [BHW, heads, T, d]
    o = proj(o.permute({0, 2, 1, 3}).reshape({b * h * w, frames, c}));
    return x + o.reshape({b, h, w, frames, c}).permute({0, 3, 4, 1, 2}).reshape({n, c, h, w});
}

UNetBlockImpl::UNetBlockImpl(std::int64_t in, std::int64_t out, std::int64_t embDim, bool spatial,
                             std::int64_t temporalLayers, std::int64_t heads, std::int64_t maxFrames)
{
    res = register_module("res", ResBlock(in, out, embDim));
    if (spatial)
        attn = register_module("attn", SpatialAttention(out, heads));
    temporal = register_module("temporal", torch::nn::ModuleList());
    for (std::int64_t i = 0; i < temporalLayers; ++i)
        temporal->push_back(TemporalAttention(out, heads, maxFrames));
}

torch::Tensor UNetBlockImpl::forward(torch::Tensor x, const torch::Tensor &emb, std::int64_t frames)
{
    x = res(x, emb);
    if (attn)
        x = attn(x);
    for (const auto &m : *temporal)
        x = m->as<TemporalAttention>()->forward(x, frames);
    return x;
}

VideoUNetImpl::VideoUNetImpl(const ModelOptions &o) : DenoiserImpl(o)
{
    const std::int64_t ch = o.channels, emb = 4 * o.channels;
    const std::int64_t inCh = o.inChannels * (o.referenceFrame ? 2 : 1) * o.patch * o.patch;
    convIn = register_module("conv_in", torch::nn::Conv2d(torch::nn::Conv2dOptions(inCh, ch, 3).padding(1)));
    time1 = register_module("time1", torch::nn::Linear(ch, emb));
    time2 = register_module("time2", torch::nn::Linear(emb, emb));
    classEmb = register_module("class_emb", torch::nn::Embedding(o.classes + 1, emb));
    down = register_module("down", torch::nn::ModuleList());
    downsample = register_module("downsample", torch::nn::ModuleList());
    mid = register_module("mid", torch::nn::ModuleList());
    up = register_module("up", torch::nn::ModuleList());
    upsample = register_module("upsample", torch::nn::ModuleList());

    std::vector<std::int64_t> skipChannels{ch};
    std::int64_t cur = ch;
    const auto levels = std::int64_t(o.mult.size());
    for (std::int64_t l = 0; l < levels; ++l) {
        const std::int64_t out = ch * o.mult[std::size_t(l)];
        for (std::int64_t i = 0; i < o.resBlocks; ++i) {
            down->push_back(
                UNetBlock(cur, out, emb, o.attnLevels.count(l) > 0, o.temporalLayers, o.heads, o.frames));
            cur = out;
            skipChannels.push_back(cur);
        }
        if (l + 1 < levels) {
            downsample->push_back(
                torch::nn::Conv2d(torch::nn::Conv2dOptions(cur, cur, 3).stride(2).padding(1)));
            skipChannels.push_back(cur);
        }
    }
    mid->push_back(UNetBlock(cur, cur, emb, true, o.temporalLayers, o.heads, o.frames));
    mid->push_back(UNetBlock(cur, cur, emb, false, 0, o.heads, o.frames));
    for (std::int64_t l = levels - 1; l >= 0; --l) {
        const std::int64_t out = ch * o.mult[std::size_t(l)];
        for (std::int64_t i = 0; i <= o.resBlocks; ++i) {
            const std::int64_t skip = skipChannels.back();
            skipChannels.pop_back();
            up->push_back(UNetBlock(cur + skip, out, emb, o.attnLevels.count(l) > 0, o.temporalLayers,
                                    o.heads, o.frames));
            cur = out;
        }
        if (l > 0)
            upsample->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(cur, cur, 3).padding(1)));
    }
    normOut = register_module("norm_out", torch::nn::GroupNorm(groups(cur), cur));
    // The pixel head sees the features at pixel resolution and the input clip itself (its exact
    // edges), so the output's edges are not bound to the patch grid.
    const std::int64_t outIn = o.pixelHead ? cur + o.inChannels * (o.referenceFrame ? 2 : 1) : cur;
    const std::int64_t outCh = o.inChannels * (o.pixelHead ? 1 : o.patch * o.patch);
    convOut =
        register_module("conv_out", torch::nn::Conv2d(torch::nn::Conv2dOptions(outIn, outCh, 3).padding(1)));
    zeroInit(*convOut);
}

std::vector<int> DenoiserImpl::parameterUnits() const
{
    // "blocks.<i>." parameters are block i's (the DiT's); everything else is the rest.
    std::vector<int> out;
    for (const auto &p : named_parameters()) {
        const std::string &name = p.key();
        int unit = -1;
        if (name.rfind("blocks.", 0) == 0)
            unit = std::atoi(name.c_str() + 7);
        out.push_back(unit);
    }
    return out;
}

torch::Tensor DenoiserImpl::forward(const torch::Tensor &x, const torch::Tensor &t,
                                    const torch::Tensor &labels, const torch::Tensor &reference)
{
    if (!m_opt.precondition && !m_opt.predictX0)
        return network(x, t, labels, reference);
    // x_t = (1 - t) x0 + t eps with x0 of mean m and std s: the network sees x_t centred and scaled
    // to unit variance (c_in).
    const auto tb = t.to(torch::kFloat32).view({-1, 1, 1, 1, 1});
    const double m = m_opt.dataMean, s = m_opt.dataStd;
    const auto var = flowInputVariance(t, s);
    const auto cIn = var.rsqrt();
    const auto centred = x.to(torch::kFloat32) - (1 - tb) * m;
    const auto f = network(centred * cIn, t, labels, reference).to(torch::kFloat32);
    if (m_opt.predictX0) {
        // The clean clip at the data's scale; v follows from it (x_t - x0 = t v).
        const auto x0 = m + s * f;
        return (x.to(torch::kFloat32) - x0) / tb.clamp_min(kFlowTimeFloor);
    }
    // The best linear estimate of v = eps - x0 from x_t is -m + c_skip (x_t - (1 - t) m), with
    // residual std c_out; the network predicts that residual in unit scale. Untrained, each step's
    // estimate of the clean clip is the data's mean (a plain v-prediction's zero output leaves all
    // the noise in: the quickstart's samples were static), but the sampler integrating that linear
    // part draws each pixel from the data's Gaussian: a short run's samples keep that speckle
    // (docs/trainer.md "The noise left in the sample"; model.prediction x0 does not).
    const auto cOut = s * cIn, cSkip = (tb - (1 - tb) * (s * s)) / var;
    return cSkip * centred + cOut * f - m;
}

torch::Tensor VideoUNetImpl::network(const torch::Tensor &x, const torch::Tensor &t,
                                     const torch::Tensor &labels, const torch::Tensor &reference)
{
    const auto b = x.size(0), c = x.size(1), frames = x.size(2), h = x.size(3), w = x.size(4);
    auto in = x.permute({0, 2, 1, 3, 4}).reshape({b * frames, c, h, w});
    if (m_opt.referenceFrame) {
        TORCH_CHECK(reference.defined(), "this model is conditioned on a reference frame");
        in = torch::cat(
            {in, reference.unsqueeze(1).expand({b, frames, c, h, w}).reshape({b * frames, c, h, w})}, 1);
    }
    // Flow time in [0, 1] scaled to the usual 0..1000 range of timestep embeddings.
    auto emb = time2(F::silu(time1(sinusoidal(t * 1000.0, m_opt.channels).to(x.dtype()))));
    emb = emb + classEmb(labels);
    emb = emb.repeat_interleave(frames, 0);

    const auto pixels = in;  // [B*T, C, H, W], for the pixel head
    if (m_opt.patch > 1)
        in = F::pixel_unshuffle(in, m_opt.patch);
    auto hcur = convIn(in);
    // With train.activation_checkpointing each block keeps only its inputs (h and emb) for backward.
    const auto block = [&](const std::shared_ptr<torch::nn::Module> &m, const torch::Tensor &features) {
        auto *blk = m->as<UNetBlock>();
        if (!m_opt.activationCheckpointing)
            return blk->forward(features, emb, frames);
        return recomputed(
            [blk, frames](const std::vector<torch::Tensor> &io) {
                return blk->forward(io[0], io[1], frames);
            },
            {features, emb});
    };
    std::vector<torch::Tensor> skips{hcur};
    const auto levels = std::int64_t(m_opt.mult.size());
    std::size_t di = 0, dsi = 0;
    for (std::int64_t l = 0; l < levels; ++l) {
        for (std::int64_t i = 0; i < m_opt.resBlocks; ++i) {
            hcur = block(down[di++], hcur);
            skips.push_back(hcur);
        }
        if (l + 1 < levels) {
            hcur = downsample[dsi++]->as<torch::nn::Conv2d>()->forward(hcur);
            skips.push_back(hcur);
        }
    }
    for (const auto &m : *mid)
        hcur = block(m, hcur);
    std::size_t ui = 0, usi = 0;
    for (std::int64_t l = levels - 1; l >= 0; --l) {
        for (std::int64_t i = 0; i <= m_opt.resBlocks; ++i) {
            hcur = torch::cat({hcur, skips.back()}, 1);
            skips.pop_back();
            hcur = block(up[ui++], hcur);
        }
        if (l > 0) {
            hcur = upsampleNearest(hcur, 2);
            hcur = upsample[usi++]->as<torch::nn::Conv2d>()->forward(hcur);
        }
    }
    auto out = F::silu(normOut(hcur));
    if (m_opt.pixelHead) {
        out = convOut(torch::cat({upsampleNearest(out, m_opt.patch), pixels.to(out.dtype())}, 1));
    } else {
        out = convOut(out);
        if (m_opt.patch > 1)
            out = F::pixel_shuffle(out, m_opt.patch);
    }
    return out.reshape({b, frames, c, h, w}).permute({0, 2, 1, 3, 4});
}

Denoiser makeDenoiser(const ModelOptions &o)
{
    if (o.arch == "unet")
        return std::make_shared<VideoUNetImpl>(o);
    if (o.arch == "dit")
        return std::make_shared<VideoDiTImpl>(o);
    throw std::runtime_error("model.arch " + o.arch + ": no such backbone (unet, dit)");
}

std::int64_t parameterCount(const torch::nn::Module &m)
{
    std::int64_t n = 0;
    for (const auto &p : m.parameters())
        n += p.numel();
    return n;
}

}  // namespace orrery::train
