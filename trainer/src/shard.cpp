// SPDX-License-Identifier: GPL-3.0-or-later
#include "shard.h"

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <algorithm>
#include <stdexcept>

namespace orrery::train {

namespace {

// Stage 2 holds a bucket's full-size gradient buffer only while its reduction is in flight, and
// Gloo's all-gather a full-size temporary: two in flight still overlap communication (with the
// backward pass, with each other) and bound that memory to two buckets (dist.bucket_mb each).
constexpr std::size_t kMaxInFlight = 2;

}  // namespace

namespace {

// Stage 3's buckets: one per unit (the rest, -1, first; then the blocks in order).
std::vector<std::vector<std::size_t>> unitBuckets(const std::vector<int> &units, std::size_t params,
                                                  std::vector<std::size_t> &unitBucket)
{
    if (units.size() != params)
        throw std::logic_error("ZeRO stage 3 needs every parameter's unit");
    const int last = units.empty() ? -1 : *std::max_element(units.begin(), units.end());
    std::vector<std::vector<std::size_t>> out(std::size_t(last + 2));
    for (std::size_t k = 0; k < params; ++k)
        out[std::size_t(units[k] + 1)].push_back(k);
    std::vector<std::vector<std::size_t>> kept;
    unitBucket.assign(out.size(), std::size_t(-1));
    for (std::size_t u = 0; u < out.size(); ++u)
        if (!out[u].empty()) {
            unitBucket[u] = kept.size();
            kept.push_back(std::move(out[u]));
        }
    return kept;
}

}  // namespace

ShardedParameters::ShardedParameters(ProcessGroup &pg, std::vector<torch::Tensor> params, double bucketMB,
                                     Stage stage, const std::vector<int> &units)
    : m_pg(pg), m_params(std::move(params)), m_stage(stage), m_shardGradients(stage != Stage::Optimizer),
      m_world(pg.active() ? pg.worldSize() : 1), m_rank(pg.active() ? pg.rank() : 0)
{
    torch::NoGradGuard ng;
    for (const auto &p : m_params)
        m_sizes.push_back({p.numel(), p.sizes().vec()});
    m_bucketOf.assign(m_params.size(), 0);
    for (auto &indices : stage == Stage::Parameters ? unitBuckets(units, m_params.size(), m_unitBucket)
                                                    : gradientBuckets(m_params, bucketMB)) {
        Bucket b;
        b.params = std::move(indices);
        std::int64_t total = 0;
        for (std::size_t k : b.params) {
            b.offsets.push_back(total);
            total += m_params[k].numel();
            m_bucketOf[k] = m_buckets.size();
        }
        b.padded = (total + m_world - 1) / m_world * m_world;
        b.slice = b.padded / m_world;
        const auto opts = m_params[b.params.front()].options();
        b.flat = torch::zeros({b.padded}, opts);
        for (std::size_t j = 0; j < b.params.size(); ++j) {
            auto &p = m_params[b.params[j]];
            auto view = b.flat.narrow(0, b.offsets[j], p.numel());
            view.copy_(p.reshape({p.numel()}));
            // The parameter now lives in the bucket (as FSDP's flat parameter): the update of a
            // slice is the update of the model, and its old storage is freed.
            p.set_data(view.view(p.sizes()));
        }
        if (m_shardGradients) {
            b.gradSlice = torch::zeros({b.slice}, opts);
        } else {
            b.gradFlat = torch::zeros({b.padded}, opts);
            b.gradSlice = b.gradFlat.narrow(0, b.slice * m_rank, b.slice);
        }
        b.pending = b.params.size();
        m_buckets.push_back(std::move(b));
        if (stage == Stage::Parameters) {
            Bucket &kept = m_buckets.back();
            kept.paramSlice = kept.flat.narrow(0, kept.slice * m_rank, kept.slice).clone();
            release(kept);
        }
    }
    if (!pg.active())
        return;
    for (std::size_t k = 0; k < m_params.size(); ++k)
        onGradientAccumulated(m_params[k], [this, k] { onGradReady(k); });
}

ShardedParameters::~ShardedParameters()
{
    if (m_pg.active())
        for (auto &p : m_params)
            onGradientAccumulated(p, nullptr);
}

void ShardedParameters::gather(Bucket &b)
{
    if (b.gathered)
        return;
    torch::NoGradGuard ng;
    b.flat = torch::empty({b.padded}, b.paramSlice.options());
    if (m_pg.active())
        m_pg.allgatherAsync(b.flat, b.paramSlice)->wait();
    else
        b.flat.copy_(b.paramSlice);
    for (std::size_t j = 0; j < b.params.size(); ++j) {
        auto &p = m_params[b.params[j]];
        const Size &size = sizeOf(b.params[j]);
        p.set_data(b.flat.narrow(0, b.offsets[j], size.numel).view(size.shape));
    }
    b.gathered = true;
}

void ShardedParameters::release(Bucket &b)
{
    if (!b.gathered)
        return;
    for (std::size_t k : b.params) {
        auto &p = m_params[k];
        // An empty tensor: a use of the parameter outside its unit fails at once, loudly.
        p.set_data(torch::empty({0}, p.options()));
    }
    b.flat = torch::Tensor();
    b.gathered = false;
}

void ShardedParameters::gatherUnit(int unit)
{
    if (m_stage == Stage::Parameters)
        gather(m_buckets[m_unitBucket.at(std::size_t(unit + 1))]);
}

void ShardedParameters::releaseUnit(int unit)
{
    if (m_stage == Stage::Parameters)
        release(m_buckets[m_unitBucket.at(std::size_t(unit + 1))]);
}

void ShardedParameters::gatherAll()
{
    if (m_stage == Stage::Parameters)
        for (Bucket &b : m_buckets)
            gather(b);
}

void ShardedParameters::releaseAll(bool adopt)
{
    if (m_stage != Stage::Parameters)
        return;
    torch::NoGradGuard ng;
    for (Bucket &b : m_buckets) {
        if (adopt && b.gathered)
            b.paramSlice.copy_(b.flat.narrow(0, b.slice * m_rank, b.slice));
        release(b);
    }
}

void ShardedParameters::onGradReady(std::size_t param)
{
    if (!m_enabled && m_stage != Stage::Parameters)
        return;
    Bucket &b = m_buckets[m_bucketOf[param]];
    if (--b.pending == 0)
        launch(b);
}

void ShardedParameters::pack(Bucket &b, torch::Tensor &into)
{
    for (std::size_t j = 0; j < b.params.size(); ++j) {
        const auto &g = m_params[b.params[j]].grad();
        if (!g.defined())
            throw std::runtime_error("sharded gradient sync: a parameter has no gradient after backward (a "
                                     "parameter unused in the forward pass?)");
        into.narrow(0, b.offsets[j], g.numel()).copy_(g.reshape({g.numel()}));
    }
    const auto used = b.offsets.back() + sizeOf(b.params.back()).numel;
    into.narrow(0, used, b.padded - used).zero_();
}

void ShardedParameters::launch(Bucket &b)
{
    torch::NoGradGuard ng;
    if (!m_shardGradients) {
        pack(b, b.gradFlat);
        b.reduction = {m_pg.allreduceAsync(b.gradFlat), nullptr};
    } else {
        while (m_inFlight.size() >= kMaxInFlight) {
            complete(m_buckets[m_inFlight.front()]);
            m_inFlight.pop_front();
        }
        if (b.launched) {  // stage 3, gradient accumulation: this bucket's last reduction first
            complete(b);
            m_inFlight.erase(
                std::find(m_inFlight.begin(), m_inFlight.end(), std::size_t(&b - m_buckets.data())));
        }
        b.gradFlat = torch::empty({b.padded}, b.gradSlice.options());
        pack(b, b.gradFlat);
        for (std::size_t k : b.params)
            m_params[k].mutable_grad().reset();  // only the slice is kept (stages 2 and 3)
        if (m_stage == Stage::Parameters) {
            b.gradPart = torch::empty_like(b.gradSlice);
            b.reduction = m_pg.reduceScatterAsync(b.gradFlat, b.gradPart);
        } else {
            b.reduction = m_pg.reduceScatterAsync(b.gradFlat, b.gradSlice);
        }
        m_inFlight.push_back(std::size_t(&b - m_buckets.data()));
    }
    b.launched = true;
    b.pending = b.params.size();  // the next backward counts again (stage 3: every micro-step's)
}

void ShardedParameters::complete(Bucket &b)
{
    if (!b.launched)
        return;
    b.reduction.wait();
    if (m_stage == Stage::Parameters) {
        b.gradSlice.add_(b.gradPart, 1.0 / m_world);
        b.gradPart = torch::Tensor();
    } else {
        b.gradSlice.mul_(1.0 / m_world);
    }
    if (m_shardGradients)
        b.gradFlat.reset();
    b.launched = false;
    b.ready = true;  // (pending was reset at launch: the next backward may already be counting)
}

std::vector<torch::Tensor> ShardedParameters::gradientSlices()
{
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> out;
    for (Bucket &b : m_buckets) {
        if (!m_pg.active()) {
            // One process: its slice is the whole bucket, nothing to reduce.
            pack(b, m_shardGradients ? b.gradSlice : b.gradFlat);
            if (m_stage == Stage::Parameters)
                for (std::size_t k : b.params)
                    m_params[k].mutable_grad().reset();
            b.ready = true;
        }
        complete(b);
        if (!b.ready)
            throw std::runtime_error("sharded gradient sync: a bucket was not complete after backward (a "
                                     "parameter unused in the forward pass?)");
        b.ready = false;
        out.push_back(b.gradSlice);
    }
    m_inFlight.clear();
    return out;
}

std::vector<torch::Tensor> ShardedParameters::parameterSlices() const
{
    std::vector<torch::Tensor> out;
    for (const Bucket &b : m_buckets)
        out.push_back(m_stage == Stage::Parameters ? b.paramSlice
                                                   : b.flat.narrow(0, b.slice * m_rank, b.slice));
    return out;
}

void ShardedParameters::gatherParameters()
{
    if (!m_pg.active() || m_stage == Stage::Parameters)
        return;
    torch::NoGradGuard ng;
    std::deque<c10::intrusive_ptr<c10d::Work>> works;
    for (Bucket &b : m_buckets) {
        if (works.size() >= kMaxInFlight) {
            works.front()->wait();
            works.pop_front();
        }
        auto mine = b.flat.narrow(0, b.slice * m_rank, b.slice).clone();
        works.push_back(m_pg.allgatherAsync(b.flat, mine));
    }
    for (auto &w : works)
        w->wait();
}

void ShardedParameters::zeroGradients()
{
    if (m_stage == Stage::Parameters)
        for (Bucket &b : m_buckets)
            b.gradSlice.zero_();
    for (auto &p : m_params)
        if (p.grad().defined())
            p.mutable_grad().zero_();
}

std::vector<torch::Tensor> ShardedParameters::gatherPerParameter(const std::vector<torch::Tensor> &slices,
                                                                 bool wanted)
{
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> out(m_params.size());
    for (std::size_t i = 0; i < m_buckets.size(); ++i) {
        const Bucket &b = m_buckets[i];
        auto full = torch::empty({b.padded}, slices[i].options());
        auto mine = slices[i].contiguous();
        if (m_pg.active())
            m_pg.allgatherAsync(full, mine)->wait();
        else
            full.copy_(mine);
        if (!wanted)
            continue;
        for (std::size_t j = 0; j < b.params.size(); ++j) {
            const Size &size = sizeOf(b.params[j]);
            out[b.params[j]] = full.narrow(0, b.offsets[j], size.numel).view(size.shape).clone();
        }
    }
    return out;
}

std::vector<torch::Tensor> ShardedParameters::slicesOf(const std::vector<torch::Tensor> &whole) const
{
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> out;
    for (const Bucket &b : m_buckets) {
        auto full = torch::zeros({b.padded}, b.gradSlice.options());
        for (std::size_t j = 0; j < b.params.size(); ++j) {
            const auto &w = whole[b.params[j]];
            full.narrow(0, b.offsets[j], w.numel()).copy_(w.reshape({w.numel()}));
        }
        out.push_back(full.narrow(0, b.slice * m_rank, b.slice).clone());
    }
    return out;
}

std::vector<std::int64_t> ShardedParameters::sliceSizes() const
{
    std::vector<std::int64_t> out;
    for (const Bucket &b : m_buckets)
        out.push_back(b.slice);
    return out;
}

}  // namespace orrery::train
