// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target of the clip decoder (app/media/clipdecoder.cpp, FFmpeg not instrumented): the
// input is a whole sample file (the seeds are the trainer's H.264 MP4 and Y4M, whole and truncated).
// It is written to one file per process and opened; then every frame (up to 64) is asked for in
// order, and a few raw frames out of order, past the end and again. Every failure must be a
// MediaError that names the file; what opens has a size and a frame count within the limits, and
// its frames come out at that size. Anything else (a crash, a sanitizer finding, another
// exception) is a finding.
#include "clipdecoder.h"
#include "fuzzsupport.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QString>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <unistd.h>

using orrery::fuzz::check;
using orrery::media::ClipDecoder;
using orrery::media::MediaError;

namespace {

// One file per process ($TMPDIR), removed at exit (a crash leaves it behind).
struct ClipFile {
    QString path = QDir::temp().filePath(QStringLiteral("orrery-fuzz-media-%1.clip").arg(getpid()));
    QByteArray name = QFile::encodeName(path);
    ~ClipFile() { unlink(name.constData()); }
};

const QString &clipPath()
{
    static const ClipFile file;
    return file.path;
}

// A decoder error names the file it is about.
void checkError(const MediaError &e)
{
    check(e.message().startsWith(clipPath() + QStringLiteral(": ")));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    {
        QFile out(clipPath());
        check(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        check(out.write(reinterpret_cast<const char *>(data), qint64(size)) == qint64(size));
    }
    std::unique_ptr<ClipDecoder> clip;
    try {
        clip = ClipDecoder::open(clipPath());
    } catch (const MediaError &e) {
        checkError(e);
        return 0;
    }
    const auto &info = clip->info();
    check(info.width > 0 && info.width <= ClipDecoder::kMaxSide);
    check(info.height > 0 && info.height <= ClipDecoder::kMaxSide);
    check(info.frameCount > 0 && info.frameCount <= ClipDecoder::kMaxFrames);
    check(info.fps > 0 && info.fps <= 1000);
    const int count = std::min(info.frameCount, 64);
    for (int i = 0; i < count; ++i) {
        try {
            const QImage image = clip->frame(i);
            check(image.width() == info.width && image.height() == info.height);
            check(image.format() == QImage::Format_RGB32);
        } catch (const MediaError &e) {
            checkError(e);
        }
    }
    // Out of order (each a seek, some after the decoder drained), past the end, and the last
    // frame again (the one it holds).
    const int last = info.frameCount - 1;
    for (const int i : {last, 0, last / 2, info.frameCount, -1, last}) {
        try {
            QString format;
            const QByteArray raw = clip->rawFrame(i, &format);
            check(i >= 0 && i < info.frameCount);
            check(!raw.isEmpty() && !format.isEmpty());
        } catch (const MediaError &e) {
            checkError(e);
        }
    }
    return 0;
}
