// SPDX-License-Identifier: GPL-3.0-or-later
#include "train.h"

#include "checkpoint.h"
#include "data.h"
#include "distributed.h"
#include "evaluate.h"
#include "faults.h"
#include "flow.h"
#include "fused.h"
#include "model.h"
#include "optimizer.h"
#include "phases.h"
#include "profile.h"
#include "runlog.h"
#include "sysmetrics.h"
#include "video.h"
#include "videodata.h"

#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <torch/torch.h>
#if ORRERY_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>

#include <malloc.h>
#include <optional>
#include <sys/resource.h>

namespace orrery::train {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_signal{0};
extern "C" void onStopSignal(int sig)
{
    g_signal.store(sig);
}

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This process's peak resident memory (what a CPU rank's memory budget is about).
double peakRssBytes()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) * 1024.0;  // Linux: kilobytes
}

// A training step allocates and frees the same large tensors every step. glibc's malloc gives
// large blocks back to the kernel (mmap above its threshold, trimming the heap's top) and faults
// them in again the next step: measured with perf on dit-tiny (CPU), 11% of the step in the
// kernel against the PyTorch peer's 5%. Freed blocks up to 64 MB stay in the heap and only more
// than 256 MB free at its top is trimmed: 129 → 119 ms a step, peak RSS 0.60 → 0.62 GB
// (bench/RESULTS.md). A user's own MALLOC_* or GLIBC_TUNABLES settings win.
//
// Not with dist.shard parameters: ZeRO stage 3 allocates and frees a block's parameters and
// gradients several times a step, and memory is what it is for. Kept in the heap they fragment it:
// a DiT of depth 8, width 512 at 4 ranks peaked at 1.66 GB a rank so, 1.20 GB with glibc's
// defaults (whose threshold drifts up), 0.87 GB with blocks of 1 MB and up always from mmap
// (bench/RESULTS.md, "ZeRO stage 3").
void keepFreedMemory(const Config &c)
{
    for (const char *own : {"GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"})
        if (std::getenv(own))
            return;
    if (c.s("dist.shard") == "parameters") {
        // Blocks of 1 MB and up from mmap, given back when freed; fixed, as glibc would otherwise
        // raise the threshold to the largest block freed so far (up to 32 MB) and heap them.
        mallopt(M_MMAP_THRESHOLD, 1 << 20);
        return;
    }
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// Linear warmup, then cosine from lr to lr * min_ratio at the last step.
double learningRate(const Config &c, std::int64_t step)
{
    const double peak = c.f("optim.lr");
    const auto warmup = c.i("optim.warmup_steps"), total = c.i("train.steps");
    if (warmup > 0 && step <= warmup)
        return peak * double(step) / double(warmup);
    const double progress = total > warmup ? double(step - warmup) / double(total - warmup) : 1.0;
    const double floor = peak * c.f("optim.min_lr_ratio");
    return floor + (peak - floor) * 0.5 * (1 + std::cos(M_PI * std::min(1.0, progress)));
}

ModelOptions modelOptions(const Config &c)
{
    ModelOptions o;
    o.arch = c.s("model.arch");
    o.channels = c.i("model.channels");
    o.mult.clear();
    for (double m : c.list("model.channel_mult"))
        o.mult.push_back(std::int64_t(m));
    o.resBlocks = c.i("model.res_blocks");
    o.attnLevels.clear();
    for (double l : c.list("model.attn_levels"))
        o.attnLevels.insert(std::int64_t(l));
    o.temporalLayers = c.i("model.temporal_layers");
    o.heads = c.i("model.heads");
    o.classes = c.i("data.classes");
    o.frames = c.i("data.frames");
    o.patch = c.i("model.patch");
    o.referenceFrame = c.b("model.reference_frame");
    o.precondition = c.b("model.precondition");
    o.predictX0 = c.s("model.prediction") == "x0";
    o.dataMean = c.f("model.data_mean");
    o.dataStd = c.f("model.data_std");
    o.depth = c.i("model.depth");
    o.patchT = c.i("model.patch_t");
    o.mlpRatio = c.f("model.mlp_ratio");
    o.fullAttention = c.s("model.attention") == "full";
    o.localMixing = c.b("model.local_mixing");
    o.pixelHead = c.b("model.pixel_head");
    o.activationCheckpointing = c.b("train.activation_checkpointing");
    return o;
}

// train.device: CUDA where asked for, or where "auto" finds it; an error where asked but absent.
bool useCuda(const Config &c)
{
    const std::string want = c.s("train.device");
    const bool cuda = want == "cuda" || (want == "auto" && torch::cuda::is_available());
    if (cuda && !torch::cuda::is_available())
        throw std::runtime_error("train.device is cuda but no CUDA device is available");
    return cuda;
}

ShapesSpec shapesSpec(const Config &c)
{
    return {c.i("data.frames"), c.i("data.size"), c.i("data.classes"), std::uint64_t(c.i("seed")),
            c.s("train.time_sampling") == "logit_normal"};
}

// Real video (data.kind folder or shards): this rank's files; nullptr for the moving shapes.
// Streamed shards start a fresh epoch whose order follows from (seed, firstSequence).
std::shared_ptr<VideoDataset> videoDataset(const Config &c, int rank, int world,
                                           std::int64_t firstSequence = 0)
{
    if (c.s("data.kind") == "moving_shapes")
        return nullptr;
    StreamOptions stream;
    stream.readAhead = int(c.i("data.read_ahead"));
    stream.retries = int(c.i("data.source_retries"));
    stream.timeoutS = c.f("data.source_timeout_s");
    stream.seed = std::uint64_t(c.i("seed"));
    stream.firstSequence = firstSequence;
    return std::make_shared<VideoDataset>(c.s("data.kind"), c.s("data.path"), c.i("data.frames"),
                                          c.i("data.size"), c.i("data.stride"), c.i("data.classes"), rank,
                                          world, int(c.i("data.workers")), stream);
}

ClipSource clipSource(const std::shared_ptr<VideoDataset> &videos)
{
    if (!videos)
        return {};
    return [videos](std::uint64_t index) { return videos->clip(index); };
}

}  // namespace

torch::Tensor sampleFlow(DenoiserImpl &model, const torch::Tensor &noise, const torch::Tensor &labels,
                         std::int64_t nullLabel, int steps, double guidance, double timePower, bool clipX0,
                         const torch::Tensor &reference)
{
    torch::NoGradGuard ng;
    auto x = noise;
    const auto b = noise.size(0);
    const auto both = torch::cat({labels, torch::full_like(labels, nullLabel)});
    const auto ref = reference.defined() ? torch::cat({reference, reference}) : torch::Tensor();
    // Guidance 1 is the conditional velocity alone: no unconditional half to compute.
    const bool guided = guidance != 1.0;
    for (int i = 0; i < steps; ++i) {
        const double t = std::pow(1.0 - double(i) / steps, timePower),
                     tNext = std::pow(1.0 - double(i + 1) / steps, timePower);
        torch::Tensor v;
        if (guided) {
            const auto tt = torch::full({2 * b}, t, noise.options());
            const auto v2 = model.forward(torch::cat({x, x}), tt, both, ref).to(x.dtype());
            const auto vc = v2.narrow(0, 0, b), vu = v2.narrow(0, b, b);
            v = vu + guidance * (vc - vu);
        } else {
            v = model.forward(x, torch::full({b}, t, noise.options()), labels, reference).to(x.dtype());
        }
        if (clipX0) {
            // The clean clip this velocity points at, x0 = x_t - t v, kept within the data's range
            // (DDPM's clip_denoised; guidance overshoots it).
            const auto x0 = (x - t * v).clamp(-1.0, 1.0);
            v = (x - x0) / t;
        }
        x = x + (tNext - t) * v;
    }
    return x;
}

std::int64_t modelParameterCount(const Config &config)
{
    torch::NoGradGuard ng;
    return parameterCount(*makeDenoiser(modelOptions(config)));
}

std::string evaluateCheckpoint(const Config &c, const std::string &path, const std::string &samplesDir)
{
    fs::path file = path;
    if (fs::is_directory(file)) {
        const Checkpointer dir{fs::exists(file / "checkpoints") ? file / "checkpoints" : file, 0};
        const auto latest = dir.latest();
        if (!latest)
            throw std::runtime_error(path + ": no checkpoint (no checkpoints/latest)");
        file = *latest;
    } else if (!fs::exists(file)) {
        throw std::runtime_error(path + ": no such file");
    }
    const torch::Device device = useCuda(c) ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    configureKernels(c, device);
    const Denoiser ema = makeDenoiser(modelOptions(c));
    const std::int64_t step = Checkpointer::loadEma(file, *ema);
    ema->to(device);
    ema->eval();

    Evaluator evaluator(c, shapesSpec(c), device, clipSource(videoDataset(c, 0, 1)));
    nlohmann::json out{{"checkpoint", file.string()}, {"step", step}};
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto &[k, v] : evaluator.evaluate(*ema))
        metrics[k] = v;
    out["metrics"] = metrics;
    if (!samplesDir.empty()) {
        fs::create_directories(samplesDir);
        const auto generated = evaluator.samples(*ema, c.i("sample.count"));
        const std::string video = writeSamples(samplesDir, step, generated, int(c.i("sample.fps")), 4);
        out["samples"] = {(fs::path(samplesDir) / video).string(),
                          (fs::path(samplesDir) / ("step-" + std::to_string(step) + ".png")).string()};
    }
    return out.dump(1) + "\n";
}

std::string inspectCheckpoint(const std::string &path)
{
    if (!fs::exists(path))
        throw std::runtime_error(path + ": no such file");
    torch::serialize::InputArchive a;
    a.load_from(path);
    nlohmann::json out{{"file", path}}, tensors = nlohmann::json::object();
    for (const std::string &key : a.keys()) {
        torch::Tensor t;
        if (!a.try_read(key, t))
            continue;
        if (key.rfind("meta/", 0) == 0) {
            out[key.substr(5)] = t.item<std::int64_t>();
            continue;
        }
        const auto f = t.to(torch::kFloat64);
        tensors[key] = {{"shape", t.sizes().vec()},
                        {"dtype", c10::toString(t.scalar_type())},
                        {"sum", f.sum().item<double>()},
                        {"norm", f.norm().item<double>()}};
    }
    out["tensors"] = tensors;
    return out.dump(1) + "\n";
}

int runTraining(const RunOptions &opt)
{
    PhaseClock clock;  // first: start-up counts from the process's start
    const Config &c = opt.config;
    keepFreedMemory(c);
    const Rendezvous r = rendezvousFromEnvironment();
    const bool lead = r.rank == 0;

    const bool cuda = useCuda(c);
    torch::Device device(torch::kCPU);
    if (cuda) {
        const auto index = c10::DeviceIndex(r.localRank % int(torch::cuda::device_count()));
        device = torch::Device(torch::kCUDA, index);
#if ORRERY_TORCH_CUDA
        c10::cuda::set_device(index);
#endif
        // Every step has the same shapes: let cuDNN time its convolution algorithms once.
        at::globalContext().setBenchmarkCuDNN(c.b("train.cudnn_benchmark"));
    }
    const std::string precision = c.s("train.precision");
    const bool bf16 = precision == "bf16" || (precision == "auto" && cuda);

    const fs::path runDir = opt.runDir;
    const fs::path ckptDir = runDir / "checkpoints";
    if (lead) {
        fs::create_directories(ckptDir);
        fs::create_directories(runDir / "samples");
        writeFileAtomically((runDir / "config.resolved.yaml").string(), c.toYaml());
    }
    RunLog log(runDir.string(), lead);
    // Every rank that fails says so, naming its node (faults.h); exit.json takes the first.
    const std::string node = nodeName();
    armRankFaults(runDir.string(), r.rank, r.worldSize, node);
    std::int64_t step = 0;
    // The step this process resumed from and the step of its newest checkpoint: what a reader of
    // the `phases` events needs to count the steps a later attempt redoes (docs/trainer.md).
    std::int64_t resumeStep = 0, checkpointStep = 0;
    auto writePhases = [&] { log.phases(step, clock.values(resumeStep, checkpointStep)); };
    // Device work is queued, so a phase's own kernels may still run when the next phase begins:
    // sync where the phase changes (a checkpoint or an evaluation waits for the device anyway),
    // never between training steps (STYLE.md 10). Within training, the cumulative train_s of a
    // `phases` event is exact because it is written after the log window's loss read, a sync.
    auto enter = [&](PhaseClock::Phase p) {
#if ORRERY_TORCH_CUDA
        if (cuda)
            torch::cuda::synchronize();
#endif
        clock.enter(p);
    };
    try {
        if (c.b("train.bf16_weights") && !bf16)
            throw ConfigError("train.bf16_weights needs bf16 precision: train.precision is auto, which is "
                              "fp32 on CPU (set train.precision: bf16)");
        ProcessGroup pg(r, cuda, int(c.i("dist.timeout_s")), c.s("dist.process_group") == "always");
        pg.healthCheck(device, int(c.i("dist.health_timeout_s")));

        configureKernels(c, device);
        const auto seed = std::uint64_t(c.i("seed"));
        torch::manual_seed(seed);  // the same initial weights on every rank
        const Denoiser model = makeDenoiser(modelOptions(c));
        model->to(device);
        const std::int64_t parameters = parameterCount(*model);  // before stage 3 frees them
        Optimizer optimizer(pg, c, model->parameters(), model->parameterUnits());
        // The EMA starts as the weights. Made after the optimizer: stage 3 has cut the model into
        // slices by then, so one whole copy of the weights exists at a time, not two.
        const Denoiser ema = makeDenoiser(modelOptions(c));
        ema->to(device);
        optimizer.startEma(ema->parameters());
        ema->eval();
        if (c.s("dist.shard") == "parameters")
            model->setBlockScope({[&optimizer](int unit) { optimizer.enterUnit(unit); },
                                  [&optimizer](int unit) { optimizer.leaveUnit(unit); }});
        // One value of every rank, gathered to all (what a sharded run's memory is judged by:
        // each rank's own, not rank 0's).
        auto perRank = [&](double value) {
            auto all =
                torch::zeros({r.worldSize}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
            all[r.rank] = value;
            pg.allreduceSum(all);
            const auto host = all.cpu();
            return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + r.worldSize);
        };
        const std::vector<double> stateBytes = perRank(double(optimizer.stateBytes()));

        Checkpointer ckpt{ckptDir, int(c.i("train.keep_checkpoints"))};
        std::string resumedFrom;
        if (opt.resume) {
            // Every rank reads the shared run dir's checkpoint.
            if (const auto file = ckpt.latest()) {
                step = Checkpointer::load(*file, *model, *ema, optimizer);
                resumedFrom = file->filename().string();
                resumeStep = checkpointStep = step;
            }
        }

        const std::int64_t B = c.i("train.batch_size"), accum = c.i("train.grad_accum"),
                           total = c.i("train.steps");
        nlohmann::json params_json = nlohmann::json::object();
        for (const auto &[k, v] : c.flat())
            params_json[k] = v;
        log.start({{"world_size", r.worldSize},
                   {"nodes", std::getenv("SLURM_JOB_NUM_NODES") ? std::getenv("SLURM_JOB_NUM_NODES") : "1"},
                   {"device", cuda ? "cuda" : "cpu"},
                   {"torch", TORCH_VERSION},
                   {"precision", bf16 ? "bf16" : "fp32"},
                   {"weights", c.b("train.bf16_weights") ? "bf16, fp32 master copy" : "fp32"},
                   {"rendezvous", r.source},
                   {"process_group", pg.backend()},
                   {"gradient_buckets", optimizer.bucketCount()},
                   {"arch", model->options().arch},
                   {"shard", optimizer.sharding()},
                   {"optimizer_state_bytes", optimizer.stateBytes()},
                   {"optimizer_state_bytes_per_rank", stateBytes},
                   {"parameters", parameters},
                   {"model_state_bytes_per_rank", perRank(double(optimizer.residentBytes()))},
                   {"resumed_from", resumedFrom},
                   {"config_file", opt.configPath},
                   {"params", params_json}});
        log.status("running", resumedFrom.empty() ? "" : "resumed from " + resumedFrom);
        if (step >= total) {
            log.status("completed", "nothing to do: the checkpoint is at the last step");
            clock.enter(PhaseClock::Other);
            writePhases();
            log.exit("completed", "", step);
            return 0;
        }

        const ShapesSpec spec = shapesSpec(c);
        const auto world = std::uint64_t(r.worldSize), rank = std::uint64_t(r.rank);
        // Batch `seq` (= step * accum + micro) of this rank: samples [((seq * world) + rank) * B, + B).
        // Real video: each rank reads its own files; the sample index still fixes the clip offset,
        // the noise and the time.
        const std::shared_ptr<VideoDataset> videos = videoDataset(c, r.rank, r.worldSize, step * accum);
        const ClipSource clips = clipSource(videos);
        Loader loader(
            spec, B, c.f("train.cfg_dropout"),
            [=](std::int64_t seq) { return (std::uint64_t(seq) * world + rank) * std::uint64_t(B); },
            step * accum, int(c.i("data.workers")), int(c.i("data.prefetch")), clips);
        // Destroyed before the loader: its workers may be waiting for a streamed shard.
        struct StopStreams {
            const std::shared_ptr<VideoDataset> &videos;
            ~StopStreams()
            {
                if (videos)
                    videos->stopStreams();
            }
        } stopStreams{videos};
        Evaluator evaluator(c, spec, device, clips);

        std::signal(SIGUSR1, onStopSignal);
        std::signal(SIGTERM, onStopSignal);

        const auto logEvery = c.i("train.log_every");
        auto lossAcc = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
        auto normAcc = torch::zeros_like(lossAcc);
        double windowStart = now(), dataWait = 0;
        std::int64_t windowSteps = 0;
        const bool unitWeight = c.s("train.loss_weighting") == "unit";

        auto samplesAndEval = [&](std::int64_t at, bool samples, bool eval) {
            // Stage 3 keeps the EMA as slices: every rank takes part in making it whole.
            optimizer.materializeEma(lead);
            struct Release {
                Optimizer &o;
                ~Release() { o.releaseEma(); }
            } release{optimizer};
            if (!lead)
                return;
            const auto back = clock.current();
            if (samples) {
                enter(PhaseClock::Sample);
                const auto generated = evaluator.samples(*ema, c.i("sample.count"));
                const std::string name =
                    writeSamples((runDir / "samples").string(), at, generated, int(c.i("sample.fps")), 4);
                log.artifact(at, "samples/" + name, "video");
                log.artifact(at, "samples/step-" + std::to_string(at) + ".png", "image");
            }
            if (eval) {
                enter(PhaseClock::Eval);
                log.metrics(at, evaluator.evaluate(*ema));
            }
            enter(back);
        };
        auto checkpoint = [&](std::int64_t at) {
            const auto back = clock.current();
            enter(PhaseClock::Checkpoint);
            ckpt.save(at, *model, *ema, optimizer, seed, r.worldSize, lead);
            if (lead) {
                log.artifact(at, "checkpoints/" + Checkpointer::name(at), "checkpoint");
                log.status("checkpointed", "step " + std::to_string(at));
            }
            pg.barrier();
            checkpointStep = at;
            enter(back);
            writePhases();
        };

        // System metrics: every rank samples itself, rank 0 gathers and writes (sysmetrics.h).
        const bool single = !pg.active();
        const double systemEvery = c.f("train.system_every_s");
        double lastSystem = now();
        SystemMonitor monitor(r.node, cuda ? int(device.index()) : -1);
        if (!monitor.gpuProblem().empty())
            log.warning(monitor.gpuProblem());
        auto writeSystemMetrics = [&] {
            const int fields = SystemSample::kFields;
            auto all = torch::zeros({r.worldSize, fields});
            monitor.sample().pack(all[r.rank].data_ptr<float>());
            if (!single) {
                auto onDevice = all.to(device);
                pg.allreduceSum(onDevice);
                all = onDevice.cpu();
            }
            std::vector<SystemSample> ranks;
            for (int i = 0; i < r.worldSize; ++i)
                ranks.push_back(SystemSample::unpack(all[i].data_ptr<float>()));
            log.system(systemValues(ranks));
        };

        StepProfiler profiler(
            c.i("train.profile_start"), c.i("train.profile_steps"), cuda,
            (runDir / "profile" / ("rank-" + std::to_string(r.rank) + ".pt.trace.json")).string());

        model->train();
        enter(PhaseClock::Train);
        writePhases();  // start-up is over
        const int collectiveTimeout = int(c.i("dist.timeout_s"));
        while (step < total) {
            ++step;
            noteStep(step);
            injectedFault(node, r.rank, step, collectiveTimeout);
            const double lr = learningRate(c, step);
            profiler.beginStep(step);
            // The profile's marks (profile.h): inactive, and free, while no profiler listens.
            std::optional<at::RecordFunction> stepScope(std::in_place, at::RecordScope::USER_SCOPE);
            stepScope->before(std::string_view("orrery::step"), c10::ArrayRef<const c10::IValue>{});
            for (std::int64_t micro = 0; micro < accum; ++micro) {
                optimizer.setSyncEnabled(micro == accum - 1);  // no sync on accumulation micro-steps
                double waited = 0;
                Batch batch = [&] {
                    RECORD_USER_SCOPE("orrery::data");
                    return loader.next(&waited);
                }();
                dataWait += waited;
                const bool nb = cuda;
                const auto x0 = batch.clips.to(device, nb), noise = batch.noise.to(device, nb);
                const auto t = batch.t.to(device, nb), labels = batch.labels.to(device, nb);
                const auto ref = c.b("model.reference_frame") ? x0.select(2, 0) : torch::Tensor();
                torch::Tensor v;
                {
                    if (bf16) {
                        at::autocast::set_autocast_enabled(device.type(), true);
                        at::autocast::set_autocast_dtype(device.type(), at::kBFloat16);
                    }
                    optimizer.beforeForward();
                    RECORD_USER_SCOPE("orrery::forward");
                    v = model->forward(noisyInput(x0, noise, t), t, labels, ref);
                    if (bf16) {
                        at::autocast::set_autocast_enabled(device.type(), false);
                        at::autocast::clear_cache();
                    }
                }
                auto loss =
                    flowLoss(v, velocityTarget(x0, noise), t, model->options(), unitWeight) / double(accum);
                {
                    RECORD_USER_SCOPE("orrery::backward");
                    loss.backward();
                }
                lossAcc += loss.detach();
            }
            {
                RECORD_USER_SCOPE("orrery::optimizer");
                normAcc += optimizer.step(lr, step);
            }
            stepScope.reset();
            ++windowSteps;
            if (windowSteps == 1 && step == resumeStep + 1 && lead)
                log.tags({{"orrery.train.attention", attentionBackendsUsed()},  // what the first step ran
                          {"orrery.train.fused_modulation", fusedModulateOn() ? "on" : "off"}});
            if (profiler.endStep(step) && lead)
                log.artifact(step, fs::relative(profiler.tracePath(), runDir).string(), "profile");

            if (step % logEvery == 0 || step == total) {
                // One device sync per log window, never per step. The loss is every rank's mean.
                pg.allreduceSum(lossAcc);
                const double lossMean = lossAcc.item<double>() / double(windowSteps * r.worldSize);
                const double normMean = normAcc.item<double>() / double(windowSteps);
                const double elapsed = now() - windowStart;
                std::vector<std::pair<std::string, double>> m{
                    {"train/loss", lossMean},
                    {"train/lr", lr},
                    {"train/grad_norm", normMean},
                    {"perf/samples_per_s", double(windowSteps * B * accum * r.worldSize) / elapsed},
                    {"perf/step_time_s", elapsed / double(windowSteps)},
                    {"perf/data_wait_frac", dataWait / elapsed},
                    {"perf/peak_rss_gb", peakRssBytes() / 1e9},
                };
                if (!single) {
                    const auto rss = perRank(peakRssBytes());
                    m.push_back({"perf/peak_rss_gb_max", *std::max_element(rss.begin(), rss.end()) / 1e9});
                    m.push_back({"perf/optimizer_state_mb_max",
                                 *std::max_element(stateBytes.begin(), stateBytes.end()) / 1e6});
                }
#if ORRERY_TORCH_CUDA
                if (cuda) {
                    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
                    m.push_back({"perf/gpu_mem_gb", double(stats.allocated_bytes[0].peak) / 1e9});
                }
#endif
                log.metrics(step, m);
                writePhases();
                if (videos)
                    for (const std::string &w : videos->takeWarnings())
                        log.warning(w);
                lossAcc.zero_();
                normAcc.zero_();
                windowStart = now();
                dataWait = 0;
                windowSteps = 0;
            }
            const auto ckptEvery = c.i("train.ckpt_every"), sampleEvery = c.i("train.sample_every"),
                       evalEvery = c.i("train.eval_every");
            if (step < total) {
                if (ckptEvery && step % ckptEvery == 0)
                    checkpoint(step);
                const bool s = sampleEvery && step % sampleEvery == 0, e = evalEvery && step % evalEvery == 0;
                if (s || e) {
                    samplesAndEval(step, s, e);
                    pg.barrier();
                }
            }

            // The stop flag and whether system metrics are due. One process reads its own flag
            // every step (no device work); several agree through an allreduce every
            // train.stop_check_every steps (a host sync, so not every step), so that all stop
            // after the same step.
            const bool checkNow =
                single || step % c.i("train.stop_check_every") == 0 || step == opt.stopAtStep;
            if (checkNow && step < total) {
                bool stop = g_signal.load() != 0 || step == opt.stopAtStep;
                bool systemDue = lead && systemEvery > 0 && now() - lastSystem >= systemEvery;
                if (!single) {
                    auto flag = torch::tensor({int(stop), int(systemDue)},
                                              torch::TensorOptions().dtype(torch::kInt32).device(device));
                    pg.allreduceMax(flag);
                    const auto host = flag.cpu();
                    stop = host[0].item<int>() != 0;
                    systemDue = host[1].item<int>() != 0;
                }
                if (systemDue) {
                    writeSystemMetrics();
                    lastSystem = now();
                }
                if (stop) {
                    const int sig = g_signal.load();
                    const std::string reason = sig == SIGUSR1 ? "SIGUSR1 (pre-timeout signal)"
                        : sig == SIGTERM                      ? "SIGTERM"
                        : sig                                 ? "signal " + std::to_string(sig)
                        : step == opt.stopAtStep              ? "--stop-at-step " + std::to_string(step)
                                                              : "another rank was signalled";
                    checkpoint(step);
                    enter(PhaseClock::Other);
                    writePhases();
                    log.status("preempted", reason);
                    log.exit("preempted", reason, step);
                    return kExitPreempted;
                }
            }
        }
        enter(PhaseClock::Other);
        checkpoint(step);
        samplesAndEval(step, true, true);
        pg.barrier();
        writePhases();
        log.status("completed");
        log.exit("completed", "", step);
        return 0;
    } catch (...) {
        clock.enter(PhaseClock::Other);  // no sync: the device may be what failed
        writePhases();
        RankFault mine = currentExceptionFault();
        mine.node = node;
        mine.rank = r.rank;
        mine.step = step;
        writeRankFault(runDir.string(), mine);
        if (lead) {
            // Another rank's fault may have come first (this one's collective then failed
            // waiting for it): the run's verdict is that one's.
            // Records older than this process (less a minute for ranks that started before it)
            // are an earlier attempt's, left by a rank that failed before it could clear its own.
            FirstFault first = firstRankFault(runDir.string(), processStartUnix() - 60.0);
            if (first.ranks == 0)
                first = {mine, 1};  // its own file could not be written (a full disk)
            log.status("failed", faultReason(first.fault));
            log.exit("failed", faultReason(first.fault), first.fault.step, faultExitFields(first));
        }
        throw;
    }
}

}  // namespace orrery::train
