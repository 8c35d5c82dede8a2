// SPDX-License-Identifier: GPL-3.0-or-later
#include "checkpoint.h"

#include "optimizer.h"
#include "runlog.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace orrery::train {

namespace fs = std::filesystem;

namespace {

// A sharded run's parameters are views into flat buckets (shard.h): write a parameter's own
// elements, not its bucket's whole storage.
torch::Tensor compact(const torch::Tensor &t)
{
    auto c = t.detach().cpu();
    return c.nbytes() == c.storage().nbytes() ? c : c.clone();
}

}  // namespace

std::string Checkpointer::name(std::int64_t step)
{
    return "step-" + std::to_string(step) + ".ckpt";
}

std::optional<fs::path> Checkpointer::latest() const
{
    std::ifstream in(dir / "latest");
    std::string file;
    if (in && std::getline(in, file) && !file.empty() && fs::exists(dir / file))
        return dir / file;
    return std::nullopt;
}

void Checkpointer::save(std::int64_t step, DenoiserImpl &model, DenoiserImpl &ema, Optimizer &optimizer,
                        std::uint64_t seed, int world, bool lead)
{
    torch::serialize::OutputArchive a;
    optimizer.save(lead ? &a : nullptr);
    // Stage 3: the weights whole on every rank while the lead writes them (consolidated).
    optimizer.materialize();
    struct Release {
        Optimizer &o;
        ~Release() { o.release(); }
    } release{optimizer};
    if (!lead)
        return;
    for (const auto &p : model.named_parameters())
        a.write("model/" + p.key(), compact(p.value()));
    for (const auto &p : model.named_buffers())
        a.write("model_buf/" + p.key(), p.value().cpu());
    for (const auto &p : ema.named_parameters())
        a.write("ema/" + p.key(), p.value().detach().cpu());
    a.write("meta/step", torch::tensor(step));
    a.write("meta/seed", torch::tensor(std::int64_t(seed)));
    a.write("meta/world_size", torch::tensor(std::int64_t(world)));
    std::ostringstream bytes;
    a.save_to(bytes);
    writeFileAtomically((dir / name(step)).string(), bytes.str());
    writeFileAtomically((dir / "latest").string(), name(step) + "\n");
    // Keep the newest `keep`.
    std::vector<std::pair<std::int64_t, fs::path>> all;
    static const std::regex re(R"(step-(\d+)\.ckpt)");
    for (const auto &e : fs::directory_iterator(dir)) {
        std::smatch m;
        const std::string f = e.path().filename().string();
        if (std::regex_match(f, m, re))
            all.emplace_back(std::stoll(m[1]), e.path());
    }
    std::sort(all.begin(), all.end());
    for (std::size_t i = 0; i + std::size_t(keep) < all.size(); ++i)
        fs::remove(all[i].second);
}

std::int64_t Checkpointer::load(const fs::path &file, DenoiserImpl &model, DenoiserImpl &ema,
                                Optimizer &optimizer)
{
    torch::serialize::InputArchive a;
    a.load_from(file.string());
    torch::NoGradGuard ng;
    optimizer.materialize();  // stage 3: read whole, then each rank keeps its slices
    for (auto &p : model.named_parameters())
        readCheckpointTensor(a, file.string(), "model/" + p.key(), p.value());
    for (auto &p : model.named_buffers())
        readCheckpointTensor(a, file.string(), "model_buf/" + p.key(), p.value());
    for (auto &p : ema.named_parameters())
        readCheckpointTensor(a, file.string(), "ema/" + p.key(), p.value());
    optimizer.load(a, file.string());
    optimizer.release(/*adopt=*/true);
    torch::Tensor step;
    a.read("meta/step", step);
    return step.item<std::int64_t>();
}

std::int64_t Checkpointer::loadEma(const fs::path &file, DenoiserImpl &ema)
{
    torch::serialize::InputArchive a;
    a.load_from(file.string());
    torch::NoGradGuard ng;
    for (auto &p : ema.named_parameters())
        readCheckpointTensor(a, file.string(), "ema/" + p.key(), p.value());
    for (auto &p : ema.named_buffers())
        readCheckpointTensor(a, file.string(), "model_buf/" + p.key(), p.value());
    torch::Tensor step;
    a.read("meta/step", step);
    return step.item<std::int64_t>();
}

void readCheckpointTensor(torch::serialize::InputArchive &in, const std::string &file, const std::string &key,
                          torch::Tensor &into)
{
    torch::Tensor t;
    if (!in.try_read(key, t))
        throw std::runtime_error(file + ": no '" + key + "' (a checkpoint of another model?)");
    if (t.sizes() != into.sizes())
        throw std::runtime_error(file + ": '" + key + "' has another shape (a different config?)");
    into.copy_(t);
}

}  // namespace orrery::train
