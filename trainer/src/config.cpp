// SPDX-License-Identifier: GPL-3.0-or-later
#include "config.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "shards.h"

namespace orrery::train {

namespace {

using I = std::int64_t;

// The defaults are the `tiny` model on the bundled moving-shapes data: trains on a laptop CPU.
// resources/configs/{tiny,small,base,large}.yaml set the other sizes.
std::vector<KeySpec> makeSchema()
{
    const double inf = 1e300;
    return {
        {"seed",
         Type::Int,
         I(0),
         "seed of everything random (data, noise, init); per rank and step by construction",
         0,
         inf,
         {}},
        // model
        {"model.arch",
         Type::String,
         std::string("unet"),
         "unet (per-frame ResBlocks + temporal attention) | dit (video diffusion transformer: space-time "
         "patches, spatial + temporal attention blocks, adaLN-Zero)",
         0,
         0,
         {"unet", "dit"}},
        {"model.channels", Type::Int, I(32), "UNet: base channel count; DiT: hidden width", 8, 8192, {}},
        {"model.channel_mult",
         Type::String,
         std::string("1,2"),
         "channel multiplier per resolution level (comma-separated); one downsampling between levels",
         0,
         0,
         {}},
        {"model.patch",
         Type::Int,
         I(2),
         "patch size: frames are folded into p x p patches first (1, 2 or 4); 2 = 4x less compute than 1",
         1,
         4,
         {}},
        {"model.patch_t", Type::Int, I(1), "DiT: frames per patch (time x space patches)", 1, 8, {}},
        {"model.depth", Type::Int, I(4), "DiT: transformer blocks", 1, 256, {}},
        {"model.mlp_ratio", Type::Float, 4.0, "DiT: MLP hidden width / model width", 0.5, 16, {}},
        {"model.attention",
         Type::String,
         std::string("factorised"),
         "DiT: factorised (spatial then temporal self-attention per block, as Latte) | full (joint "
         "space-time attention)",
         0,
         0,
         {"factorised", "full"}},
        {"model.res_blocks", Type::Int, I(1), "ResBlocks per level", 1, 8, {}},
        {"model.attn_levels",
         Type::String,
         std::string("1"),
         "levels (0 = full resolution) with spatial self-attention (comma-separated, may be empty)",
         0,
         0,
         {}},
        {"model.temporal_layers",
         Type::Int,
         I(1),
         "temporal self-attention layers after each ResBlock, at every level (the motion module); 0 disables",
         0,
         8,
         {}},
        {"model.heads", Type::Int, I(4), "attention heads", 1, 64, {}},
        {"model.reference_frame",
         Type::Bool,
         false,
         "condition on the clip's clean first frame (image-to-video)",
         0,
         0,
         {}},
        {"model.precondition",
         Type::Bool,
         true,
         "predict the residual of the best linear estimate of v (EDM preconditioning); off: plain v",
         0,
         0,
         {}},
        {"model.local_mixing",
         Type::Bool,
         false,
         "dit: a depthwise 3x3 convolution over each frame's token grid in every block's MLP (LocalViT): "
         "neighbouring patches make one object sooner",
         0,
         0,
         {}},
        {"model.pixel_head",
         Type::Bool,
         false,
         "the output layer at pixel resolution over the features and the input clip, instead of one output "
         "per patch: edges not bound to the patch grid",
         0,
         0,
         {}},
        {"model.prediction",
         Type::String,
         std::string("v"),
         "what the network predicts: v (the velocity's residual, with model.precondition) | x0 (the clean "
         "clip, JiT's x-prediction; the velocity follows from it; the loss is the clean clip's squared error "
         "whatever train.loss_weighting says)",
         0,
         0,
         {"v", "x0"}},
        {"model.data_mean",
         Type::Float,
         -0.92,
         "pixel mean of the data in [-1, 1] (preconditioning; moving shapes: -0.92, photos: ~0)",
         -1,
         1,
         {}},
        {"model.data_std",
         Type::Float,
         0.35,
         "pixel std of the data (preconditioning; moving shapes: 0.35, photos: ~0.5)",
         0.01,
         2,
         {}},
        // data
        {"data.kind",
         Type::String,
         std::string("moving_shapes"),
         "moving_shapes (bundled, synthetic) | folder (video files under data.path; label = subfolder) | "
         "shards "
         "(WebDataset .tar shards: key.mp4 + key.json {\"label\": n} or key.txt)",
         0,
         0,
         {"moving_shapes", "folder", "shards"}},
        {"data.path",
         Type::String,
         std::string(""),
         "the folder of videos or of .tar shards; shards also as a WebDataset URL list with brace expansion "
         "(shards/train-{000000..000999}.tar) and pipe:COMMAND sources (pipe:curl -s https://host/{}.tar)",
         0,
         0,
         {}},
        {"data.read_ahead",
         Type::Int,
         I(2),
         "streamed shards: shards opened ahead of the one being read, per loader worker",
         0,
         64,
         {}},
        {"data.source_retries",
         Type::Int,
         I(2),
         "streamed shards: retries of a failed or stalled source before it is skipped (with a warning)",
         0,
         100,
         {}},
        {"data.source_timeout_s",
         Type::Float,
         60.0,
         "streamed shards: a source that sends nothing for this long is stalled",
         0.1,
         1e6,
         {}},
        {"data.stride", Type::Int, I(1), "take every n-th frame of a source video", 1, 64, {}},
        {"data.frames", Type::Int, I(8), "frames per clip (T)", 2, 256, {}},
        {"data.size", Type::Int, I(32), "frame height and width (H = W)", 8, 1024, {}},
        {"data.classes",
         Type::Int,
         I(8),
         "number of class labels (moving_shapes: 4 shapes x 2 colours)",
         1,
         100000,
         {}},
        {"data.workers", Type::Int, I(2), "data loader threads per rank", 1, 64, {}},
        {"data.prefetch", Type::Int, I(4), "batches prepared ahead per rank", 1, 64, {}},
        // optimisation
        {"optim.lr", Type::Float, 3e-4, "peak learning rate (AdamW)", 0, 10, {}},
        {"optim.weight_decay", Type::Float, 0.01, "AdamW weight decay", 0, 10, {}},
        {"optim.beta1", Type::Float, 0.9, "AdamW beta1", 0, 1, {}},
        {"optim.beta2", Type::Float, 0.99, "AdamW beta2", 0, 1, {}},
        {"optim.warmup_steps", Type::Int, I(50), "linear warmup steps, then cosine decay", 0, 1e9, {}},
        {"optim.min_lr_ratio", Type::Float, 0.1, "the cosine ends at lr x this", 0, 1, {}},
        {"optim.grad_clip", Type::Float, 1.0, "clip the global gradient norm to this (0: off)", 0, 1e9, {}},
        // training
        {"train.steps", Type::Int, I(500), "optimizer steps", 1, 1e12, {}},
        {"train.batch_size", Type::Int, I(8), "clips per rank per micro-step", 1, 1e6, {}},
        {"train.grad_accum",
         Type::Int,
         I(1),
         "micro-steps per optimizer step (no gradient sync on the others)",
         1,
         1024,
         {}},
        {"train.precision",
         Type::String,
         std::string("auto"),
         "auto (bf16 autocast on CUDA, fp32 on CPU) | fp32 | bf16",
         0,
         0,
         {"auto", "fp32", "bf16"}},
        {"train.bf16_weights",
         Type::Bool,
         false,
         "keep the weights in bf16 for the step, with an fp32 master copy that AdamW, the EMA and "
         "checkpoints use, instead of autocast's cast of every weight for every op (needs bf16 precision, "
         "dist.shard none and train.grad_accum 1)",
         0,
         0,
         {}},
        {"train.cudnn_benchmark",
         Type::Bool,
         true,
         "on CUDA, time cuDNN's convolution algorithms at the first steps and keep the fastest",
         0,
         0,
         {}},
        {"train.attention_backend",
         Type::String,
         std::string("auto"),
         "LibTorch's attention kernel: auto (its own order: flash, cuDNN, memory-efficient, math on a GPU; "
         "flash on CPU) | flash | efficient | cudnn | math. The run's tag orrery.train.attention says which "
         "ran",
         0,
         0,
         {"auto", "flash", "efficient", "cudnn", "math"}},
        {"train.fused_modulation",
         Type::String,
         std::string("auto"),
         "the DiT's LayerNorm and adaLN shift/scale as one operator with its own backward "
         "(trainer/src/fused.h): auto (off until a GPU run has measured it faster; on CPU it is as fast "
         "as LibTorch's) | on | off",
         0,
         0,
         {"auto", "on", "off"}},
        {"train.device",
         Type::String,
         std::string("auto"),
         "auto | cpu | cuda",
         0,
         0,
         {"auto", "cpu", "cuda"}},
        {"train.ema_decay",
         Type::Float,
         0.999,
         "EMA of the weights (samples and eval use the EMA)",
         0,
         1,
         {}},
        {"train.time_sampling",
         Type::String,
         std::string("uniform"),
         "flow times of training samples: uniform | logit_normal (SD3; favours the middle of the path)",
         0,
         0,
         {"uniform", "logit_normal"}},
        {"train.loss_weighting",
         Type::String,
         std::string("v"),
         "v: mean squared velocity error | unit: EDM's, the preconditioned network's error alike at every t",
         0,
         0,
         {"v", "unit"}},
        {"train.cfg_dropout",
         Type::Float,
         0.1,
         "probability of dropping the label (classifier-free guidance)",
         0,
         1,
         {}},
        {"train.activation_checkpointing",
         Type::Bool,
         false,
         "recompute each block's activations in the backward pass instead of keeping them (less memory, "
         "~1/3 more compute)",
         0,
         0,
         {}},
        {"train.log_every", Type::Int, I(10), "metrics event every M steps", 1, 1e9, {}},
        {"train.ckpt_every",
         Type::Int,
         I(100),
         "checkpoint every K steps (0: only at the end and on a signal)",
         0,
         1e9,
         {}},
        {"train.keep_checkpoints", Type::Int, I(2), "checkpoints kept (older ones deleted)", 1, 1000, {}},
        {"train.sample_every",
         Type::Int,
         I(250),
         "sample videos every K steps and at the end (0: only at the end)",
         0,
         1e9,
         {}},
        {"train.eval_every",
         Type::Int,
         I(250),
         "evaluation every K steps and at the end (0: only at the end)",
         0,
         1e9,
         {}},
        {"train.stop_check_every",
         Type::Int,
         I(10),
         "agree on the stop flag across ranks every n steps (a host sync; one process checks every step)",
         1,
         1e6,
         {}},
        {"train.system_every_s",
         Type::Float,
         15.0,
         "system metrics (CPU %, memory, GPU utilisation, memory, power) every this many seconds (0: off)",
         0,
         1e9,
         {}},
        {"train.profile_steps",
         Type::Int,
         I(0),
         "profile this many training steps with LibTorch's profiler (Kineto): each rank writes "
         "profile/rank-<R>.pt.trace.json, a Chrome trace (0: off)",
         0,
         1000,
         {}},
        {"train.profile_start",
         Type::Int,
         I(5),
         "the first profiled step (the steps before it warm up the allocator and cuDNN)",
         1,
         1e12,
         {}},
        // sampling
        {"sample.count", Type::Int, I(4), "clips per sampling", 1, 64, {}},
        {"sample.steps", Type::Int, I(16), "Euler steps of the flow sampler", 1, 1000, {}},
        {"sample.time_power",
         Type::Float,
         1.0,
         "sampler times t_i = (1 - i/steps)^p: p > 1 puts more steps near the clean end",
         0.25,
         8,
         {}},
        {"sample.clip_x0",
         Type::Bool,
         false,
         "clamp each step's predicted clean clip to [-1, 1] (DDPM's clip_denoised)",
         0,
         0,
         {}},
        {"sample.guidance", Type::Float, 2.0, "classifier-free guidance scale (1: off)", 0, 100, {}},
        {"sample.fps", Type::Int, I(8), "frames per second of the sample videos", 1, 240, {}},
        // evaluation
        {"eval.batches", Type::Int, I(2), "held-out batches for the denoising loss", 1, 1000, {}},
        {"eval.timesteps",
         Type::String,
         std::string("0.1,0.3,0.5,0.7,0.9"),
         "flow times of the held-out denoising loss",
         0,
         0,
         {}},
        // distributed
        {"dist.bucket_mb", Type::Float, 25.0, "gradient bucket size in MB (DDP's default)", 0.01, 4096, {}},
        {"dist.timeout_s", Type::Int, I(120), "collective timeout", 1, 1e6, {}},
        {"dist.health_timeout_s", Type::Int, I(30), "start-up health check timeout", 1, 1e6, {}},
        {"dist.process_group",
         Type::String,
         std::string("auto"),
         "auto (collectives only with several processes) | always (NCCL/Gloo even in one process: "
         "checks the distributed path on one GPU)",
         0,
         0,
         {"auto", "always"}},
        {"dist.shard",
         Type::String,
         std::string("none"),
         "sharded data parallel (ZeRO): none | optimizer (stage 1: optimizer state) | gradients (stage 2: "
         "+ gradients) | parameters (stage 3: + parameters; the DiT with activation checkpointing), each "
         "partitioned across the ranks",
         0,
         0,
         {"none", "optimizer", "gradients", "parameters"}},
    };
}

const char *typeName(Type t)
{
    switch (t) {
    case Type::Int:
        return "int";
    case Type::Float:
        return "float";
    case Type::Bool:
        return "bool";
    case Type::String:
        return "string";
    }
    return "?";
}

const KeySpec *findSpec(const std::string &key)
{
    for (const KeySpec &k : schema())
        if (k.key == key)
            return &k;
    return nullptr;
}

// The known key closest to `key` (edit distance), to suggest in an error.
std::string closest(const std::string &key)
{
    auto distance = [](const std::string &a, const std::string &b) {
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j)
            row[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t prev = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t cur = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
                prev = cur;
            }
        }
        return row[b.size()];
    };
    std::string best;
    std::size_t bestD = 1000;
    for (const KeySpec &k : schema()) {
        const std::size_t d = distance(key, k.key);
        if (d < bestD) {
            bestD = d;
            best = k.key;
        }
    }
    return bestD <= std::max<std::size_t>(3, key.size() / 3) ? best : std::string();
}

std::string trim(std::string s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

const std::vector<KeySpec> &schema()
{
    static const std::vector<KeySpec> s = makeSchema();
    return s;
}

std::string valueText(const Value &v)
{
    if (const auto *i = std::get_if<I>(&v))
        return std::to_string(*i);
    if (const auto *d = std::get_if<double>(&v)) {
        // The shortest text that reads back as the same double (0.9, not 0.90000000000000002).
        char buf[64];
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
        return ec == std::errc() ? std::string(buf, end) : std::to_string(*d);
    }
    if (const auto *b = std::get_if<bool>(&v))
        return *b ? "true" : "false";
    return std::get<std::string>(v);
}

Config::Config()
{
    for (const KeySpec &k : schema())
        m_values[k.key] = k.fallback;
}

std::int64_t Config::i(const std::string &key) const
{
    return std::get<I>(m_values.at(key));
}
double Config::f(const std::string &key) const
{
    return std::get<double>(m_values.at(key));
}
bool Config::b(const std::string &key) const
{
    return std::get<bool>(m_values.at(key));
}
const std::string &Config::s(const std::string &key) const
{
    return std::get<std::string>(m_values.at(key));
}

std::vector<double> Config::list(const std::string &key) const
{
    std::vector<double> out;
    std::stringstream in(s(key));
    std::string item;
    while (std::getline(in, item, ','))
        if (!trim(item).empty())
            out.push_back(std::stod(trim(item)));
    return out;
}

void Config::set(const std::string &key, const std::string &textIn, const std::string &origin)
{
    const KeySpec *spec = findSpec(key);
    if (!spec) {
        const std::string hint = closest(key);
        throw ConfigError(origin + ": unknown key '" + key + "'" +
                          (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                          "; `orrery-train --print-schema` lists them all");
    }
    const std::string text = trim(textIn);
    auto bad = [&](const std::string &why) {
        return ConfigError(origin + ": " + key + " = '" + text + "': " + why);
    };
    switch (spec->type) {
    case Type::Int: {
        I v = 0;
        double d = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || p != text.data() + text.size()) {
            // 1e3 is an integer too (W&B sweeps write them so).
            const auto [p2, ec2] = std::from_chars(text.data(), text.data() + text.size(), d);
            if (ec2 != std::errc() || p2 != text.data() + text.size() || d != std::floor(d) ||
                std::abs(d) > 9e15)
                throw bad("expected an integer");
            v = I(d);
        }
        if (double(v) < spec->min || double(v) > spec->max)
            throw bad("must be between " + valueText(I(spec->min)) + " and " +
                      valueText(I(std::min(spec->max, 9e18))));
        m_values[key] = v;
        break;
    }
    case Type::Float: {
        double v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
            throw bad("expected a number");
        if (v < spec->min || v > spec->max)
            throw bad("must be between " + valueText(spec->min) + " and " + valueText(spec->max));
        m_values[key] = v;
        break;
    }
    case Type::Bool: {
        std::string l = text;
        std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (l == "true" || l == "yes" || l == "on" || l == "1")
            m_values[key] = true;
        else if (l == "false" || l == "no" || l == "off" || l == "0")
            m_values[key] = false;
        else
            throw bad("expected true or false");
        break;
    }
    case Type::String:
        if (!spec->choices.empty() &&
            std::find(spec->choices.begin(), spec->choices.end(), text) == spec->choices.end()) {
            std::string all;
            for (const std::string &c : spec->choices)
                all += (all.empty() ? "" : ", ") + c;
            throw bad("must be one of: " + all);
        }
        if (key == "model.channel_mult" || key == "model.attn_levels" || key == "eval.timesteps") {
            std::stringstream in(text);
            std::string item;
            while (std::getline(in, item, ',')) {
                double d = 0;
                const std::string t = trim(item);
                const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
                if (t.empty() || ec != std::errc() || p != t.data() + t.size() || d < 0)
                    throw bad("expected comma-separated non-negative numbers");
            }
            if (key == "model.channel_mult" && text.empty())
                throw bad("needs at least one level");
        }
        m_values[key] = text;
        break;
    }
}

std::map<std::string, std::string> Config::flat() const
{
    std::map<std::string, std::string> out;
    for (const auto &[k, v] : m_values)
        out[k] = valueText(v);
    return out;
}

std::string Config::toYaml() const
{
    YAML::Emitter e;
    e << YAML::BeginMap;
    std::string section;
    for (const KeySpec &k : schema()) {
        const auto dot = k.key.find('.');
        const std::string head = dot == std::string::npos ? std::string() : k.key.substr(0, dot);
        const std::string leaf = dot == std::string::npos ? k.key : k.key.substr(dot + 1);
        if (head != section) {
            if (!section.empty())
                e << YAML::EndMap;
            section = head;
            if (!section.empty())
                e << YAML::Key << section << YAML::Value << YAML::BeginMap;
        }
        const Value &v = m_values.at(k.key);
        e << YAML::Key << leaf << YAML::Value;
        if (const auto *i = std::get_if<I>(&v))
            e << *i;
        else if (const auto *d = std::get_if<double>(&v))
            e << valueText(*d);
        else if (const auto *b = std::get_if<bool>(&v))
            e << *b;
        else
            e << YAML::DoubleQuoted << std::get<std::string>(v);
    }
    if (!section.empty())
        e << YAML::EndMap;
    e << YAML::EndMap;
    return std::string(e.c_str()) + "\n";
}

namespace {

void walk(const YAML::Node &node, const std::string &prefix, const std::string &path, Config &cfg)
{
    for (const auto &item : node) {
        const std::string key = prefix.empty() ? item.first.Scalar() : prefix + "." + item.first.Scalar();
        const std::string where = path + ":" + std::to_string(item.first.Mark().line + 1);
        if (item.second.IsMap())
            walk(item.second, key, path, cfg);
        else if (item.second.IsScalar())
            cfg.set(key, item.second.Scalar(), where);
        else if (item.second.IsSequence()) {
            std::string joined;
            for (const auto &x : item.second) {
                if (!x.IsScalar())
                    throw ConfigError(where + ": " + key + ": a list of plain values was expected");
                joined += (joined.empty() ? "" : ",") + x.Scalar();
            }
            cfg.set(key, joined, where);
        } else if (item.second.IsNull())
            throw ConfigError(where + ": " + key + " has no value");
    }
}

// The DiT cuts clips into whole space-time patches and its width into whole heads; its sin-cos
// positions give half the width to rows and half to columns, each half cos + sin.
void checkDiTShapes(const Config &cfg)
{
    const I size = cfg.i("data.size"), patch = cfg.i("model.patch");
    const I frames = cfg.i("data.frames"), patchT = cfg.i("model.patch_t");
    const I width = cfg.i("model.channels"), heads = cfg.i("model.heads");
    if (size % patch != 0)
        throw ConfigError("data.size " + std::to_string(size) + " must be a multiple of model.patch " +
                          std::to_string(patch) + " (the DiT's patches)");
    if (frames % patchT != 0)
        throw ConfigError("data.frames " + std::to_string(frames) + " must be a multiple of model.patch_t " +
                          std::to_string(patchT) + " (the DiT's frames per patch)");
    if (width % heads != 0)
        throw ConfigError("model.channels " + std::to_string(width) + " must be a multiple of model.heads " +
                          std::to_string(heads) + " (the DiT's width is split into heads)");
    if (width % 4 != 0)
        throw ConfigError("model.channels " + std::to_string(width) +
                          " must be a multiple of 4 (the DiT's sin-cos positions)");
}

}  // namespace

Config loadConfig(const std::string &path, const std::vector<std::string> &overrides)
{
    Config cfg;
    if (!path.empty()) {
        YAML::Node root;
        try {
            root = YAML::LoadFile(path);
        } catch (const YAML::BadFile &) {
            throw ConfigError(path + ": cannot read the file");
        } catch (const YAML::Exception &e) {
            throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
        }
        if (!root.IsNull() && !root.IsMap())
            throw ConfigError(path + ": the config must be a YAML mapping of keys to values");
        if (root.IsMap())
            walk(root, {}, path, cfg);
    }
    for (const std::string &o : overrides) {
        const auto eq = o.find('=');
        if (eq == std::string::npos || eq == 0)
            throw ConfigError("--set " + o + ": expected key=value");
        cfg.set(trim(o.substr(0, eq)), o.substr(eq + 1), "--set");
    }
    // Cross-key checks.
    const auto mult = cfg.list("model.channel_mult");
    for (double l : cfg.list("model.attn_levels"))
        if (l >= double(mult.size()))
            throw ConfigError("model.attn_levels: level " + valueText(I(l)) +
                              " does not exist (model.channel_mult has " + std::to_string(mult.size()) +
                              " levels)");
    if (cfg.s("data.kind") != "moving_shapes" && cfg.s("data.path").empty())
        throw ConfigError("data.kind " + cfg.s("data.kind") + " needs data.path");
    if (cfg.s("data.kind") == "shards" && isShardList(cfg.s("data.path"))) {
        try {
            expandSources(cfg.s("data.path"));
        } catch (const std::invalid_argument &e) {
            throw ConfigError(std::string("data.path: ") + e.what());
        }
    }
    if (cfg.b("train.bf16_weights") && cfg.s("train.precision") == "fp32")
        throw ConfigError("train.bf16_weights keeps bf16 weights for bf16 autocast: it needs train.precision "
                          "bf16 (or auto on a GPU), not fp32");
    if (cfg.b("train.bf16_weights") && cfg.i("train.grad_accum") > 1)
        throw ConfigError(
            "train.bf16_weights with train.grad_accum " + std::to_string(cfg.i("train.grad_accum")) +
            ": the micro-steps' gradients would be summed in bf16; use train.grad_accum 1 or fp32 "
            "weights");
    if (cfg.b("train.bf16_weights") && cfg.s("dist.shard") != "none")
        throw ConfigError("train.bf16_weights: the fp32 master copy is kept whole, with dist.shard none; "
                          "dist.shard " +
                          cfg.s("dist.shard") + " is not supported with it yet");
    if (cfg.s("dist.shard") == "parameters" &&
        (cfg.s("model.arch") != "dit" || !cfg.b("train.activation_checkpointing")))
        throw ConfigError("dist.shard: parameters (ZeRO stage 3) gathers each block's parameters around its "
                          "forward and its recomputed backward: it needs model.arch dit and "
                          "train.activation_checkpointing: true");
    const I size = cfg.i("data.size");
    if (cfg.s("model.arch") == "dit") {
        checkDiTShapes(cfg);
        return cfg;
    }
    const I divisor = (I(1) << (mult.size() - 1)) * cfg.i("model.patch");
    if (size % divisor != 0)
        throw ConfigError("data.size " + std::to_string(size) + " must be divisible by " +
                          std::to_string(divisor) +
                          " (model.patch x one halving per level of model.channel_mult)");
    if (cfg.i("model.channels") % 8 != 0)
        throw ConfigError("model.channels must be a multiple of 8 (GroupNorm groups)");
    return cfg;
}

std::string formatSchema(bool json)
{
    if (json) {
        nlohmann::json a = nlohmann::json::array();
        for (const KeySpec &k : schema()) {
            nlohmann::json o{{"key", k.key}, {"type", typeName(k.type)}, {"meaning", k.meaning}};
            std::visit([&](const auto &v) { o["default"] = v; }, k.fallback);
            if (k.type == Type::Int || k.type == Type::Float) {
                if (k.min > -1e299)
                    o["min"] = k.min;
                if (k.max < 1e299)
                    o["max"] = k.max;
            }
            if (!k.choices.empty())
                o["choices"] = k.choices;
            a.push_back(o);
        }
        return a.dump(1) + "\n";
    }
    std::string out;
    for (const KeySpec &k : schema()) {
        std::string line = k.key;
        line.resize(std::max<std::size_t>(line.size() + 1, 24), ' ');
        std::string t = typeName(k.type);
        t.resize(8, ' ');
        std::string d = valueText(k.fallback);
        d.resize(std::max<std::size_t>(d.size() + 1, 22), ' ');
        out += line + t + d + k.meaning + "\n";
    }
    return out;
}

}  // namespace orrery::train
