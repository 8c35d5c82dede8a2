// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sample videos and contact sheets. H.264 MP4 through the FFmpeg libraries when the trainer was
// built with them; Y4M (uncompressed, 4:4:4) otherwise — the app plays or converts either. PNG
// contact sheets need no library (stored deflate blocks). FFmpeg's C API stays in video.cpp.
#pragma once

#include <torch/torch.h>

#include <string>

namespace orrery::train {

// frames: uint8 [T, H, W, 3] on the CPU. Every writer writes a temp file and renames it.
void writeY4M(const std::string &path, const torch::Tensor &frames, int fps);
void writePng(const std::string &path, const torch::Tensor &rgb);  // uint8 [H, W, 3]
bool mp4Available();
void writeMp4(const std::string &path, const torch::Tensor &frames, int fps);

// Clips in [-1, 1] [N, 3, T, H, W] → one video with the clips side by side (each upscaled by
// `scale`, nearest) and a contact sheet (rows: clips, columns: frames). Returns the video's file
// name (step-N.mp4, or .y4m without FFmpeg); the sheet is step-N.png.
std::string writeSamples(const std::string &dir, std::int64_t step, const torch::Tensor &clips, int fps,
                         int scale);

}  // namespace orrery::train
