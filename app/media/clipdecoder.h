// SPDX-License-Identifier: GPL-3.0-or-later
//
// One sample clip (the trainer's H.264 MP4, or its Y4M fallback) opened for frame-exact random
// access: frame(i) is the i-th frame in presentation order, whatever was asked before.
//
// Opening reads the packets once (no decoding) to index every frame's timestamp and the key
// frames: the frame count is exact, and a seek goes to the key frame at or before the target and
// decodes forward to exactly the target's timestamp. Asking for the next frame in order just
// decodes on. Frames come out as RGB32 QImages at the clip's own size (scale them for display,
// nearest-neighbour).
//
// Not thread-safe: one decoder belongs to one thread (FrameSource gives each clip its own).
// Every failure — a missing, truncated or corrupt file, an absurd size — throws MediaError with
// the file and what went wrong; nothing in a bad file can crash the caller.
#pragma once

#include <QImage>
#include <QString>

#include <memory>
#include <stdexcept>

namespace orrery::media {

class MediaError : public std::runtime_error {
public:
    explicit MediaError(const QString &message) : std::runtime_error(message.toStdString()) { }
    QString message() const { return QString::fromStdString(what()); }
};

struct ClipInfo {
    int width = 0, height = 0;
    int frameCount = 0;
    double fps = 0;  // frames per second (the stream's average rate; 25 when it does not say)
    QString codec;  // "h264", "rawvideo", ...
    QString container;  // "mov,mp4,m4a,3gp,3g2,mj2", "yuv4mpegpipe", ...
};

class ClipDecoder {
public:
    // Limits on what a clip may claim, so a corrupt header cannot make us allocate gigabytes:
    // 8192 px a side (8K), 100,000 frames (over an hour at 24 fps; samples are seconds).
    static constexpr int kMaxSide = 8192;
    static constexpr int kMaxFrames = 100'000;

    static std::unique_ptr<ClipDecoder> open(const QString &path);
    ~ClipDecoder();
    ClipDecoder(const ClipDecoder &) = delete;
    ClipDecoder &operator=(const ClipDecoder &) = delete;

    const ClipInfo &info() const;
    const QString &path() const;
    // Frame `index` (0 ≤ index < frameCount) as RGB32 at the clip's size. Throws MediaError when
    // it cannot be decoded (a damaged file: the frames before the damage still decode).
    QImage frame(int index);
    // Decodes frame `index` and returns its planes as decoded (before any colour conversion),
    // tightly packed, plane after plane: what `ffmpeg -pix_fmt <native>` writes. For tests that
    // compare our decode with the ffmpeg command line's.
    QByteArray rawFrame(int index, QString *pixelFormat = nullptr);

    struct Impl;

private:
    explicit ClipDecoder(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> d;
};

}  // namespace orrery::media
