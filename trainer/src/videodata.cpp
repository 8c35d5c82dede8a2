// SPDX-License-Identifier: GPL-3.0-or-later
#include "videodata.h"

#include "faults.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "config.h"
#include "data.h"
#include "ffmpeg.h"

namespace orrery::train {

namespace fs = std::filesystem;

namespace {

std::string lowerExtension(const fs::path &p)
{
    std::string e = p.extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return e;
}

bool isY4M(const fs::path &p)
{
    return lowerExtension(p) == ".y4m";
}

// What this build decodes: Y4M always, the rest through FFmpeg.
bool isVideo(const fs::path &p)
{
    static const std::set<std::string> ext{".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v"};
    return isY4M(p) || (VideoDataset::available() && ext.count(lowerExtension(p)) > 0);
}

#if ORRERY_TRAINER_FFMPEG

// A tar member's bytes as FFmpeg's input (an AVIOContext's read and seek callbacks): the
// container is parsed from memory, no temp file.
struct MemoryInput {
    const std::string *bytes;
    std::int64_t pos = 0;

    static int read(void *opaque, std::uint8_t *buf, int n)
    {
        auto *m = static_cast<MemoryInput *>(opaque);
        const std::int64_t left = std::int64_t(m->bytes->size()) - m->pos;
        if (left <= 0)
            return AVERROR_EOF;
        const int got = int(std::min<std::int64_t>(n, left));
        std::memcpy(buf, m->bytes->data() + m->pos, std::size_t(got));
        m->pos += got;
        return got;
    }
    static std::int64_t seek(void *opaque, std::int64_t offset, int whence)
    {
        auto *m = static_cast<MemoryInput *>(opaque);
        const auto size = std::int64_t(m->bytes->size());
        if (whence & AVSEEK_SIZE)
            return size;
        whence &= ~AVSEEK_FORCE;
        const std::int64_t to = whence == SEEK_SET ? offset
            : whence == SEEK_CUR                   ? m->pos + offset
            : whence == SEEK_END                   ? size + offset
                                                   : -1;
        if (to < 0 || to > size)
            return AVERROR(EINVAL);
        return m->pos = to;
    }
};

// Decodes frames first, first + stride, ... (T of them) of a video file (or of `memory`, a tar
// member's bytes, when given), each resized to size x size RGB. Throws with FFmpeg's reason when
// the video does not decode or is too short.
torch::Tensor decodeClip(const std::string &path, const std::string *memory, std::int64_t frames,
                         std::int64_t size, std::int64_t stride, std::uint64_t seed)
{
    MemoryInput mem{memory};
    ffmpeg::IO io;  // outlives the format context, which reads through it
    AVFormatContext *raw = nullptr;
    if (memory) {
        constexpr int kBufferBytes = 1 << 16;
        auto *buffer = static_cast<unsigned char *>(av_malloc(kBufferBytes));
        if (buffer)
            io.reset(avio_alloc_context(buffer, kBufferBytes, 0, &mem, &MemoryInput::read, nullptr,
                                        &MemoryInput::seek));
        if (!io)
            av_free(buffer);
        if (!io || !(raw = avformat_alloc_context()))
            throw std::runtime_error("out of memory");
        raw->pb = io.get();
    }
    int rc = avformat_open_input(&raw, memory ? nullptr : path.c_str(), nullptr, nullptr);
    if (rc < 0)
        throw std::runtime_error("cannot open: " + ffmpeg::errorText(rc));
    ffmpeg::Input fmt(raw);
    if ((rc = avformat_find_stream_info(fmt.get(), nullptr)) < 0)
        throw std::runtime_error("no stream info: " + ffmpeg::errorText(rc));
    const AVCodec *codec = nullptr;
    const int stream = av_find_best_stream(fmt.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (stream < 0 || !codec)
        throw std::runtime_error("no video stream");
    ffmpeg::Codec ctx(avcodec_alloc_context3(codec));
    avcodec_parameters_to_context(ctx.get(), fmt->streams[stream]->codecpar);
    ctx->thread_count = 1;  // the loader's workers are the parallelism
    if ((rc = avcodec_open2(ctx.get(), codec, nullptr)) < 0)
        throw std::runtime_error("cannot open the decoder: " + ffmpeg::errorText(rc));

    // Decode everything we need from the start (clips are short; seeking is not frame-exact).
    const std::int64_t span = (frames - 1) * stride + 1;
    const std::int64_t known = fmt->streams[stream]->nb_frames;
    const std::int64_t first =
        known > span ? std::int64_t(mixSeed(seed) % std::uint64_t(known - span + 1)) : 0;
    std::vector<torch::Tensor> out;
    ffmpeg::Frame frame(av_frame_alloc());
    ffmpeg::Packet pkt(av_packet_alloc());
    ffmpeg::Sws sws;
    std::int64_t n = 0;
    auto take = [&]() {
        if (n >= first && (n - first) % stride == 0 && std::int64_t(out.size()) < frames) {
            if (!sws)
                sws.reset(sws_getContext(frame->width, frame->height, AVPixelFormat(frame->format), int(size),
                                         int(size), AV_PIX_FMT_RGB24, SWS_AREA, nullptr, nullptr, nullptr));
            if (!sws)
                throw std::runtime_error("cannot convert its pixel format");
            auto rgb = torch::empty({size, size, 3}, torch::kUInt8);
            std::uint8_t *dst[1] = {rgb.data_ptr<std::uint8_t>()};
            const int dstStride[1] = {int(3 * size)};
            sws_scale(sws.get(), frame->data, frame->linesize, 0, frame->height, dst, dstStride);
            out.push_back(rgb);
        }
        ++n;
    };
    auto receive = [&]() {
        for (;;) {
            const int r = avcodec_receive_frame(ctx.get(), frame.get());
            if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
                return;
            if (r < 0)
                throw std::runtime_error("decoding failed: " + ffmpeg::errorText(r));
            take();
            av_frame_unref(frame.get());
        }
    };
    while (std::int64_t(out.size()) < frames && (rc = av_read_frame(fmt.get(), pkt.get())) >= 0) {
        if (pkt->stream_index == stream) {
            const int s = avcodec_send_packet(ctx.get(), pkt.get());
            av_packet_unref(pkt.get());
            if (s < 0 && s != AVERROR(EAGAIN))
                throw std::runtime_error("corrupt packet: " + ffmpeg::errorText(s));
            receive();
        } else {
            av_packet_unref(pkt.get());
        }
    }
    avcodec_send_packet(ctx.get(), nullptr);
    receive();
    if (std::int64_t(out.size()) < frames)
        throw std::runtime_error("only " + std::to_string(out.size()) + " of " + std::to_string(frames) +
                                 " frames (too short for data.frames x data.stride)");
    // [T, H, W, 3] uint8 → [3, T, H, W] in [-1, 1]
    return torch::stack(out).permute({3, 0, 1, 2}).to(torch::kFloat32).div(127.5).sub(1.0).contiguous();
}

#endif

}  // namespace

torch::Tensor readY4MClip(std::istream &in, std::int64_t frames, std::int64_t size, std::int64_t stride,
                          std::uint64_t seed, std::int64_t streamBytes)
{
    std::string header;
    if (!std::getline(in, header) || header.rfind("YUV4MPEG2 ", 0) != 0)
        throw std::runtime_error("not a YUV4MPEG2 stream");
    std::int64_t w = 0, h = 0;
    std::string chroma = "420jpeg";
    bool full = false;
    std::istringstream fields(header.substr(10));
    for (std::string f; fields >> f;) {
        if (f[0] == 'W')
            w = std::atoll(f.c_str() + 1);
        else if (f[0] == 'H')
            h = std::atoll(f.c_str() + 1);
        else if (f[0] == 'C')
            chroma = f.substr(1);
        else if (f == "XCOLORRANGE=FULL")
            full = true;
    }
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384)
        throw std::runtime_error("implausible frame size in the Y4M header");
    std::int64_t cw = w, ch = h;  // chroma plane size
    if (chroma == "420jpeg" || chroma == "420mpeg2" || chroma == "420paldv" || chroma == "420") {
        cw = (w + 1) / 2;
        ch = (h + 1) / 2;
    } else if (chroma == "422") {
        cw = (w + 1) / 2;
    } else if (chroma == "mono") {
        cw = ch = 0;
    } else if (chroma != "444") {
        throw std::runtime_error("Y4M colour space C" + chroma +
                                 " is not read (8-bit 420, 422, 444, mono are)");
    }
    const std::int64_t frameBytes = w * h + 2 * cw * ch;
    // A corrupt or hostile header must not make every worker allocate gigabytes for nothing.
    if (streamBytes > 0 && frameBytes > streamBytes)
        throw std::runtime_error("the Y4M header's frame size (" + std::to_string(w) + "x" +
                                 std::to_string(h) + ") is larger than the whole file");
    // Frames in the stream, if every frame header is the plain "FRAME\n" (the usual case): the
    // clip's start is drawn among the positions it fits in, as the FFmpeg path does.
    const std::int64_t known =
        streamBytes > 0 ? (streamBytes - std::int64_t(header.size()) - 1) / (frameBytes + 6) : 0;
    const std::int64_t span = (frames - 1) * stride + 1;
    const std::int64_t first =
        known > span ? std::int64_t(mixSeed(seed) % std::uint64_t(known - span + 1)) : 0;

    std::vector<torch::Tensor> out;
    std::string plane(std::size_t(frameBytes), '\0');
    for (std::int64_t n = 0; std::int64_t(out.size()) < frames; ++n) {
        std::string frameHeader;
        if (!std::getline(in, frameHeader))
            break;
        if (frameHeader.rfind("FRAME", 0) != 0)
            throw std::runtime_error("corrupt Y4M: a frame does not start with FRAME");
        const bool wanted = n >= first && (n - first) % stride == 0;
        if (!wanted) {
            in.ignore(frameBytes);
            if (in.gcount() != frameBytes)
                break;
            continue;
        }
        if (!in.read(plane.data(), frameBytes))
            break;
        auto bytes = torch::from_blob(plane.data(), {frameBytes}, torch::kUInt8).to(torch::kFloat32);
        auto y = bytes.narrow(0, 0, w * h).view({1, 1, h, w});
        torch::Tensor u, v;
        if (cw == 0) {
            u = v = torch::full_like(y, 128.0);
        } else {
            auto up = [&](const torch::Tensor &c) {  // chroma to the luma grid (nearest, as sws)
                return torch::nn::functional::interpolate(c.view({1, 1, ch, cw}),
                                                          torch::nn::functional::InterpolateFuncOptions()
                                                              .size(std::vector<std::int64_t>{h, w})
                                                              .mode(torch::kNearest));
            };
            u = up(bytes.narrow(0, w * h, cw * ch));
            v = up(bytes.narrow(0, w * h + cw * ch, cw * ch));
        }
        // BT.601: full range (JPEG) or limited (studio) range.
        auto yy = full ? y : (y - 16.0) * (255.0 / 219.0);
        const double cs = full ? 1.0 : 255.0 / 224.0;
        auto cb = (u - 128.0) * cs, cr = (v - 128.0) * cs;
        auto rgb = torch::cat({yy + 1.402 * cr, yy - 0.344136 * cb - 0.714136 * cr, yy + 1.772 * cb}, 1);
        rgb = torch::nn::functional::interpolate(rgb,
                                                 torch::nn::functional::InterpolateFuncOptions()
                                                     .size(std::vector<std::int64_t>{size, size})
                                                     .mode(torch::kArea));
        out.push_back(rgb.squeeze(0).clamp(0, 255));
    }
    if (std::int64_t(out.size()) < frames)
        throw std::runtime_error("only " + std::to_string(out.size()) + " of " + std::to_string(frames) +
                                 " frames (too short for data.frames x data.stride)");
    // [T, 3, H, W] in 0..255 → [3, T, H, W] in [-1, 1]
    return torch::stack(out).permute({1, 0, 2, 3}).div(127.5).sub(1.0).contiguous();
}

std::vector<TarMember> readTar(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot open");
    TarStream tar([&in](char *buf, std::size_t n) {
        in.read(buf, std::streamsize(n));
        return std::size_t(in.gcount());
    });
    std::vector<TarMember> out;
    for (TarMember m; tar.next(m);)
        out.push_back(std::move(m));
    return out;
}

bool VideoDataset::available()
{
#if ORRERY_TRAINER_FFMPEG
    return true;
#else
    return false;
#endif
}

VideoDataset::VideoDataset(const std::string &kind, const std::string &root, std::int64_t frames,
                           std::int64_t size, std::int64_t stride, std::int64_t classes, int rank, int world,
                           int workers, const StreamOptions &stream)
    : m_kind(kind), m_frames(frames), m_size(size), m_stride(stride), m_classes(classes)
{
    if (kind == "shards" && isShardList(root)) {
        const auto all = expandSources(root);
        std::vector<std::string> mine;
        for (const auto &list : shardsOfRank(all.size(), rank, world, 1))
            for (std::size_t i : list)
                mine.push_back(all[i]);
        if (mine.empty())
            throw DataError("data.path gives " + std::to_string(all.size()) + " shards: none for rank " +
                            std::to_string(rank) + " of " + std::to_string(world));
        m_streamed = mine.size();
        m_streams = std::make_unique<ShardStreams>(std::move(mine), workers, stream);
        return;
    }
    if (!fs::is_directory(root))
        throw DataError("data.path " + root + " is not a directory");
    std::vector<fs::path> all;
    for (const auto &e :
         fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied))
        if (e.is_regular_file() && (kind == "shards" ? e.path().extension() == ".tar" : isVideo(e.path())))
            all.push_back(e.path());
    std::sort(all.begin(), all.end());
    // Folder labels: the index of a file's directory among all directories (sorted), as
    // torchvision's ImageFolder does with class folders.
    std::map<fs::path, std::int64_t> dirs;
    for (const auto &p : all)
        dirs.emplace(p.parent_path(), 0);
    std::int64_t i = 0;
    for (auto &[d, index] : dirs)
        index = i++;
    for (std::size_t k = 0; k < all.size(); ++k)
        if (int(k % std::size_t(world)) == rank)
            m_files.push_back({all[k].string(), dirs[all[k].parent_path()] % classes});
    if (m_files.empty())
        throw DataError("no " + std::string(kind == "shards" ? ".tar shards" : "video files") + " under " +
                        root + " for rank " + std::to_string(rank) + " of " + std::to_string(world) +
                        (available() ? std::string()
                                     : std::string(" (this orrery-train was built without FFmpeg: "
                                                   "it reads .y4m files only)")));
    m_bad.assign(m_files.size(), false);
}

std::vector<std::string> VideoDataset::takeWarnings()
{
    std::vector<std::string> out;
    if (m_streams)
        out = m_streams->takeWarnings();
    std::lock_guard lock(m_mutex);
    out.insert(out.end(), m_warnings.begin(), m_warnings.end());
    m_warnings.clear();
    return out;
}

void VideoDataset::stopStreams()
{
    if (m_streams)
        m_streams->stop();
}

VideoDataset::~VideoDataset() = default;

torch::Tensor decodeVideoFile(const std::string &path, std::int64_t frames, std::int64_t size,
                              std::int64_t stride, std::uint64_t seed)
{
    if (isY4M(path)) {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw std::runtime_error("cannot open");
        return readY4MClip(in, frames, size, stride, seed, std::int64_t(fs::file_size(path)));
    }
#if ORRERY_TRAINER_FFMPEG
    return decodeClip(path, nullptr, frames, size, stride, seed);
#else
    throw std::runtime_error("this orrery-train was built without FFmpeg: it reads .y4m files only");
#endif
}

std::pair<torch::Tensor, std::int64_t> VideoDataset::decodeMember(const std::vector<TarMember> &members,
                                                                  const TarMember &video, std::uint64_t index)
{
    // Its label from key.json {"label": n}, key.txt or key.cls.
    const std::string key = video.name.substr(0, video.name.rfind('.'));
    std::int64_t label = 0;
    for (const TarMember &m : members) {
        if (m.name == key + ".json") {
            const auto j = nlohmann::json::parse(m.data, nullptr, false);
            if (j.is_object() && j.contains("label") && j["label"].is_number_integer())
                label = j["label"].get<std::int64_t>();
        } else if (m.name == key + ".txt" || m.name == key + ".cls") {
            try {
                label = std::stoll(m.data);
            } catch (const std::exception &) { }
        }
    }
    label = ((label % m_classes) + m_classes) % m_classes;
    if (isY4M(video.name)) {
        std::istringstream in(video.data);
        return {readY4MClip(in, m_frames, m_size, m_stride, index, std::int64_t(video.data.size())), label};
    }
#if ORRERY_TRAINER_FFMPEG
    return {decodeClip(video.name, &video.data, m_frames, m_size, m_stride, index), label};
#else
    throw std::runtime_error("this orrery-train was built without FFmpeg: it reads .y4m files only");
#endif
}

std::pair<torch::Tensor, std::int64_t> VideoDataset::streamedClip(std::uint64_t index)
{
    // The stream's next sample, whatever `index` is (streams are sequential); the index still
    // picks the clip's first frame. A sample that does not decode costs a warning.
    for (int failed = 0;;) {
        const ShardSample sample = m_streams->next(Loader::currentWorker());
        try {
            const auto video = std::find_if(sample.members.begin(), sample.members.end(),
                                            [](const TarMember &m) { return isVideo(m.name); });
            if (video == sample.members.end())
                throw std::runtime_error("no video in the sample");
            return decodeMember(sample.members, *video, index);
        } catch (const std::exception &e) {
            std::lock_guard lock(m_mutex);
            m_warnings.push_back("skipped " + sample.source + " " + sample.key + ": " + e.what());
            // Shards without one decodable sample in a row of this many: the data is not what we read.
            if (++failed >= kMaxUndecodableInARow)
                throw DataError("no sample of the last " + std::to_string(failed) +
                                " from data.path decodes (see the warnings)");
        }
    }
}

std::string inspectVideoClip(const std::string &path, const Config &c)
{
    const auto clip = decodeVideoFile(path, c.i("data.frames"), c.i("data.size"), c.i("data.stride"), 0);
    const auto rgb = clip.add(1.0).mul(127.5);  // back to 0..255
    const auto mean = rgb.mean({1, 2, 3});
    nlohmann::json j{{"file", path},
                     {"decoder", isY4M(path) ? "orrery-train (y4m)" : "ffmpeg"},
                     {"shape", clip.sizes().vec()},
                     {"mean_rgb", {mean[0].item<double>(), mean[1].item<double>(), mean[2].item<double>()}},
                     {"min", rgb.min().item<double>()},
                     {"max", rgb.max().item<double>()}};
    return j.dump() + "\n";
}

std::pair<torch::Tensor, std::int64_t> VideoDataset::clip(std::uint64_t index)
{
    if (m_streams)
        return streamedClip(index);
    // Try the sample's file, then the next ones: a corrupt file costs a warning, not the run.
    for (std::size_t attempt = 0; attempt < m_files.size(); ++attempt) {
        const std::size_t fileIndex = (index + attempt) % m_files.size();
        {
            std::lock_guard lock(m_mutex);
            if (m_bad[fileIndex])
                continue;
        }
        const VideoSource &src = m_files[fileIndex];
        try {
            if (m_kind == "folder")
                return {decodeVideoFile(src.path, m_frames, m_size, m_stride, index), src.label};
            // A shard: pick one of its videos.
            const auto members = readTar(src.path);
            std::vector<const TarMember *> videos;
            for (const TarMember &m : members)
                if (isVideo(m.name))
                    videos.push_back(&m);
            if (videos.empty())
                throw std::runtime_error("no video in the shard");
            return decodeMember(members, *videos[mixSeed(index) % videos.size()], index);
        } catch (const std::exception &e) {
            std::lock_guard lock(m_mutex);
            if (!m_bad[fileIndex])
                m_warnings.push_back("skipped " + src.path + ": " + e.what());
            m_bad[fileIndex] = true;
        }
    }
    throw DataError("no file of the dataset decodes (see the warnings)");
}

}  // namespace orrery::train
