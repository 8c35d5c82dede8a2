// SPDX-License-Identifier: GPL-3.0-or-later
#include "optimizer.h"

#include "checkpoint.h"

namespace orrery::train {

Optimizer::Optimizer(ProcessGroup &pg, const Config &c, std::vector<torch::Tensor> params,
                     std::vector<torch::Tensor> emaParams)
    : m_pg(pg), m_c(c), m_params(std::move(params)), m_ema(std::move(emaParams))
{
    if (c.s("dist.shard") != "none")
        throw std::runtime_error("dist.shard " + c.s("dist.shard") + " is not built yet");
    for (const auto &p : m_params) {
        m_expAvg.push_back(torch::zeros_like(p));
        m_expAvgSq.push_back(torch::zeros_like(p));
        m_steps.push_back(torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(p.device())));
    }
    m_sync = std::make_unique<GradientSync>(pg, m_params, c.f("dist.bucket_mb"));
}

Optimizer::~Optimizer() = default;

void Optimizer::setSyncEnabled(bool on)
{
    m_sync->setSyncEnabled(on);
}

torch::Tensor Optimizer::step(double lr, std::int64_t step)
{
    m_sync->finish();
    std::vector<torch::Tensor> grads;
    grads.reserve(m_params.size());
    for (auto &p : m_params)
        grads.push_back(p.grad());
    torch::NoGradGuard ng;
    const auto norm = torch::stack(at::_foreach_norm(grads)).norm();  // stays on the device: no sync
    const double clip = m_c.f("optim.grad_clip");
    if (clip > 0)
        at::_foreach_mul_(grads, torch::clamp_max(clip / (norm + 1e-6), 1.0));
    // The kernel reads the step count; the caller increments it (as torch.optim does).
    at::_foreach_add_(m_steps, 1.0);
    at::_fused_adamw_(m_params, grads, m_expAvg, m_expAvgSq, {}, m_steps, lr, m_c.f("optim.beta1"),
                      m_c.f("optim.beta2"), m_c.f("optim.weight_decay"), 1e-8, false, false);
    // EMA warm-up (as diffusers' EMAModel): early on the average follows the weights closely,
    // else a short run's EMA would still be its random initialisation.
    const double d = std::min(m_c.f("train.ema_decay"), (1.0 + double(step)) / (10.0 + double(step)));
    at::_foreach_lerp_(m_ema, m_params, 1.0 - d);
    for (auto &g : grads)
        g.zero_();
    return norm;
}

void Optimizer::save(torch::serialize::OutputArchive *out)
{
    if (!out)
        return;
    for (std::size_t i = 0; i < m_expAvg.size(); ++i) {
        out->write("optim/exp_avg/" + std::to_string(i), m_expAvg[i].cpu());
        out->write("optim/exp_avg_sq/" + std::to_string(i), m_expAvgSq[i].cpu());
        out->write("optim/step/" + std::to_string(i), m_steps[i].cpu());
    }
}

void Optimizer::load(torch::serialize::InputArchive &in, const std::string &file)
{
    torch::NoGradGuard ng;
    for (std::size_t i = 0; i < m_expAvg.size(); ++i) {
        readCheckpointTensor(in, file, "optim/exp_avg/" + std::to_string(i), m_expAvg[i]);
        readCheckpointTensor(in, file, "optim/exp_avg_sq/" + std::to_string(i), m_expAvgSq[i]);
        readCheckpointTensor(in, file, "optim/step/" + std::to_string(i), m_steps[i]);
    }
}

std::size_t Optimizer::bucketCount() const
{
    return m_sync->bucketCount();
}

std::string Optimizer::sharding() const
{
    return "none";
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
