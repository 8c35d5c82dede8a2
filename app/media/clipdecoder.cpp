// SPDX-License-Identifier: GPL-3.0-or-later
#include "clipdecoder.h"

#include "ffmpeg.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <mutex>
#include <vector>

Q_LOGGING_CATEGORY(lcMedia, "orrery.media", QtInfoMsg)

namespace orrery::media {

namespace ff {

void routeLogging()
{
    static std::once_flag once;
    std::call_once(once, [] {
        av_log_set_level(AV_LOG_ERROR);
        av_log_set_callback([](void *avcl, int level, const char *fmt, va_list args) {
            if (level > av_log_get_level())
                return;
            char line[1024];
            int prefix = 1;
            av_log_format_line2(avcl, level, fmt, args, line, sizeof line, &prefix);
            qCDebug(lcMedia, "ffmpeg: %s", QByteArray(line).trimmed().constData());
        });
    });
}

}  // namespace ff

struct ClipDecoder::Impl {
    QString path;
    ClipInfo info;
    ff::Input input;
    ff::Codec codec;
    ff::Packet packet{av_packet_alloc()};
    ff::Frame decoded{av_frame_alloc()};
    ff::Sws sws;
    int swsWidth = 0, swsHeight = 0, swsFormat = -1;
    int stream = -1;
    // Every frame's timestamp (stream time base), in presentation order: frame i is pts[i].
    std::vector<int64_t> pts;
    int next = 0;  // the frame the decoder produces next without a seek; -1: unknown
    int current = -1;  // the frame `decoded` holds; -1: none
    bool drained = false;  // the decoder was flushed at the end of the file: seek before reuse

    [[noreturn]] void fail(const QString &what) const
    {
        throw MediaError(QStringLiteral("%1: %2").arg(path, what));
    }
    void openInput();
    void index();
    void seek(int64_t ts);
    const AVFrame *decode(int index);
    bool readAndSend();  // false: end of file (the decoder is draining)
    int indexOf(int64_t ts) const;
};

void ClipDecoder::Impl::openInput()
{
    AVFormatContext *raw = nullptr;
    const QByteArray name = QFile::encodeName(path);
    // A sample may come from a cluster: only local files, and only the containers samples come
    // in. A playlist (HLS, concat) named .mp4 would otherwise make FFmpeg open other files or URLs.
    // gif: TensorBoard's add_video and wandb.Video(format="gif") store clips as animated GIFs.
    AVDictionary *options = nullptr;
    av_dict_set(&options, "protocol_whitelist", "file", 0);
    av_dict_set(&options, "format_whitelist",
                "mov,yuv4mpegpipe,matroska,avi,gif,png_pipe,jpeg_pipe,webp_pipe", 0);
    // An image sample (a grid, a contact sheet) is a clip of one frame, read by its own demuxer:
    // the probe would pick image2, which reads numbered sequences of other files (not allowed).
    const AVInputFormat *image = nullptr;
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png"))
        image = av_find_input_format("png_pipe");
    else if (suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg"))
        image = av_find_input_format("jpeg_pipe");
    else if (suffix == QLatin1String("webp"))
        image = av_find_input_format("webp_pipe");
    const int opened = avformat_open_input(&raw, name.constData(), image, &options);
    av_dict_free(&options);
    if (opened < 0)
        fail(QStringLiteral("cannot open: %1").arg(ff::errorText(opened)));
    input.reset(raw);
    if (const int rc = avformat_find_stream_info(input.get(), nullptr); rc < 0)
        fail(QStringLiteral("cannot read the streams: %1").arg(ff::errorText(rc)));
    stream = av_find_best_stream(input.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (stream < 0)
        fail(QStringLiteral("no video stream"));
}

// One pass over the packets, no decoding: the exact frame count and each frame's timestamp.
void ClipDecoder::Impl::index()
{
    int64_t synthetic = 0;
    while (true) {
        const int rc = av_read_frame(input.get(), packet.get());
        if (rc < 0)
            break;  // the end, or damage: what was read is what the file has
        if (packet->stream_index == stream) {
            int64_t ts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
            if (ts == AV_NOPTS_VALUE)
                ts = synthetic;
            synthetic = ts + 1;
            pts.push_back(ts);
            if (pts.size() > size_t(kMaxFrames))
                fail(QStringLiteral("more than %1 frames").arg(kMaxFrames));
        }
        av_packet_unref(packet.get());
    }
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    if (pts.empty())
        fail(QStringLiteral("no frames (an empty or truncated file)"));
}

void ClipDecoder::Impl::seek(int64_t ts)
{
    avcodec_flush_buffers(codec.get());
    drained = false;
    current = -1;
    next = -1;
    if (av_seek_frame(input.get(), stream, ts, AVSEEK_FLAG_BACKWARD) >= 0)
        return;
    // Some inputs cannot seek (or not there): start over from the top, decoding forward.
    input.reset();
    openInput();
    next = 0;
}

int ClipDecoder::Impl::indexOf(int64_t ts) const
{
    const auto it = std::lower_bound(pts.begin(), pts.end(), ts);
    if (it == pts.end())
        return int(pts.size());
    return int(it - pts.begin());
}

bool ClipDecoder::Impl::readAndSend()
{
    while (true) {
        const int rc = av_read_frame(input.get(), packet.get());
        if (rc < 0) {
            avcodec_send_packet(codec.get(), nullptr);  // drain what the decoder holds
            drained = true;
            return false;
        }
        if (packet->stream_index != stream) {
            av_packet_unref(packet.get());
            continue;
        }
        const int sent = avcodec_send_packet(codec.get(), packet.get());
        av_packet_unref(packet.get());
        // A damaged packet is skipped (AVERROR_INVALIDDATA and friends): the frames it held are
        // reported missing when asked for; every other frame still decodes.
        if (sent < 0 && sent != AVERROR(EAGAIN))
            qCDebug(lcMedia) << path << "packet rejected:" << ff::errorText(sent);
        return true;
    }
}

const AVFrame *ClipDecoder::Impl::decode(int target)
{
    if (target < 0 || target >= info.frameCount)
        fail(QStringLiteral("no frame %1 (the clip has %2)").arg(target).arg(info.frameCount));
    if (target == current)
        return decoded.get();
    if (!input)  // a reopen after a failed seek failed (the file went away): try again, or say why
        openInput();
    bool fromStart = false;
    if (target != next || drained)
        seek(pts[size_t(target)]);
    while (true) {
        const int rc = avcodec_receive_frame(codec.get(), decoded.get());
        if (rc == AVERROR(EAGAIN)) {
            if (!drained) {
                readAndSend();
                continue;
            }
        }
        if (rc < 0) {  // AVERROR_EOF after draining, or an error
            current = -1;
            fail(QStringLiteral("frame %1 of %2 cannot be decoded (the file is truncated or damaged)")
                     .arg(target)
                     .arg(info.frameCount));
        }
        if (decoded->width <= 0 || decoded->height <= 0 || decoded->width > kMaxSide ||
            decoded->height > kMaxSide)
            fail(QStringLiteral("a frame of %1x%2 pixels").arg(decoded->width).arg(decoded->height));
        const int64_t ts =
            decoded->best_effort_timestamp != AV_NOPTS_VALUE ? decoded->best_effort_timestamp : decoded->pts;
        const int at = ts == AV_NOPTS_VALUE ? (next >= 0 ? next : target) : indexOf(ts);
        next = at + 1;
        if (at < target)
            continue;
        if (at == target) {
            current = target;
            return decoded.get();
        }
        // Past the target: the seek landed after it, or its packet was damaged. Try once from
        // the top of the file, then give up on this frame.
        if (fromStart)
            fail(QStringLiteral("frame %1 of %2 is missing (the file is damaged)")
                     .arg(target)
                     .arg(info.frameCount));
        fromStart = true;
        seek(pts.front());
    }
}

ClipDecoder::ClipDecoder(std::unique_ptr<Impl> impl) : d(std::move(impl))
{ }
ClipDecoder::~ClipDecoder() = default;

std::unique_ptr<ClipDecoder> ClipDecoder::open(const QString &path)
{
    ff::routeLogging();
    auto d = std::make_unique<Impl>();
    d->path = path;
    if (!d->packet || !d->decoded)
        d->fail(QStringLiteral("out of memory"));
    d->openInput();
    const AVStream *st = d->input->streams[d->stream];
    const AVCodecParameters *par = st->codecpar;
    if (par->width <= 0 || par->height <= 0 || par->width > kMaxSide || par->height > kMaxSide)
        d->fail(QStringLiteral("a video of %1x%2 pixels").arg(par->width).arg(par->height));
    const AVCodec *decoder = avcodec_find_decoder(par->codec_id);
    if (!decoder)
        d->fail(QStringLiteral("no decoder for the codec '%1' in this FFmpeg")
                    .arg(QString::fromUtf8(avcodec_get_name(par->codec_id))));
    d->codec.reset(avcodec_alloc_context3(decoder));
    if (!d->codec || avcodec_parameters_to_context(d->codec.get(), par) < 0)
        d->fail(QStringLiteral("cannot set up the decoder"));
    // One thread per clip: FrameSource already decodes every tile on a thread of its own, and
    // frame threading would delay each frame by the thread count.
    d->codec->thread_count = 1;
    if (const int rc = avcodec_open2(d->codec.get(), decoder, nullptr); rc < 0)
        d->fail(QStringLiteral("cannot open the %1 decoder: %2")
                    .arg(QString::fromUtf8(decoder->name), ff::errorText(rc)));

    ClipInfo &info = d->info;
    info.width = par->width;
    info.height = par->height;
    info.codec = QString::fromUtf8(avcodec_get_name(par->codec_id));
    info.container = QString::fromUtf8(d->input->iformat->name);
    AVRational rate = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
    info.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 25.0;
    if (!(info.fps > 0 && info.fps <= 1000))
        info.fps = 25.0;

    d->index();
    info.frameCount = int(d->pts.size());
    d->seek(d->pts.front());
    return std::unique_ptr<ClipDecoder>(new ClipDecoder(std::move(d)));
}

const ClipInfo &ClipDecoder::info() const
{
    return d->info;
}
const QString &ClipDecoder::path() const
{
    return d->path;
}

QImage ClipDecoder::frame(int index)
{
    const AVFrame *f = d->decode(index);
    const int w = d->info.width, h = d->info.height;
    if (!d->sws || d->swsWidth != f->width || d->swsHeight != f->height || d->swsFormat != f->format) {
        // Bicubic is what the ffmpeg command line's auto-inserted scaler uses: at the same size
        // both take swscale's same unscaled path, so our pixels equal `ffmpeg -pix_fmt bgra`'s.
        d->sws.reset(sws_getContext(f->width, f->height, AVPixelFormat(f->format), w, h, AV_PIX_FMT_BGRA,
                                    SWS_BICUBIC, nullptr, nullptr, nullptr));
        if (!d->sws)
            d->fail(QStringLiteral("cannot convert frames of pixel format '%1'")
                        .arg(QString::fromUtf8(av_get_pix_fmt_name(AVPixelFormat(f->format)))));
        // The frame's own range and matrix, as the ffmpeg command line's scale filter takes
        // them: the trainer's Y4M is full range (XCOLORRANGE=FULL), its MP4 limited.
        int *inverse = nullptr, *table = nullptr, inFull = 0, outFull = 0, brightness = 0, contrast = 0,
            saturation = 0;
        sws_getColorspaceDetails(d->sws.get(), &inverse, &inFull, &table, &outFull, &brightness, &contrast,
                                 &saturation);
        const int *matrix =
            sws_getCoefficients(f->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : f->colorspace);
        if (f->color_range != AVCOL_RANGE_UNSPECIFIED)
            inFull = f->color_range == AVCOL_RANGE_JPEG;
        sws_setColorspaceDetails(d->sws.get(), matrix, inFull, matrix, outFull, brightness, contrast,
                                 saturation);
        d->swsWidth = f->width;
        d->swsHeight = f->height;
        d->swsFormat = f->format;
    }
    QImage image(w, h, QImage::Format_RGB32);  // 0xffRRGGBB: BGRA bytes on little-endian
    if (image.isNull())
        d->fail(QStringLiteral("out of memory for a %1x%2 frame").arg(w).arg(h));
    uint8_t *dst[4] = {image.bits(), nullptr, nullptr, nullptr};
    int dstStride[4] = {int(image.bytesPerLine()), 0, 0, 0};
    sws_scale(d->sws.get(), f->data, f->linesize, 0, f->height, dst, dstStride);
    return image;
}

QByteArray ClipDecoder::rawFrame(int index, QString *pixelFormat)
{
    const AVFrame *f = d->decode(index);
    const auto format = AVPixelFormat(f->format);
    const int size = av_image_get_buffer_size(format, f->width, f->height, 1);
    if (size < 0)
        d->fail(QStringLiteral("cannot size frame %1").arg(index));
    QByteArray out(size, Qt::Uninitialized);
    av_image_copy_to_buffer(reinterpret_cast<uint8_t *>(out.data()), size, f->data, f->linesize, format,
                            f->width, f->height, 1);
    if (pixelFormat)
        *pixelFormat = QString::fromUtf8(av_get_pix_fmt_name(format));
    return out;
}

}  // namespace orrery::media
