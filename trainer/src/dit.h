// SPDX-License-Identifier: GPL-3.0-or-later
//
// The video diffusion transformer (model.arch dit), as Latte / Open-Sora / CogVideoX: clips cut
// into patch_t x patch x patch space-time patches, one token each (a reshape + Linear: on CPU it
// beats a strided Conv3d, which is the same product), fixed sin-cos positions in space and in time,
// then `depth` blocks conditioned on the timestep + class embedding by adaLN-Zero (DiT, Peebles &
// Xie 2023: every block starts as the identity), a final adaLN + zero-initialised Linear back to
// patch pixels. Factorised blocks attend over the tokens of each frame, then over the frames of
// each spatial position, then run the MLP; full blocks attend over all tokens at once.
// Tokens are [B, T', S, D] inside (T' = T / patch_t frames of S = (H / patch) x (W / patch)
// tokens), so spatial attention is a view and only temporal attention moves data. The positions
// are computed for the clip's grid on each call (no buffers: any clip size, nothing to checkpoint).
// The shape rules (data.size a multiple of model.patch, ...) are config errors (config.cpp).
#pragma once

#include "model.h"

namespace orrery::train {

// Self-attention with one fused QKV Linear, for sequences [N, L, D].
class DiTAttentionImpl : public torch::nn::Module {
public:
    // site: what attend() records the kernel under ("spatial", "temporal", "joint").
    DiTAttentionImpl(std::int64_t width, std::int64_t heads, const char *site);
    torch::Tensor forward(const torch::Tensor &x);

private:
    std::int64_t m_heads;
    const char *m_site;
    torch::nn::Linear qkv{nullptr}, proj{nullptr};
};
TORCH_MODULE(DiTAttention);

// One transformer block on tokens [B, T', S, D] with the conditioning c [B, D].
class DiTBlockImpl : public torch::nn::Module {
public:
    // localMixing: a depthwise 3x3 convolution over each frame's token grid inside the MLP.
    DiTBlockImpl(std::int64_t width, std::int64_t heads, double mlpRatio, bool full,
                 bool localMixing = false);
    // gridWidth: tokens a row of the frame's grid (S = rows x gridWidth); used by local mixing.
    torch::Tensor forward(const torch::Tensor &x, const torch::Tensor &c, std::int64_t gridWidth);

private:
    bool m_full;
    DiTAttention spatial{nullptr}, temporal{nullptr};
    torch::nn::Linear fc1{nullptr}, fc2{nullptr}, adaLN{nullptr};
    torch::nn::Conv2d localMix{nullptr};
};
TORCH_MODULE(DiTBlock);

// The features per pixel that the last Linear gives the pixel head (model.pixel_head).
inline constexpr std::int64_t kPixelHeadChannels = 8;

class VideoDiTImpl : public DenoiserImpl {
public:
    explicit VideoDiTImpl(const ModelOptions &o);

protected:
    torch::Tensor network(const torch::Tensor &x, const torch::Tensor &t, const torch::Tensor &labels,
                          const torch::Tensor &reference) override;

private:
    torch::nn::Linear patchEmbed{nullptr}, time1{nullptr}, time2{nullptr}, finalAdaLN{nullptr},
        finalLinear{nullptr};
    torch::nn::Embedding classEmb{nullptr};
    torch::nn::ModuleList blocks;
    torch::nn::Conv2d pixelHead{nullptr};  // model.pixel_head
};

}  // namespace orrery::train
