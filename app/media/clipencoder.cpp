// SPDX-License-Identifier: GPL-3.0-or-later
#include "clipencoder.h"

#include "ffmpeg.h"

#include <QFile>
#include <QPainter>

namespace orrery::media {

struct ClipEncoder::Impl {
    QString path, partial;
    QSize size;
    ff::Output format;
    ff::Codec codec;
    ff::Sws sws;
    ff::Frame frame{av_frame_alloc()};
    ff::Packet packet{av_packet_alloc()};
    AVStream *stream = nullptr;
    int count = 0;
    bool finished = false;

    void check(int rc, const char *what) const
    {
        if (rc < 0)
            throw MediaError(
                QStringLiteral("%1: %2: %3").arg(path, QString::fromUtf8(what), ff::errorText(rc)));
    }
    void drain()
    {
        while (true) {
            const int rc = avcodec_receive_packet(codec.get(), packet.get());
            if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
                return;
            check(rc, "encode");
            packet->duration = 1;  // as the trainer: x264 leaves the last one 0 and MP4 drops it
            av_packet_rescale_ts(packet.get(), codec->time_base, stream->time_base);
            packet->stream_index = stream->index;
            check(av_interleaved_write_frame(format.get(), packet.get()), "write");
        }
    }
};

ClipEncoder::ClipEncoder(const QString &path, QSize size, int fps) : d(std::make_unique<Impl>())
{
    ff::routeLogging();
    d->path = path;
    d->partial = path + QStringLiteral(".partial.mp4");
    d->size = QSize(size.width() + size.width() % 2, size.height() + size.height() % 2);
    if (d->size.isEmpty() || d->size.width() > ClipDecoder::kMaxSide ||
        d->size.height() > ClipDecoder::kMaxSide)
        throw MediaError(
            QStringLiteral("%1: cannot encode %2x%3 frames").arg(path).arg(size.width()).arg(size.height()));
    const AVCodec *encoder = avcodec_find_encoder(AV_CODEC_ID_H264);
    if (!encoder)
        encoder = avcodec_find_encoder(AV_CODEC_ID_MPEG4);  // an FFmpeg built without libx264
    if (!encoder)
        throw MediaError(QStringLiteral("%1: this FFmpeg has no H.264 or MPEG-4 encoder").arg(path));
    const QByteArray name = QFile::encodeName(d->partial);
    AVFormatContext *raw = nullptr;
    d->check(avformat_alloc_output_context2(&raw, nullptr, "mp4", name.constData()), "output");
    d->format.reset(raw);
    d->codec.reset(avcodec_alloc_context3(encoder));
    AVCodecContext *c = d->codec.get();
    c->width = d->size.width();
    c->height = d->size.height();
    c->time_base = AVRational{1, std::max(1, fps)};
    c->framerate = AVRational{std::max(1, fps), 1};
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->gop_size = 12;
    c->max_b_frames = 0;
    if (d->format->oformat->flags & AVFMT_GLOBALHEADER)
        c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    av_opt_set(c->priv_data, "preset", "veryfast", 0);
    av_opt_set(c->priv_data, "crf", "18", 0);
    d->check(avcodec_open2(c, encoder, nullptr), "open the encoder");
    d->stream = avformat_new_stream(d->format.get(), nullptr);
    if (!d->stream)
        throw MediaError(QStringLiteral("%1: cannot add a stream").arg(path));
    d->check(avcodec_parameters_from_context(d->stream->codecpar, c), "stream parameters");
    d->stream->time_base = c->time_base;
    d->check(avio_open(&d->format->pb, name.constData(), AVIO_FLAG_WRITE), "open the file");
    d->check(avformat_write_header(d->format.get(), nullptr), "write the header");
    d->sws.reset(sws_getContext(c->width, c->height, AV_PIX_FMT_BGRA, c->width, c->height, AV_PIX_FMT_YUV420P,
                                SWS_BILINEAR, nullptr, nullptr, nullptr));
    d->frame->format = AV_PIX_FMT_YUV420P;
    d->frame->width = c->width;
    d->frame->height = c->height;
    d->check(av_frame_get_buffer(d->frame.get(), 0), "frame buffer");
}

ClipEncoder::~ClipEncoder()
{
    if (!d->finished) {
        d->format.reset();
        QFile::remove(d->partial);
    }
}

void ClipEncoder::add(const QImage &in)
{
    QImage image = in.convertToFormat(QImage::Format_RGB32);
    if (image.size() != d->size) {
        QImage padded(d->size, QImage::Format_RGB32);
        padded.fill(Qt::black);
        QPainter p(&padded);
        const bool fits = image.width() <= d->size.width() && image.height() <= d->size.height();
        p.drawImage(
            QRect(QPoint(0, 0), fits ? image.size() : image.size().scaled(d->size, Qt::KeepAspectRatio)),
            image);
        p.end();
        image = padded;
    }
    d->check(av_frame_make_writable(d->frame.get()), "frame");
    const uint8_t *src[1] = {image.constBits()};
    const int stride[1] = {int(image.bytesPerLine())};
    sws_scale(d->sws.get(), src, stride, 0, d->size.height(), d->frame->data, d->frame->linesize);
    d->frame->pts = d->count++;
    d->check(avcodec_send_frame(d->codec.get(), d->frame.get()), "send a frame");
    d->drain();
}

void ClipEncoder::finish()
{
    d->check(avcodec_send_frame(d->codec.get(), nullptr), "flush");
    d->drain();
    d->check(av_write_trailer(d->format.get()), "write the trailer");
    d->format.reset();
    QFile::remove(d->path);
    if (!QFile::rename(d->partial, d->path)) {
        QFile::remove(d->partial);
        throw MediaError(QStringLiteral("%1: cannot move the finished file into place").arg(d->path));
    }
    d->finished = true;
}

int ClipEncoder::frames() const
{
    return d->count;
}

}  // namespace orrery::media
