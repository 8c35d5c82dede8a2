// SPDX-License-Identifier: GPL-3.0-or-later
//
// When a rank fails (docs/trainer.md "When a rank fails"). Every rank that fails writes what it
// knows, faults/rank-<R>.json in the run dir: the cause, its node, its rank, the step, the time
// and the reason. An exception is caught and classified; a fatal signal (an abort, a segfault) is
// recorded by a handler armed at start-up, with the async-signal-safe calls only. The run's
// exit.json is then made from the first of them (foldRankFaults), whichever rank it was: by rank 0
// when it fails, by the --nproc launcher and by the sbatch script after the ranks are gone (rank 0
// may have been killed before it could). The runner's bad-node rule reads its cause and node.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace orrery::train {

// The data cannot be read at all (no files, none decodes, every source failed): cause "data".
class DataError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RankFault {
    // oom, cuda, nccl, comm (a collective or the rendezvous: timed out, or a peer is gone), data,
    // config, crash (a fatal signal), error (anything else); hang (firstRankFault's verdict on a
    // rank its peers waited for: never written by a rank itself).
    std::string cause;
    std::string reason;
    std::string node;
    int rank = 0;
    std::int64_t step = 0;
    double t = 0;  // unix seconds, to the millisecond
};

// The node's name as Slurm knows it (SLURMD_NODENAME: what --exclude and the suspect list take),
// else the host's.
std::string nodeName();

// The cause and reason of the exception in flight (call from a catch block); LibTorch's own
// errors without their C++ backtrace.
RankFault currentExceptionFault();

// Writes faults/rank-<R>.json in `runDir` (atomically). Never throws: a rank that is failing
// already has its own error to report.
void writeRankFault(const std::string &runDir, const RankFault &fault) noexcept;

// Rank `rank` starts: its file from an earlier attempt goes, and those of ranks that this world
// of `worldSize` does not have (rank 0 only); it answers the roll call (faults/started-<R>.json:
// its node and rank, so that it can be named if it hangs). Arms the fatal-signal handler, which writes this
// rank's fault (cause "crash", the signal's name, the step last given to noteStep) and re-raises.
void armRankFaults(const std::string &runDir, int rank, int worldSize, const std::string &node);
void noteStep(std::int64_t step) noexcept;

// The first fault of the run dir's faults/ written at `since` (unix s) or later: a rank that
// failed by itself comes before one that aborted (SIGABRT: also what NCCL's watchdog does to a
// healthy rank whose collective timed out), and that before one whose collective failed waiting
// (cause comm: its peer gone, or not there in time); then the earliest; then the lowest rank.
// Except when every fault is a collective that failed waiting and one timed out: then the rank
// they waited for, where the roll call (faults/started-<R>.json, written by armRankFaults) leaves
// only one that did not time out, is the verdict, as cause "hang" with its node.
// `ranks` is how many ranks wrote one (0: none did).
struct FirstFault {
    RankFault fault;
    std::size_t ranks = 0;
};
FirstFault firstRankFault(const std::string &runDir, double since = 0);

// What exit.json says of it besides state, reason and step: cause, node, rank, ranks_failed.
nlohmann::json faultExitFields(const FirstFault &first);

// Before an attempt's ranks start (the --nproc launcher, the sbatch script): faults/ emptied, so
// that a rank failing before it could clear its own record does not leave an earlier one standing.
void clearRankFaults(const std::string &runDir);

// After the ranks are gone (the --nproc launcher, the sbatch script): the first fault written as
// exit.json, unless there is none or exit.json already says completed or preempted. Returns
// whether it wrote.
bool foldRankFaults(const std::string &runDir);

// The exit.json reason of a fault: "rank 1 on node2: <reason>".
std::string faultReason(const RankFault &fault);

// A test hook for faults that cannot be caused on purpose on a test machine (a CUDA device
// error, an NCCL failure) and for ones that can, at a chosen place: ORRERY_TRAIN_FAULT =
// "KIND[:node=NAME][:rank=R][:step=N]" (all given must match; step default 1; colons, so that
// it passes whole through srun --export, which splits at commas). KIND: abort (a
// real SIGABRT), stall (sleeps past dist.timeout_s, so that its peers' collectives time out for
// real, then goes on), or cuda, nccl, oom, data: an exception carrying the text that layer gives
// (an uncorrectable ECC error, NCCL's unhandled system error, an allocation failure, no file that
// decodes), classified by the same code as a real one. Called before each step.
void injectedFault(const std::string &node, int rank, std::int64_t step, int timeoutSeconds);

}  // namespace orrery::train
