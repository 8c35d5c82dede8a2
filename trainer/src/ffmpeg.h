// SPDX-License-Identifier: GPL-3.0-or-later
//
// The FFmpeg wall of the trainer: the C headers and one RAII owner per FFmpeg handle, shared by
// the sample writer (video.cpp) and the video data reader (videodata.cpp). Included only by those
// two, and only when the trainer is built with FFmpeg (ORRERY_TRAINER_FFMPEG).
#pragma once

#if ORRERY_TRAINER_FFMPEG

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

namespace orrery::train::ffmpeg {

struct CodecFree {
    void operator()(AVCodecContext *c) const { avcodec_free_context(&c); }
};
// An output context (closes its file first).
struct OutputFree {
    void operator()(AVFormatContext *c) const
    {
        if (c && c->pb)
            avio_closep(&c->pb);
        avformat_free_context(c);
    }
};
// An input context opened by avformat_open_input.
struct InputClose {
    void operator()(AVFormatContext *c) const { avformat_close_input(&c); }
};
struct FrameFree {
    void operator()(AVFrame *f) const { av_frame_free(&f); }
};
struct PacketFree {
    void operator()(AVPacket *p) const { av_packet_free(&p); }
};
struct SwsFree {
    void operator()(SwsContext *s) const { sws_freeContext(s); }
};
// A custom I/O context and its buffer (avformat_close_input leaves both to us).
struct IOFree {
    void operator()(AVIOContext *c) const
    {
        if (c)
            av_freep(&c->buffer);
        avio_context_free(&c);
    }
};

using Codec = std::unique_ptr<AVCodecContext, CodecFree>;
using Output = std::unique_ptr<AVFormatContext, OutputFree>;
using Input = std::unique_ptr<AVFormatContext, InputClose>;
using Frame = std::unique_ptr<AVFrame, FrameFree>;
using Packet = std::unique_ptr<AVPacket, PacketFree>;
using Sws = std::unique_ptr<SwsContext, SwsFree>;
using IO = std::unique_ptr<AVIOContext, IOFree>;

// FFmpeg's text for an error code.
inline std::string errorText(int rc)
{
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(rc, buf, sizeof buf);
    return buf;
}

}  // namespace orrery::train::ffmpeg

#endif
