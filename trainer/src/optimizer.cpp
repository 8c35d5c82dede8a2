// SPDX-License-Identifier: GPL-3.0-or-later
#include "optimizer.h"

#include "checkpoint.h"
#include "shard.h"

#include <ATen/autocast_mode.h>
namespace orrery::train {

namespace {

std::vector<torch::Tensor> zerosLike(const std::vector<torch::Tensor> &ts)
{
    std::vector<torch::Tensor> out;
    for (const auto &t : ts)
        out.push_back(torch::zeros_like(t));
    return out;
}

std::vector<torch::Tensor> stepCounts(std::size_t n, const torch::Device &device)
{
    std::vector<torch::Tensor> out;
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device)));
    return out;
}

std::string key(const char *what, std::size_t param)
{
    return std::string("optim/") + what + "/" + std::to_string(param);
}

}  // namespace

Optimizer::Optimizer(ProcessGroup &pg, const Config &c, std::vector<torch::Tensor> params,
                     const std::vector<int> &units)
    : m_pg(pg), m_c(c), m_params(std::move(params))
{
    const std::string shard = c.s("dist.shard");
    const auto device = m_params.front().device();
    if (shard == "none") {
        if (c.b("train.bf16_weights")) {
            // The master copy takes the weights' values; the parameters become their bf16 copies,
            // which autocast then uses as they are instead of casting each weight for each op.
            torch::NoGradGuard ng;
            m_bf16Weights = true;
            for (auto &p : m_params) {
                m_master.push_back(p.detach().clone());
                p.set_data(p.detach().to(torch::kBFloat16));
            }
            m_masterGrads = zerosLike(m_master);
        }
        m_expAvg = zerosLike(weights());
        m_expAvgSq = zerosLike(weights());
        m_steps = stepCounts(m_params.size(), device);
        m_sync = std::make_unique<GradientSync>(pg, m_params, c.f("dist.bucket_mb"));
        return;
    }
    using Stage = ShardedParameters::Stage;
    const Stage stage = shard == "optimizer" ? Stage::Optimizer
        : shard == "gradients"               ? Stage::Gradients
                                             : Stage::Parameters;
    m_stage3 = stage == Stage::Parameters;
    m_shards = std::make_unique<ShardedParameters>(pg, m_params, c.f("dist.bucket_mb"), stage, units);
    m_expAvg = zerosLike(m_shards->parameterSlices());
    m_expAvgSq = zerosLike(m_expAvg);
    m_steps = stepCounts(m_expAvg.size(), device);
}

void Optimizer::startEma(std::vector<torch::Tensor> emaParams)
{
    torch::NoGradGuard ng;
    m_ema = std::move(emaParams);
    for (auto &e : m_ema)
        e.requires_grad_(false);
    if (m_stage3) {
        for (const auto &slice : m_shards->parameterSlices())
            m_emaSlices.push_back(slice.clone());
        m_emaWhole = true;
        releaseEma();
        return;
    }
    for (std::size_t i = 0; i < m_params.size(); ++i)
        m_ema[i].copy_(weights()[i]);
}

Optimizer::~Optimizer() = default;

void Optimizer::setSyncEnabled(bool on)
{
    if (m_shards)
        m_shards->setSyncEnabled(on);
    else
        m_sync->setSyncEnabled(on);
}

torch::Tensor Optimizer::step(double lr, std::int64_t step)
{
    std::vector<torch::Tensor> params, grads, lowGrads;
    torch::NoGradGuard ng;
    if (m_shards) {
        grads = m_shards->gradientSlices();
        params = m_shards->parameterSlices();
    } else {
        m_sync->finish();
        params = weights();
        for (auto &p : m_params)
            grads.push_back(p.grad());
        if (m_bf16Weights) {  // the bf16 gradients, in fp32 for the master copy's update
            lowGrads = std::move(grads);
            at::_foreach_copy_(m_masterGrads, lowGrads);
            grads = m_masterGrads;
        }
    }
    torch::Tensor norm;  // stays on the device: no sync
    if (m_shards) {
        // The global norm over every rank's slices: the sum of squares, summed across ranks.
        const auto squares = torch::stack(at::_foreach_norm(grads)).square().sum();
        auto one = squares.view({1});  // shares the scalar's storage
        m_pg.allreduceSum(one);
        norm = squares.sqrt();
    } else {
        norm = torch::stack(at::_foreach_norm(grads)).norm();
    }
    const double clip = m_c.f("optim.grad_clip");
    if (clip > 0)
        at::_foreach_mul_(grads, torch::clamp_max(clip / (norm + 1e-6), 1.0));
    // The kernel reads the step count; the caller increments it (as torch.optim does).
    at::_foreach_add_(m_steps, 1.0);
    at::_fused_adamw_(params, grads, m_expAvg, m_expAvgSq, {}, m_steps, lr, m_c.f("optim.beta1"),
                      m_c.f("optim.beta2"), m_c.f("optim.weight_decay"), 1e-8, false, false);
    if (m_bf16Weights)
        at::_foreach_copy_(m_params, m_master);  // the next step's bf16 weights
    if (m_shards)
        m_shards->gatherParameters();
    if (m_stage3)
        m_shards->releaseUnit(-1);  // beforeForward gathered it for this step
    // EMA warm-up (as diffusers' EMAModel): early on the average follows the weights closely,
    // else a short run's EMA would still be its random initialisation. The EMA is kept whole on
    // every rank even when sharded: rank 0 samples and evaluates with it, so sharding it would
    // not lower rank 0's peak (docs/trainer.md, "Sharded data parallel").
    const double d = std::min(m_c.f("train.ema_decay"), (1.0 + double(step)) / (10.0 + double(step)));
    if (m_stage3)
        at::_foreach_lerp_(m_emaSlices, params, 1.0 - d);  // stage 3: slices of both
    else
        at::_foreach_lerp_(m_ema, weights(), 1.0 - d);
    if (m_shards) {
        m_shards->zeroGradients();
    } else {
        for (auto &g : m_bf16Weights ? lowGrads : grads)
            g.zero_();
    }
    return norm;
}

void Optimizer::save(torch::serialize::OutputArchive *out)
{
    if (m_shards) {
        // Consolidated: every rank takes part in the gathers, the lead writes.
        const auto expAvg = m_shards->gatherPerParameter(m_expAvg, out != nullptr);
        const auto expAvgSq = m_shards->gatherPerParameter(m_expAvgSq, out != nullptr);
        if (!out)
            return;
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            out->write(key("exp_avg", i), expAvg[i].cpu());
            out->write(key("exp_avg_sq", i), expAvgSq[i].cpu());
            out->write(key("step", i), m_steps[m_shards->bucketOf(i)].cpu());
        }
        return;
    }
    if (!out)
        return;
    for (std::size_t i = 0; i < m_expAvg.size(); ++i) {
        out->write(key("exp_avg", i), m_expAvg[i].cpu());
        out->write(key("exp_avg_sq", i), m_expAvgSq[i].cpu());
        out->write(key("step", i), m_steps[i].cpu());
    }
}

void Optimizer::load(torch::serialize::InputArchive &in, const std::string &file)
{
    torch::NoGradGuard ng;
    if (m_shards) {
        // Whole per-parameter tensors (whatever world size and dist.shard wrote them), of which
        // this rank keeps its slices.
        auto expAvg = zerosLike(m_params), expAvgSq = zerosLike(m_params);
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            readCheckpointTensor(in, file, key("exp_avg", i), expAvg[i]);
            readCheckpointTensor(in, file, key("exp_avg_sq", i), expAvgSq[i]);
        }
        m_expAvg = m_shards->slicesOf(expAvg);
        m_expAvgSq = m_shards->slicesOf(expAvgSq);
        for (std::size_t b = 0; b < m_steps.size(); ++b)
            readCheckpointTensor(in, file, key("step", m_shards->firstParameter(b)), m_steps[b]);
        return;
    }
    for (std::size_t i = 0; i < m_expAvg.size(); ++i) {
        readCheckpointTensor(in, file, key("exp_avg", i), m_expAvg[i]);
        readCheckpointTensor(in, file, key("exp_avg_sq", i), m_expAvgSq[i]);
        readCheckpointTensor(in, file, key("step", i), m_steps[i]);
    }
}

void Optimizer::beforeForward()
{
    if (m_stage3)
        m_shards->gatherUnit(-1);
}

void Optimizer::enterUnit(int unit)
{
    if (m_stage3)
        m_shards->gatherUnit(unit);
}

void Optimizer::leaveUnit(int unit)
{
    if (!m_stage3)
        return;
    m_shards->releaseUnit(unit);
    // Autocast (bf16) caches its casts of the block's parameters until the forward ends: a cast
    // copy of every block on every rank, what stage 3 is there to avoid.
    if (at::autocast::is_autocast_enabled(at::kCUDA) || at::autocast::is_autocast_enabled(at::kCPU))
        at::autocast::clear_cache();
}

void Optimizer::materialize()
{
    if (m_bf16Weights && m_lowered.empty()) {
        torch::NoGradGuard ng;
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            m_lowered.push_back(m_params[i].detach());
            m_params[i].set_data(m_master[i]);  // the same storage: what a load reads lands in it
        }
    }
    if (!m_stage3)
        return;
    m_shards->gatherAll();
    materializeEma(true);
}

void Optimizer::release(bool adopt)
{
    if (m_bf16Weights && !m_lowered.empty()) {
        torch::NoGradGuard ng;
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            m_lowered[i].copy_(m_master[i]);
            m_params[i].set_data(m_lowered[i]);
        }
        m_lowered.clear();
    }
    if (!m_stage3)
        return;
    if (adopt) {
        torch::NoGradGuard ng;
        m_emaSlices = m_shards->slicesOf(m_ema);
    }
    m_shards->releaseAll(adopt);
    releaseEma();
}

void Optimizer::materializeEma(bool here)
{
    if (!m_stage3 || m_emaWhole)
        return;
    torch::NoGradGuard ng;
    const auto whole = m_shards->gatherPerParameter(m_emaSlices, here);
    if (!here)
        return;
    for (std::size_t i = 0; i < m_ema.size(); ++i)
        m_ema[i].set_data(whole[i]);
    m_emaWhole = true;
}

void Optimizer::releaseEma()
{
    if (!m_stage3 || !m_emaWhole)
        return;
    for (auto &e : m_ema)
        e.set_data(torch::empty({0}, e.options()));
    m_emaWhole = false;
}

std::int64_t Optimizer::residentBytes() const
{
    std::int64_t n = stateBytes();
    const auto bytes = [](const std::vector<torch::Tensor> &ts) {
        std::int64_t b = 0;
        for (const auto &t : ts)
            b += std::int64_t(t.numel()) * std::int64_t(t.element_size());
        return b;
    };
    if (m_bf16Weights)  // bf16 parameters and gradients; fp32 master copy, its gradients, EMA
        return n + 2 * bytes(m_params) + 3 * bytes(m_master);
    if (!m_shards)  // whole parameters, gradients and EMA
        return n + 3 * bytes(m_params);
    const std::int64_t slices = bytes(m_shards->parameterSlices());
    if (m_stage3)  // parameter, gradient and EMA slices
        return n + 3 * slices;
    // Whole parameters and EMA; stage 1 whole gradients (its flat buckets), stage 2 slices.
    return n + 2 * bytes(m_params) + (sharding() == "optimizer" ? slices * m_pg.worldSize() : slices);
}

std::size_t Optimizer::bucketCount() const
{
    return m_shards ? m_shards->bucketCount() : m_sync->bucketCount();
}

std::string Optimizer::sharding() const
{
    return m_c.s("dist.shard");
}

std::int64_t Optimizer::stateBytes() const
{
    std::int64_t n = 0;
    for (const auto *list : {&m_expAvg, &m_expAvgSq, &m_steps})
        for (const auto &t : *list)
            n += std::int64_t(t.nbytes());
    return n;
}

}  // namespace orrery::train
