// SPDX-License-Identifier: GPL-3.0-or-later
//
// orrery-train: the bundled distributed video diffusion trainer (docs/trainer.md).
#include "build_info.h"
#include "config.h"
#include "faults.h"
#include "healthcheck.h"
#include "phases.h"
#include "train.h"
#include "videodata.h"

#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <netinet/in.h>
#include <spawn.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace {

constexpr const char *kUsage =
    "usage: orrery-train [--config FILE] [--set KEY=VALUE]... --run-dir DIR [--resume auto] [--nproc N]\n"
    "       orrery-train --print-schema [--json]\n"
    "       orrery-train --check-config [--config FILE] [--set KEY=VALUE]...\n"
    "       orrery-train --inspect CHECKPOINT\n"
    "       orrery-train --inspect-data [--config FILE] [--set KEY=VALUE]... [--nproc N]\n"
    "       orrery-train --evaluate CHECKPOINT|RUN_DIR [--config FILE] [--set KEY=VALUE]... [--samples-out "
    "DIR]\n"
    "       orrery-train --version [--json]\n"
    "       orrery-train --health-check --run-dir DIR [--set THRESHOLD=VALUE]...\n"
    "       orrery-train --fold-faults --run-dir DIR\n"
    "\n"
    "  --config FILE      a YAML file of settings (see --print-schema); defaults: the tiny model\n"
    "  --set KEY=VALUE    override one setting (repeatable), e.g. --set optim.lr=1e-3\n"
    "  --run-dir DIR      where events.jsonl, checkpoints/, samples/ and exit.json go\n"
    "  --resume auto      continue from the run dir's latest checkpoint if there is one\n"
    "  --nproc N          start N local ranks (Gloo on CPU, NCCL on GPUs), as torchrun would\n"
    "  --stop-at-step N   stop after step N with a checkpoint, as if preempted (for tests)\n"
    "  --print-schema     every setting with its type, default and meaning (--json for tools)\n"
    "  --check-config     validate the settings and print them resolved, then exit\n"
    "  --inspect FILE     a checkpoint's step and every tensor's shape, sum and norm (JSON)\n"
    "  --evaluate PATH    the trainer's evaluation of a checkpoint's EMA weights (a file, or a run\n"
    "                     dir's latest) with these settings, e.g. other sample.* (JSON); the\n"
    "                     settings default to the run dir's config.resolved.yaml\n"
    "  --samples-out DIR  with --evaluate: also write its sample video and contact sheet there\n"
    "  --inspect-data     streamed shards: data.path's sources, expanded, and the shards each\n"
    "                     rank (of --nproc N, default 1) and loader worker reads (JSON)\n"
    "  --inspect-clip FILE  what the data loader reads from a video file with these settings:\n"
    "                     decoder, clip shape, mean colour and range (JSON)\n"
    "  --health-check     check this node before a run (once per node): a matmul and a memory\n"
    "                     test on each GPU (or the CPU), ECC/XID through NVML, one all-reduce over\n"
    "                     every node; writes DIR/health/<node>.json, and DIR/exit.json when the\n"
    "                     node fails (exit 1). --set takes its thresholds: min_matmul_gflops,\n"
    "                     min_memory_gbps, min_busbw_gbps, memory_fraction, cpu_memory_mb,\n"
    "                     matmul_tolerance, timeout_s, max_ecc_errors\n"
    "  --fold-faults      after the ranks of a failed run are gone: exit.json from the first fault\n"
    "                     in DIR/faults/ (its cause, node and rank), unless the run completed or\n"
    "                     was preempted (what the sbatch script runs, as rank 0 may have been killed)\n"
    "  --version          LibTorch, CUDA, NCCL, Gloo and FFmpeg as built and available\n"
    "\n"
    "Distributed: under srun the ranks come from SLURM_PROCID/SLURM_NTASKS; otherwise from\n"
    "RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT. Exit status: 0 completed, 1 failed, 2 usage or config\n"
    "error, 75 preempted (a checkpoint was written; run again with --resume auto).\n";

std::vector<pid_t> g_children;
const char *const kLocalMaster = "MASTER_ADDR=127.0.0.1";

extern "C" void forwardSignal(int sig)
{
    for (pid_t p : g_children)
        ::kill(p, sig);
}

int freePort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        if (fd >= 0)
            ::close(fd);
        return 29500;
    }
    const int port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

// --nproc N: this process becomes a launcher of N ranks of itself (torchrun's job). Signals are
// forwarded to the ranks; if one rank fails the others are killed (they would otherwise wait in a
// collective until the timeout), and exit.json then names the first rank that failed (rank 0 may
// be one of those killed). Exit: 0 when all completed, 75 when they were preempted, else 1.
int launch(int nproc, const std::vector<std::string> &args, const std::string &runDir)
{
    const int port = freePort();
    std::vector<std::string> base;
    for (char **e = environ; *e; ++e) {
        const std::string_view kv(*e);
        if (kv.starts_with("RANK=") || kv.starts_with("WORLD_SIZE=") || kv.starts_with("LOCAL_RANK=") ||
            kv.starts_with("MASTER_ADDR=") || kv.starts_with("MASTER_PORT="))
            continue;
        base.emplace_back(kv);
    }
    orrery::train::clearRankFaults(runDir);  // this attempt's ranks speak for it
    std::signal(SIGTERM, forwardSignal);
    std::signal(SIGUSR1, forwardSignal);
    std::signal(SIGINT, forwardSignal);
    std::vector<char *> argv;
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    argv.push_back(self.data());
    std::vector<std::string> argCopy = args;
    for (auto &a : argCopy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for (int rank = 0; rank < nproc; ++rank) {
        std::vector<std::string> env = base;
        // N ranks on one machine share its cores (torchrun sets 1 thread; we split them).
        if (!std::getenv("OMP_NUM_THREADS"))
            env.push_back(
                "OMP_NUM_THREADS=" +
                std::to_string(std::max(1u, std::thread::hardware_concurrency() / unsigned(nproc))));
        // The ranks' start-up counts from the launcher's start (docs/trainer.md "Phase timings").
        if (!std::getenv("ORRERY_PROCESS_START"))
            env.push_back("ORRERY_PROCESS_START=" + std::to_string(orrery::train::processStartUnix()));
        env.push_back("RANK=" + std::to_string(rank));
        env.push_back("LOCAL_RANK=" + std::to_string(rank));
        env.push_back("WORLD_SIZE=" + std::to_string(nproc));
        env.emplace_back(kLocalMaster);
        env.push_back("MASTER_PORT=" + std::to_string(port));
        std::vector<char *> envp;
        for (auto &e : env)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        pid_t pid = 0;
        if (::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) {
            std::perror("orrery-train: cannot start a rank");
            forwardSignal(SIGKILL);
            return 1;
        }
        g_children.push_back(pid);
    }
    int result = 0;
    std::size_t left = g_children.size();
    while (left > 0) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        --left;
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (code == orrery::train::kExitPreempted && result == 0)
            result = code;
        else if (code != 0 && code != orrery::train::kExitPreempted &&
                 (result == 0 || result == orrery::train::kExitPreempted)) {
            result = 1;
            std::fprintf(stderr, "orrery-train: a rank (pid %d) exited with %d; stopping the others\n",
                         int(pid), code);
            for (pid_t p : g_children)
                if (p != pid)
                    ::kill(p, SIGKILL);
        }
    }
    if (result == 1)
        orrery::train::foldRankFaults(runDir);
    return result;
}

}  // namespace

int main(int argc, char **argv)
{
    using namespace orrery::train;
    bool version = false, json = false, printSchema = false, checkConfig = false, healthCheck = false,
         inspectData = false, foldFaults = false;
    std::string configPath, runDir, inspect, inspectClip, evaluate, samplesOut;
    std::vector<std::string> sets, passOn;
    int nproc = 0;
    RunOptions opt;
    // Arguments the ranks of --nproc get (push_back, not insert of an initializer_list: GCC 12
    // at -O3 warns falsely about the latter).
    auto pass = [&passOn](const char *flag, const std::string &value) {
        passOn.push_back(flag);
        passOn.push_back(value);
    };
    auto usageError = [](const std::string &what) {
        std::fprintf(stderr, "orrery-train: %s\n\n%s", what.c_str(), kUsage);
        return 2;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&](std::string &out) {
            if (i + 1 >= argc)
                return false;
            out = argv[++i];
            return true;
        };
        std::string v;
        if (arg == "--version" || arg == "-V") {
            version = true;
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (arg == "--health-check") {
            healthCheck = true;
        } else if (arg == "--fold-faults") {
            foldFaults = true;
        } else if (arg == "--print-schema") {
            printSchema = true;
        } else if (arg == "--check-config") {
            checkConfig = true;
        } else if (arg == "--inspect") {
            if (!value(inspect))
                return usageError("--inspect needs a checkpoint file");
        } else if (arg == "--evaluate") {
            if (!value(evaluate))
                return usageError("--evaluate needs a checkpoint file or a run dir");
        } else if (arg == "--samples-out") {
            if (!value(samplesOut))
                return usageError("--samples-out needs a directory");
        } else if (arg == "--inspect-data") {
            inspectData = true;
        } else if (arg == "--inspect-clip") {
            if (!value(inspectClip))
                return usageError("--inspect-clip needs a video file");
        } else if (arg == "--config") {
            if (!value(configPath))
                return usageError("--config needs a file");
            pass("--config", configPath);
        } else if (arg == "--set") {
            if (!value(v))
                return usageError("--set needs KEY=VALUE");
            sets.push_back(v);
            pass("--set", v);
        } else if (arg == "--run-dir") {
            if (!value(runDir))
                return usageError("--run-dir needs a directory");
            pass("--run-dir", runDir);
        } else if (arg == "--resume") {
            if (!value(v) || (v != "auto" && v != "never"))
                return usageError("--resume takes auto or never");
            opt.resume = v == "auto";
            pass("--resume", v);
        } else if (arg == "--nproc") {
            if (!value(v) || (nproc = std::atoi(v.c_str())) < 1 || nproc > 1024)
                return usageError("--nproc takes a number of ranks (1..1024)");
        } else if (arg == "--stop-at-step") {
            if (!value(v) || (opt.stopAtStep = std::atoll(v.c_str())) < 1)
                return usageError("--stop-at-step takes a step number");
            pass("--stop-at-step", v);
        } else {
            return usageError("unknown argument '" + std::string(arg) + "'");
        }
    }
    if (version) {
        const auto info = probeBuildInfo();
        std::fputs((json ? formatBuildInfoJson(info) : formatBuildInfo(info)).c_str(), stdout);
        return 0;
    }
    if (printSchema) {
        std::fputs(formatSchema(json).c_str(), stdout);
        return 0;
    }
    if (!inspect.empty()) {
        try {
            std::fputs(inspectCheckpoint(inspect).c_str(), stdout);
            return 0;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "orrery-train: %s\n", e.what());
            return 1;
        }
    }
    if (foldFaults) {
        if (runDir.empty())
            return usageError("--fold-faults needs --run-dir");
        orrery::train::foldRankFaults(runDir);
        return 0;
    }
    if (healthCheck) {
        // Its --set words are thresholds, not trainer settings (docs/sweeps.md "Health check").
        if (runDir.empty())
            return usageError("--health-check needs --run-dir");
        HealthThresholds thresholds;
        try {
            for (const std::string &s : sets)
                thresholds.set(s);
        } catch (const std::invalid_argument &e) {
            return usageError(e.what());
        }
        try {
            return runHealthCheck(runDir, thresholds, "auto");
        } catch (const std::exception &e) {
            std::fprintf(stderr, "orrery-train: health check: %s\n", e.what());
            return 1;
        }
    }
    if (!samplesOut.empty() && evaluate.empty())
        return usageError("--samples-out goes with --evaluate");
    if (!evaluate.empty() && configPath.empty()) {
        // The run's own settings: its model is what the checkpoint holds.
        namespace fs = std::filesystem;
        const fs::path p = evaluate;
        for (const fs::path &dir : {p, p.parent_path(), p.parent_path().parent_path()})
            if (!dir.empty() && fs::exists(dir / "config.resolved.yaml")) {
                configPath = (dir / "config.resolved.yaml").string();
                break;
            }
    }
    try {
        opt.config = loadConfig(configPath, sets);
    } catch (const ConfigError &e) {
        std::fprintf(stderr, "orrery-train: %s\n", e.what());
        return 2;
    }
    if (!evaluate.empty()) {
        try {
            std::fputs(evaluateCheckpoint(opt.config, evaluate, samplesOut).c_str(), stdout);
            return 0;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "orrery-train: %s\n", e.what());
            return 1;
        }
    }
    if (inspectData) {
        if (opt.config.s("data.kind") != "shards" || !isShardList(opt.config.s("data.path")))
            return usageError("--inspect-data needs data.kind shards and data.path a list of shards");
        std::fputs(inspectShardAssignment(opt.config.s("data.path"), std::max(nproc, 1),
                                          int(opt.config.i("data.workers")))
                       .c_str(),
                   stdout);
        return 0;
    }
    if (!inspectClip.empty()) {
        try {
            std::fputs(inspectVideoClip(inspectClip, opt.config).c_str(), stdout);
            return 0;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "orrery-train: %s: %s\n", inspectClip.c_str(), e.what());
            return 1;
        }
    }
    if (checkConfig) {
        // Building the model is the last check: what it refuses is a config error too.
        std::int64_t parameters = 0;
        try {
            parameters = modelParameterCount(opt.config);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "orrery-train: %s\n", e.what());
            return 2;
        }
        std::fputs(opt.config.toYaml().c_str(), stdout);
        std::printf("# model parameters: %lld\n", static_cast<long long>(parameters));
        return 0;
    }
    if (runDir.empty())
        return usageError("--run-dir is required");
    if (nproc > 1)
        return launch(nproc, passOn, runDir);
    opt.configPath = configPath;
    opt.runDir = runDir;
    try {
        return runTraining(opt);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "orrery-train: %s\n", e.what());
        return 1;
    }
}
