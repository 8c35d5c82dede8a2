// SPDX-License-Identifier: GPL-3.0-or-later
#include "video.h"

#include "runlog.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "ffmpeg.h"

namespace orrery::train {

namespace fs = std::filesystem;

namespace {

std::string bytesOf(const torch::Tensor &t)
{
    const auto c = t.contiguous();
    return std::string(static_cast<const char *>(c.data_ptr()), std::size_t(c.numel() * c.element_size()));
}

std::uint32_t crc32(const std::string &data, std::uint32_t crc = 0)
{
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t n = 0; n < 256; ++n) {
            std::uint32_t c = n;
            for (int k = 0; k < 8; ++k)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    crc = ~crc;
    for (unsigned char ch : data)
        crc = table[(crc ^ ch) & 0xff] ^ (crc >> 8);
    return ~crc;
}

void putBE32(std::string &out, std::uint32_t v)
{
    for (int s = 24; s >= 0; s -= 8)
        out.push_back(char((v >> s) & 0xff));
}

void chunk(std::string &png, const char *type, const std::string &data)
{
    putBE32(png, std::uint32_t(data.size()));
    const std::string typed = std::string(type, 4) + data;
    png += typed;
    putBE32(png, crc32(typed));
}

}  // namespace

void writePng(const std::string &path, const torch::Tensor &rgbIn)
{
    const auto rgb = rgbIn.to(torch::kUInt8).contiguous();
    const auto h = std::uint32_t(rgb.size(0)), w = std::uint32_t(rgb.size(1));
    std::string raw;  // filter byte 0 + the row
    const auto *p = rgb.data_ptr<std::uint8_t>();
    for (std::uint32_t y = 0; y < h; ++y) {
        raw.push_back(0);
        raw.append(reinterpret_cast<const char *>(p + std::size_t(y) * w * 3), std::size_t(w) * 3);
    }
    // zlib stream of stored (uncompressed) deflate blocks of at most 65535 bytes.
    std::string z{char(0x78), char(0x01)};
    std::uint32_t a = 1, b = 0;
    for (unsigned char ch : raw) {
        a = (a + ch) % 65521;
        b = (b + a) % 65521;
    }
    for (std::size_t off = 0; off < raw.size() || off == 0; off += 65535) {
        const std::size_t n = std::min<std::size_t>(65535, raw.size() - off);
        z.push_back(off + n >= raw.size() ? 1 : 0);
        z.push_back(char(n & 0xff));
        z.push_back(char(n >> 8));
        z.push_back(char(~n & 0xff));
        z.push_back(char((~n >> 8) & 0xff));
        z.append(raw, off, n);
        if (raw.empty())
            break;
    }
    putBE32(z, (b << 16) | a);
    std::string png = "\x89PNG\r\n\x1a\n";
    std::string ihdr;
    putBE32(ihdr, w);
    putBE32(ihdr, h);
    ihdr += std::string{8, 2, 0, 0, 0};  // 8-bit RGB
    chunk(png, "IHDR", ihdr);
    chunk(png, "IDAT", z);
    chunk(png, "IEND", {});
    writeFileAtomically(path, png);
}

void writeY4M(const std::string &path, const torch::Tensor &frames, int fps)
{
    const auto f = frames.to(torch::kFloat32);
    const auto r = f.select(3, 0), g = f.select(3, 1), b = f.select(3, 2);
    // BT.601 full range, the JPEG matrix Y4M's C444 players assume.
    const auto y = (0.299 * r + 0.587 * g + 0.114 * b).round().clamp(0, 255).to(torch::kUInt8);
    const auto u = (-0.168736 * r - 0.331264 * g + 0.5 * b + 128).round().clamp(0, 255).to(torch::kUInt8);
    const auto v = (0.5 * r - 0.418688 * g - 0.081312 * b + 128).round().clamp(0, 255).to(torch::kUInt8);
    std::string out = "YUV4MPEG2 W" + std::to_string(frames.size(2)) + " H" + std::to_string(frames.size(1)) +
        " F" + std::to_string(fps) + ":1 Ip A1:1 C444 XCOLORRANGE=FULL\n";
    for (std::int64_t t = 0; t < frames.size(0); ++t)
        out += "FRAME\n" + bytesOf(y[t]) + bytesOf(u[t]) + bytesOf(v[t]);
    writeFileAtomically(path, out);
}

#if ORRERY_TRAINER_FFMPEG

namespace {

void check(int rc, const char *what)
{
    if (rc < 0) {
        throw std::runtime_error(std::string("MP4: ") + what + ": " + ffmpeg::errorText(rc));
    }
}

}  // namespace

bool mp4Available()
{
    return avcodec_find_encoder(AV_CODEC_ID_H264) != nullptr;
}

void writeMp4(const std::string &path, const torch::Tensor &framesIn, int fps)
{
    const auto frames = framesIn.to(torch::kUInt8).contiguous();
    const int T = int(frames.size(0)), H = int(frames.size(1)), W = int(frames.size(2));
    if (H % 2 || W % 2)
        throw std::runtime_error("MP4: H.264 in yuv420p needs even frame sizes");
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_H264);
    if (!codec)
        throw std::runtime_error("MP4: no H.264 encoder in this FFmpeg");
    av_log_set_level(AV_LOG_ERROR);  // x264 prints a page of statistics per file otherwise
    const std::string tmp = path + ".tmp.mp4";
    AVFormatContext *rawFmt = nullptr;
    check(avformat_alloc_output_context2(&rawFmt, nullptr, "mp4", tmp.c_str()), "output context");
    ffmpeg::Output fmt(rawFmt);
    ffmpeg::Codec ctx(avcodec_alloc_context3(codec));
    ctx->width = W;
    ctx->height = H;
    ctx->time_base = AVRational{1, fps};
    ctx->framerate = AVRational{fps, 1};
    ctx->pix_fmt = AV_PIX_FMT_YUV420P;
    ctx->gop_size = 12;
    ctx->max_b_frames = 0;  // a few frames per clip: no reordering, every frame decodes in order
    if (fmt->oformat->flags & AVFMT_GLOBALHEADER)
        ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    av_opt_set(ctx->priv_data, "preset", "veryfast", 0);
    av_opt_set(ctx->priv_data, "crf", "18", 0);  // near-lossless: samples are looked at closely
    check(avcodec_open2(ctx.get(), codec, nullptr), "open encoder");
    AVStream *stream = avformat_new_stream(fmt.get(), nullptr);
    check(avcodec_parameters_from_context(stream->codecpar, ctx.get()), "stream parameters");
    stream->time_base = ctx->time_base;
    check(avio_open(&fmt->pb, tmp.c_str(), AVIO_FLAG_WRITE), "open file");
    check(avformat_write_header(fmt.get(), nullptr), "header");

    ffmpeg::Sws sws(sws_getContext(W, H, AV_PIX_FMT_RGB24, W, H, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nullptr,
                                   nullptr, nullptr));
    ffmpeg::Frame frame(av_frame_alloc());
    frame->format = AV_PIX_FMT_YUV420P;
    frame->width = W;
    frame->height = H;
    check(av_frame_get_buffer(frame.get(), 0), "frame buffer");
    ffmpeg::Packet pkt(av_packet_alloc());
    auto drain = [&] {
        for (;;) {
            const int rc = avcodec_receive_packet(ctx.get(), pkt.get());
            if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
                return;
            check(rc, "encode");
            // Every frame lasts one frame period; x264 leaves the last packet's duration at 0,
            // and the MP4 muxer's edit list then drops that frame.
            pkt->duration = 1;
            av_packet_rescale_ts(pkt.get(), ctx->time_base, stream->time_base);
            pkt->stream_index = stream->index;
            check(av_interleaved_write_frame(fmt.get(), pkt.get()), "write");
        }
    };
    for (int t = 0; t < T; ++t) {
        check(av_frame_make_writable(frame.get()), "frame");
        const std::uint8_t *src[1] = {frames[t].data_ptr<std::uint8_t>()};
        const int stride[1] = {3 * W};
        sws_scale(sws.get(), src, stride, 0, H, frame->data, frame->linesize);
        frame->pts = t;
        check(avcodec_send_frame(ctx.get(), frame.get()), "send frame");
        drain();
    }
    check(avcodec_send_frame(ctx.get(), nullptr), "flush");
    drain();
    check(av_write_trailer(fmt.get()), "trailer");
    fmt.reset();
    std::filesystem::rename(tmp, path);
}

#else

bool mp4Available()
{
    return false;
}
void writeMp4(const std::string &, const torch::Tensor &, int)
{
    throw std::runtime_error("this orrery-train was built without FFmpeg: samples are written as Y4M");
}

#endif

std::string writeSamples(const std::string &dir, std::int64_t step, const torch::Tensor &clips, int fps,
                         int scale)
{
    fs::create_directories(dir);
    // [N, 3, T, H, W] in [-1, 1] → uint8 [N, T, H*s, W*s, 3]
    auto u8 = ((clips.detach().to(torch::kFloat32).cpu().clamp(-1, 1) + 1) * 127.5).round().to(torch::kUInt8);
    u8 = u8.permute({0, 2, 3, 4, 1});
    if (scale > 1)
        u8 = u8.repeat_interleave(scale, 2).repeat_interleave(scale, 3);
    const auto n = u8.size(0);
    // Side by side: [T, H, N*W, 3].
    const auto video = torch::cat(u8.unbind(0), 2);
    const std::string stem = "step-" + std::to_string(step);
    std::string name = stem + (mp4Available() ? ".mp4" : ".y4m");
    if (mp4Available())
        writeMp4((fs::path(dir) / name).string(), video, fps);
    else
        writeY4M((fs::path(dir) / name).string(), video, fps);
    // Contact sheet: rows are clips, columns frames: [N*H, T*W, 3].
    std::vector<torch::Tensor> rows;
    for (std::int64_t i = 0; i < n; ++i)
        rows.push_back(torch::cat(u8[i].unbind(0), 1));
    writePng((fs::path(dir) / (stem + ".png")).string(), torch::cat(rows, 0));
    return name;
}

}  // namespace orrery::train
