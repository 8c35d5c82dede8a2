// SPDX-License-Identifier: GPL-3.0-or-later
//
// The video diffusion UNet: per-frame 2D ResBlocks with timestep (and class) embedding applied as
// scale-shift, spatial self-attention at chosen levels, temporal self-attention across frames at
// every level (the AnimateDiff "motion module" idea: zero-initialised, so a fresh model starts as
// a per-frame image model), down/up paths with skips. Optional image-to-video conditioning on the
// clean first frame, concatenated to every frame's input channels.
// Tensors are [B, C, T, H, W] outside, [B*T, C, H, W] inside. With a patch size p, each frame is
// first folded into p x p patches (space-to-depth, lossless), so the UNet's first level runs at
// H/p x W/p: p = 2 costs 4x less compute than p = 1 (measured on CPU: tiny 1.7 → 0.4 s/step).
#pragma once

#include <torch/torch.h>

#include <functional>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace orrery::train {

class Config;

struct ModelOptions {
    std::string arch = "unet";  // model.arch: unet | dit
    std::int64_t inChannels = 3;
    std::int64_t channels = 32;
    std::vector<std::int64_t> mult{1, 2};
    std::int64_t resBlocks = 1;
    std::set<std::int64_t> attnLevels{1};
    std::int64_t temporalLayers = 1;
    std::int64_t heads = 4;
    std::int64_t classes = 8;  // label `classes` is the "no label" of classifier-free guidance
    std::int64_t frames = 8;
    std::int64_t patch = 1;  // pixel-unshuffle p x p patches into channels first (DiT's patch size)
    bool referenceFrame = false;
    // The DiT's (model.arch dit; dit.h): channels is its width, patch its spatial patch size.
    std::int64_t depth = 4;  // transformer blocks
    std::int64_t patchT = 1;  // frames per patch
    double mlpRatio = 4.0;
    bool fullAttention = false;  // joint space-time attention instead of spatial + temporal
    bool localMixing = false;  // a depthwise 3x3 convolution over each frame's tokens in every MLP
    // The output layer at pixel resolution, over the features and the input clip (both backbones):
    // sharper edges than one output per patch (unpatchify / pixel shuffle).
    bool pixelHead = false;
    // Both: each block's activations recomputed in the backward pass (recompute.h).
    bool activationCheckpointing = false;
    // Preconditioning (EDM, Karras et al. 2022, written for rectified flow): the network predicts
    // the residual of the best linear estimate of v given x_t, for data of this mean and std.
    bool precondition = true;
    // x-prediction (Li & He 2025, "Back to Basics"): the network predicts the clean clip at the
    // data's scale (m + s f) and the velocity is (x_t - x0) / t. Untrained, it samples the data's mean
    // (a flat clip), where the preconditioned v samples the data's per-pixel Gaussian (speckle).
    bool predictX0 = false;
    double dataMean = 0.0, dataStd = 0.5;
};

// What both backbones are: the velocity of noisy clips, preconditioned. forward() wraps the
// backbone's network() in the preconditioning, so the UNet and the DiT share the objective, the
// sampler, EMA, checkpoints and evaluation.
class DenoiserImpl : public torch::nn::Module {
public:
    explicit DenoiserImpl(ModelOptions o) : m_opt(std::move(o)) { }
    // x: noisy clips [B, C, T, H, W]; t: flow time in [0, 1] [B]; labels [B] (o.classes = none);
    // reference: clean first frames [B, C, H, W] (when o.referenceFrame). Returns the velocity
    // (float32 when preconditioned).
    torch::Tensor forward(const torch::Tensor &x, const torch::Tensor &t, const torch::Tensor &labels,
                          const torch::Tensor &reference = {});
    const ModelOptions &options() const { return m_opt; }

    // ZeRO stage 3 (shard.h): called before and after each block runs (in its forward and around
    // its recompute), with the block's index. Only a model whose blocks are recomputed
    // (activation checkpointing) takes them.
    struct BlockScope {
        std::function<void(int)> enter, leave;
    };
    void setBlockScope(BlockScope scope) { m_scope = std::move(scope); }
    // Each parameter's unit, in parameters() order: its block's index, or -1 (the rest).
    virtual std::vector<int> parameterUnits() const;

protected:
    // The backbone on preconditioned input: [B, C, T, H, W] in, the same shape out.
    virtual torch::Tensor network(const torch::Tensor &x, const torch::Tensor &t, const torch::Tensor &labels,
                                  const torch::Tensor &reference) = 0;
    ModelOptions m_opt;
    BlockScope m_scope;
};
using Denoiser = std::shared_ptr<DenoiserImpl>;

// The backbone o.arch names ("unet" or "dit"), with fresh weights from torch's generator.
Denoiser makeDenoiser(const ModelOptions &o);

class ResBlockImpl : public torch::nn::Module {
public:
    ResBlockImpl(std::int64_t in, std::int64_t out, std::int64_t embDim);
    torch::Tensor forward(const torch::Tensor &x, const torch::Tensor &emb);

private:
    torch::nn::GroupNorm norm1{nullptr}, norm2{nullptr};
    torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, skip{nullptr};
    torch::nn::Linear embProj{nullptr};
};
TORCH_MODULE(ResBlock);

// Scaled dot-product attention of q, k, v [N, heads, L, d] as LibTorch dispatches it, narrowed by
// selectAttentionBackend. The first call from each `site` ("spatial", "temporal", "joint") records
// the kernel that ran. A kernel named by train.attention_backend that cannot take these inputs is
// a ConfigError naming the key.
torch::Tensor attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                     const char *site);
// The process's kernel choices from the config, for a run on `device`: train.attention_backend
// and train.fused_modulation. Training and --evaluate both call it, so they sample alike.
void configureKernels(const Config &c, const torch::Device &device);
// train.attention_backend: auto (LibTorch's own order) | flash | efficient | cudnn | math. For the
// process: LibTorch's switches are global.
void selectAttentionBackend(const std::string &name);
// Each site's kernel so far ("flash_attention", "efficient_attention", "cudnn_attention", "math"),
// as "site: kernel" lines joined by ", " where the sites differ, else the one kernel. Empty before
// the first forward.
std::string attentionBackendsUsed();

class SpatialAttentionImpl : public torch::nn::Module {
public:
    SpatialAttentionImpl(std::int64_t channels, std::int64_t heads);
    torch::Tensor forward(const torch::Tensor &x);

private:
    std::int64_t m_heads;
    torch::nn::GroupNorm norm{nullptr};
    torch::nn::Conv2d qkv{nullptr}, proj{nullptr};
};
TORCH_MODULE(SpatialAttention);

class TemporalAttentionImpl : public torch::nn::Module {
public:
    TemporalAttentionImpl(std::int64_t channels, std::int64_t heads, std::int64_t maxFrames);
    torch::Tensor forward(const torch::Tensor &x, std::int64_t frames);

private:
    std::int64_t m_heads;
    torch::nn::GroupNorm norm{nullptr};
    torch::nn::Linear qkv{nullptr}, proj{nullptr};
    torch::Tensor framePos;  // sinusoidal frame positions [maxFrames, C]
};
TORCH_MODULE(TemporalAttention);

// ResBlock + optional spatial attention + temporal layers: one step of a level.
class UNetBlockImpl : public torch::nn::Module {
public:
    UNetBlockImpl(std::int64_t in, std::int64_t out, std::int64_t embDim, bool spatial, std::int64_t temporal,
                  std::int64_t heads, std::int64_t maxFrames);
    torch::Tensor forward(torch::Tensor x, const torch::Tensor &emb, std::int64_t frames);

private:
    ResBlock res{nullptr};
    SpatialAttention attn{nullptr};
    torch::nn::ModuleList temporal;
};
TORCH_MODULE(UNetBlock);

class VideoUNetImpl : public DenoiserImpl {
public:
    explicit VideoUNetImpl(const ModelOptions &o);

protected:
    torch::Tensor network(const torch::Tensor &x, const torch::Tensor &t, const torch::Tensor &labels,
                          const torch::Tensor &reference) override;

private:
    torch::nn::Conv2d convIn{nullptr}, convOut{nullptr};
    torch::nn::GroupNorm normOut{nullptr};
    torch::nn::Linear time1{nullptr}, time2{nullptr};
    torch::nn::Embedding classEmb{nullptr};
    torch::nn::ModuleList down, downsample, mid, up, upsample;
    std::vector<std::int64_t> m_downPerLevel;
};

std::int64_t parameterCount(const torch::nn::Module &m);

// Sinusoidal embeddings of positions [N] (any numbers: frames, timesteps x 1000), [N, dim] float32.
torch::Tensor sinusoidal(const torch::Tensor &positions, std::int64_t dim);
// Every parameter of m set to zero: a residual branch that starts switched off.
void zeroInit(torch::nn::Module &m);

// The smallest t that x-prediction divides by (v = (x_t - x0) / t).
inline constexpr double kFlowTimeFloor = 1e-3;

// Var(x_t) = (1 - t)^2 s^2 + t^2 for data of std s, as [B, 1, 1, 1, 1] (float32): the
// preconditioning's c_in = 1/sqrt of it and c_out = s/sqrt of it (VideoUNet::forward, flowLoss).
inline torch::Tensor flowInputVariance(const torch::Tensor &t, double dataStd)
{
    const auto tb = t.to(torch::kFloat32).view({-1, 1, 1, 1, 1});
    return (1 - tb).square() * (dataStd * dataStd) + tb.square();
}

}  // namespace orrery::train
