// SPDX-License-Identifier: GPL-3.0-or-later
//
// The deep health check (`orrery-train --health-check`, docs/sweeps.md "Health check"): run once
// per node before a trial's program starts. On each node it checks every visible GPU (or the CPU)
// with a short matmul compared against a float64 reference, and a memory test (a large buffer
// written with two bit patterns and read back); on GPUs it reads ECC and XID state through NVML
// where the library is present (dlopen: absent is "not available", never a failure). Then one
// all-reduce over every node of the allocation measures the bus bandwidth as nccl-tests defines it
// (busbw = algbw * 2(n-1)/n; NCCL on GPUs, Gloo on CPU). Each node writes its verdict and figures
// to <run_dir>/health/<node>.json; a node that fails also writes <run_dir>/exit.json (state
// failed, cause "health", the node named) and the process exits with status 1.
#pragma once

#include <string>
#include <vector>

namespace orrery::train {

// Limits a node must meet. A negative figure means "the default for the device" (see
// resolvedFor), so the spec can set one limit and keep the others.
struct HealthThresholds {
    double minMatmulGflops = -1;  // per device
    double minMemoryGbps = -1;  // per device
    double minBusbwGbps = -1;  // the all-reduce's bus bandwidth, per node
    double memoryFraction = 0.5;  // of a GPU's free memory, written and read back
    double cpuMemoryMb = 64;  // the memory test's size on CPU: a check of the path, not of every DIMM
    double matmulTolerance = 1e-3;  // largest error relative to the reference's largest value
    double timeoutS = 120;  // to meet the other nodes and finish the all-reduce
    double maxEccErrors = 0;  // uncorrected ECC errors since the driver loaded (NVML's volatile count)

    // Sets one limit from "key=value" (the --set words); throws std::invalid_argument naming the key.
    void set(const std::string &assignment);
    // With the defaults filled in for a CUDA or a CPU node.
    HealthThresholds resolvedFor(bool cuda) const;
};

// The names set() understands, for the usage text and the error naming an unknown one.
std::vector<std::string> healthThresholdNames();

// Runs the check on this process's node (world from rendezvousFromEnvironment: one process per
// node; a node's further local ranks only join the all-reduce). `device`: "auto", "cpu" or "cuda".
// Returns the exit status: 0 the node passed, 1 it failed, 2 the arguments or environment are wrong.
int runHealthCheck(const std::string &runDir, const HealthThresholds &thresholds, const std::string &device);

}  // namespace orrery::train
