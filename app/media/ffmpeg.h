// SPDX-License-Identifier: GPL-3.0-or-later
//
// The FFmpeg wall of the app (ARCHITECTURE.md): the C headers and one RAII owner per FFmpeg
// handle. Included only by app/media's .cpp files; nothing outside app/media sees FFmpeg. The
// trainer keeps its own copy (trainer/src/ffmpeg.h): it shares no code with the app, only formats
// (ARCHITECTURE.md), and builds where the app's tree is not.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <QLoggingCategory>
#include <QString>

#include <memory>

Q_DECLARE_LOGGING_CATEGORY(lcMedia)

namespace orrery::media::ff {

struct CodecFree {
    void operator()(AVCodecContext *c) const { avcodec_free_context(&c); }
};
struct InputClose {
    void operator()(AVFormatContext *c) const { avformat_close_input(&c); }
};
struct OutputFree {  // an output context: closes its file first
    void operator()(AVFormatContext *c) const
    {
        if (c && c->pb)
            avio_closep(&c->pb);
        avformat_free_context(c);
    }
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

using Codec = std::unique_ptr<AVCodecContext, CodecFree>;
using Input = std::unique_ptr<AVFormatContext, InputClose>;
using Output = std::unique_ptr<AVFormatContext, OutputFree>;
using Frame = std::unique_ptr<AVFrame, FrameFree>;
using Packet = std::unique_ptr<AVPacket, PacketFree>;
using Sws = std::unique_ptr<SwsContext, SwsFree>;

// FFmpeg's text for an error code.
inline QString errorText(int rc)
{
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(rc, buf, sizeof buf);
    return QString::fromUtf8(buf);
}

// FFmpeg logs through av_log to stderr by default; a corrupt sample would print pages of
// decoder complaints. Once per process: only errors, and through our logging category.
void routeLogging();

}  // namespace orrery::media::ff
