// SPDX-License-Identifier: GPL-3.0-or-later
#include "build_info.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>

#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#endif

#include <sstream>

namespace orrery::train {

namespace {

#ifdef ORRERY_TORCH_CUDA
std::string cudaVersionString(long version)
{
    // CUDART encodes major * 1000 + minor * 10.
    std::ostringstream out;
    out << version / 1000 << '.' << (version % 1000) / 10;
    return out.str();
}
#endif

const char *yesNo(bool value)
{
    return value ? "yes" : "no";
}

}  // namespace

BuildInfo probeBuildInfo()
{
    BuildInfo info;
    info.version = ORRERY_VERSION;
    info.torchVersion = TORCH_VERSION;
#ifdef ORRERY_TORCH_CUDA
    info.cudaCompiledIn = true;
    // getCUDAHooks() is the CUDA half of LibTorch when libtorch_cuda is loaded; querying the
    // runtime version works without a GPU.
    info.cudaRuntimeVersion = cudaVersionString(at::detail::getCUDAHooks().versionCUDART());
    info.cudaDevices = static_cast<int>(torch::cuda::device_count());
#endif
#ifdef USE_C10D_NCCL
    info.ncclCompiledIn = true;
    info.ncclVersion = c10d::getNcclVersion();
#endif
#ifdef ORRERY_TORCH_GLOO
    info.glooCompiledIn = true;
#endif
#ifdef ORRERY_TRAINER_FFMPEG
    info.ffmpegCompiledIn = true;
#endif
    return info;
}

std::string formatBuildInfo(const BuildInfo &info)
{
    std::ostringstream out;
    out << "orrery-train " << info.version << '\n';
    out << "LibTorch " << info.torchVersion << '\n';
    out << "CUDA: compiled in: " << yesNo(info.cudaCompiledIn);
    if (info.cudaCompiledIn)
        out << " (runtime " << info.cudaRuntimeVersion << ")";
    out << "; available: " << yesNo(info.cudaAvailable()) << " (" << info.cudaDevices << " device"
        << (info.cudaDevices == 1 ? "" : "s") << ")\n";
    out << "NCCL: compiled in: " << yesNo(info.ncclCompiledIn);
    if (info.ncclCompiledIn)
        out << " (" << info.ncclVersion << ")";
    out << "; available: " << yesNo(info.ncclAvailable())
        << (info.ncclCompiledIn && !info.cudaAvailable() ? " (no CUDA device)" : "") << '\n';
    out << "Gloo: compiled in: " << yesNo(info.glooCompiledIn) << '\n';
    out << "FFmpeg: compiled in: " << yesNo(info.ffmpegCompiledIn)
        << (info.ffmpegCompiledIn ? " (samples as H.264 MP4)" : " (samples as Y4M)") << '\n';
    return out.str();
}

std::string formatBuildInfoJson(const BuildInfo &info)
{
    // Every value is a version string, a number or a bool: nothing needs escaping beyond the
    // version strings, which are digits, dots, '+' and letters.
    std::ostringstream out;
    out << "{\"version\":\"" << info.version << "\",\"torch\":\"" << info.torchVersion
        << "\",\"cuda\":{\"compiled\":" << (info.cudaCompiledIn ? "true" : "false") << ",\"runtime\":\""
        << info.cudaRuntimeVersion << "\",\"devices\":" << info.cudaDevices
        << "},\"nccl\":{\"compiled\":" << (info.ncclCompiledIn ? "true" : "false") << ",\"version\":\""
        << info.ncclVersion << "\",\"available\":" << (info.ncclAvailable() ? "true" : "false")
        << "},\"gloo\":" << (info.glooCompiledIn ? "true" : "false")
        << ",\"ffmpeg\":" << (info.ffmpegCompiledIn ? "true" : "false") << "}\n";
    return out.str();
}

}  // namespace orrery::train
