// SPDX-License-Identifier: GPL-3.0-or-later
//
// orrery-train: the bundled distributed video diffusion trainer. This is the skeleton of the
// Foundation issue: it reports what it was built with; training arrives with the Trainer issue.
#include "build_info.h"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

constexpr const char *kUsage =
    "usage: orrery-train --version [--json]\n"
    "       orrery-train --help\n"
    "\n"
    "  --version   print the LibTorch version and whether CUDA, NCCL, Gloo and FFmpeg are\n"
    "              compiled in and available on this machine (--json: one JSON object)\n";

}  // namespace

int main(int argc, char **argv)
{
    bool version = false;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--version" || arg == "-V") {
            version = true;
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else {
            std::fprintf(stderr, "orrery-train: unknown argument '%s'\n\n%s", argv[i], kUsage);
            return 2;
        }
    }
    if (!version) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    const auto info = orrery::train::probeBuildInfo();
    const auto text = json ? orrery::train::formatBuildInfoJson(info) : orrery::train::formatBuildInfo(info);
    std::fputs(text.c_str(), stdout);
    return 0;
}
