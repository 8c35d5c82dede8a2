// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

namespace orrery::train {

// What this orrery-train binary was built with and what the machine it runs on offers.
// Filled once at start-up; plain data, safe to copy between threads.
struct BuildInfo {
    std::string version;  // Orrery's version
    std::string torchVersion;  // LibTorch headers the binary was compiled against
    bool cudaCompiledIn = false;
    std::string cudaRuntimeVersion;  // e.g. "13.0"; empty when not compiled in
    int cudaDevices = 0;  // visible at run time (CUDA_VISIBLE_DEVICES applies)
    bool ncclCompiledIn = false;
    std::string ncclVersion;  // of the NCCL library loaded at run time
    bool glooCompiledIn = false;
    bool ffmpegCompiledIn = false;

    bool cudaAvailable() const { return cudaDevices > 0; }
    // NCCL needs a CUDA device per rank.
    bool ncclAvailable() const { return ncclCompiledIn && cudaAvailable(); }
};

BuildInfo probeBuildInfo();

// Human-readable, one fact per line, as `orrery-train --version` prints it.
std::string formatBuildInfo(const BuildInfo &info);
// One JSON object, as `orrery-train --version --json` prints it (read by `orrery doctor`).
std::string formatBuildInfoJson(const BuildInfo &info);

}  // namespace orrery::train
