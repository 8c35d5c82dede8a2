// SPDX-License-Identifier: GPL-3.0-or-later
//
// Real video data: a folder of video files, or WebDataset-style tar shards (`key.mp4` next to
// `key.json` / `key.txt`), decoded with the FFmpeg libraries into clips of T frames taken every
// `stride` frames, resized to size x size, in [-1, 1]. Each rank reads its own subset of the files
// (file i belongs to rank i mod world size). A file that does not decode is skipped — the next
// file is tried — and reported, never fatal. FFmpeg's C API stays in videodata.cpp.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace orrery::train {

struct VideoSource {
    std::string path;  // a video file, or a tar shard
    std::int64_t label;  // folder: the index of its parent directory among all parents
};

class VideoDataset {
public:
    // kind: "folder" or "shards". Throws std::runtime_error when nothing usable is found or the
    // trainer was built without FFmpeg.
    VideoDataset(const std::string &kind, const std::string &root, std::int64_t frames, std::int64_t size,
                 std::int64_t stride, std::int64_t classes, int rank, int world);

    // The clip of sample `index` ([3, T, H, W] in [-1, 1]) and its label; decoding failures move
    // on to the next file and are recorded for warnings().
    std::pair<torch::Tensor, std::int64_t> clip(std::uint64_t index);

    // Warnings since the last call ("skipped <file>: <why>"); thread-safe.
    std::vector<std::string> takeWarnings();
    std::size_t fileCount() const { return m_files.size(); }

    static bool available();

private:
    std::string m_kind;
    std::int64_t m_frames, m_size, m_stride, m_classes;
    std::vector<VideoSource> m_files;
    std::mutex m_mutex;
    std::vector<std::string> m_warnings;
    std::vector<bool> m_bad;  // files that did not decode: skipped from then on, reported once
};

// One tar member (ustar): its name and bytes.
struct TarMember {
    std::string name;
    std::string data;
};
// Reads every regular file of a tar archive; throws on a truncated or corrupt header.
std::vector<TarMember> readTar(const std::string &path);

}  // namespace orrery::train
