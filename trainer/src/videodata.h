// SPDX-License-Identifier: GPL-3.0-or-later
//
// Real video data: a folder of video files, or WebDataset-style tar shards (`key.mp4` next to
// `key.json` / `key.txt`), decoded into clips of T frames taken every `stride` frames, resized to
// size x size, in [-1, 1]: Y4M by orrery-train's own reader (so a build without FFmpeg, as on a
// cluster without its development files, still trains on .y4m clips), everything else with the
// FFmpeg libraries. Each rank reads its own subset of the files (file i belongs to rank i mod world
// size). A file that does not decode is skipped — the next file is tried — and reported, never
// fatal. Shards named by a list (pipe: sources, braces) are streamed instead (shards.h). Tar
// members are decoded from memory (FFmpeg through an AVIOContext). FFmpeg's C API stays in
// videodata.cpp.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shards.h"

namespace orrery::train {

struct VideoSource {
    std::string path;  // a video file, or a tar shard
    std::int64_t label;  // folder: the index of its parent directory among all parents
};

class VideoDataset {
public:
    // kind: "folder" or "shards". Throws std::runtime_error when nothing usable is found (without
    // FFmpeg only .y4m files count).
    // A shards data.path that is a URL list (isShardList) is streamed (shards.h): `workers`
    // streams of this rank's shards, with `stream`'s read-ahead, retries and timeout.
    VideoDataset(const std::string &kind, const std::string &root, std::int64_t frames, std::int64_t size,
                 std::int64_t stride, std::int64_t classes, int rank, int world, int workers = 1,
                 const StreamOptions &stream = {});
    ~VideoDataset();

    // The clip of sample `index` ([3, T, H, W] in [-1, 1]) and its label; decoding failures move
    // on to the next file and are recorded for warnings().
    std::pair<torch::Tensor, std::int64_t> clip(std::uint64_t index);

    // Warnings since the last call ("skipped <file>: <why>"); thread-safe.
    std::vector<std::string> takeWarnings();
    std::size_t fileCount() const { return m_streams ? m_streamed : m_files.size(); }
    // Streamed shards: wakes the loader's workers waiting for a sample (they throw), before the
    // loader joins them.
    void stopStreams();

    // Whether formats other than Y4M are read (the FFmpeg libraries were found at build time).
    static bool available();

private:
    // A sample's clip: `video` decoded from memory, its label from the members of its key.
    std::pair<torch::Tensor, std::int64_t> decodeMember(const std::vector<TarMember> &members,
                                                        const TarMember &video, std::uint64_t index);
    std::pair<torch::Tensor, std::int64_t> streamedClip(std::uint64_t index);
    static constexpr int kMaxUndecodableInARow = 1000;

    std::string m_kind;
    std::int64_t m_frames, m_size, m_stride, m_classes;
    std::vector<VideoSource> m_files;
    std::mutex m_mutex;
    std::vector<std::string> m_warnings;
    std::vector<bool> m_bad;  // files that did not decode: skipped from then on, reported once
    std::unique_ptr<ShardStreams> m_streams;  // streamed shards instead of m_files
    std::size_t m_streamed = 0;
};

// Reads every regular file of a tar archive; throws on a truncated or corrupt header.
std::vector<TarMember> readTar(const std::string &path);

// Frames first, first + stride, ... (T of them) of a YUV4MPEG2 stream (C420*, C422, C444, mono;
// 8 bit; XCOLORRANGE=FULL or limited range, BT.601), area-resized to size x size, as [3, T, H, W]
// in [-1, 1]. `first` is chosen from `seed` among the positions the clip fits in. Throws with the
// reason on anything else or a short file.
// One clip of a video file (Y4M by readY4MClip, the rest through FFmpeg), as VideoDataset reads it.
torch::Tensor decodeVideoFile(const std::string &path, std::int64_t frames, std::int64_t size,
                              std::int64_t stride, std::uint64_t seed);
class Config;
// `orrery-train --inspect-clip FILE`: what the loader makes of a file with the config's
// data.frames/size/stride: the decoder, the clip's shape, its mean colour and range (0..255), JSON.
std::string inspectVideoClip(const std::string &path, const Config &config);

torch::Tensor readY4MClip(std::istream &in, std::int64_t frames, std::int64_t size, std::int64_t stride,
                          std::uint64_t seed, std::int64_t streamBytes);

}  // namespace orrery::train
