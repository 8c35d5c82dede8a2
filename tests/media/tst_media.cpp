// SPDX-License-Identifier: GPL-3.0-or-later
// app/media on the samples the real trainer writes in the test: the decoder gives the right frame
// count and size, and every frame equals the ffmpeg command line's decode of the same frame (the
// decoded planes byte for byte, and the RGB conversion); random access is frame-exact; truncated
// and bit-flipped copies of a real sample give errors, never a crash; the frame source decodes
// ahead of a playhead within its budget; the A/B difference of a clip with itself is black; the
// MP4 export's file decodes back to what was written.
#include "testsupport.h"

#include "clipdecoder.h"
#include "clipencoder.h"
#include "framesource.h"
#include "imageops.h"

#include <QDir>
#include <QGuiApplication>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace orrery::media;

namespace {

// What `ffmpeg` decodes: every frame of `file` as raw `pixelFormat`, concatenated.
QByteArray ffmpegDecode(const QString &file, const QString &pixelFormat)
{
    QProcess p;
    p.start(QStringLiteral("ffmpeg"),
            {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-i"), file, QStringLiteral("-f"),
             QStringLiteral("rawvideo"), QStringLiteral("-pix_fmt"), pixelFormat, QStringLiteral("-")});
    if (!p.waitForFinished(60'000) || p.exitCode() != 0)
        qWarning("ffmpeg: %s", p.readAllStandardError().constData());
    return p.readAllStandardOutput();
}

QByteArray imageBytes(const QImage &image)
{
    QByteArray out;
    for (int y = 0; y < image.height(); ++y)
        out.append(reinterpret_cast<const char *>(image.constScanLine(y)), image.width() * 4);
    return out;
}

}  // namespace

class TestMedia : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_mp4, m_sheet;
    // The sample of tests/trainer/test.yaml's model at tiny's clip shape (set below): 8 frames of 32x32.
    static constexpr int kFrames = 8, kClips = 4, kSize = 32, kScale = 4;

private Q_SLOTS:
    void initTestCase()
    {
        const QString trainer = qEnvironmentVariable("ORRERY_TRAINER");
        QVERIFY2(QFileInfo(trainer).isExecutable(),
                 "ORRERY_TRAINER must name orrery-train (run through ctest)");
        QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("ffmpeg")).isEmpty(), "ffmpeg is needed");
        const QString run = m_dir.filePath(QStringLiteral("run"));
        const auto r = orrery::test::runProcess(
            trainer,
            {QStringLiteral("--config"), orrery::test::sourceFile(QStringLiteral("tests/trainer/test.yaml")),
             QStringLiteral("--run-dir"), run, QStringLiteral("--set"), QStringLiteral("train.steps=2"),
             QStringLiteral("--set"), QStringLiteral("train.sample_every=2"), QStringLiteral("--set"),
             QStringLiteral("sample.steps=2"), QStringLiteral("--set"),
             QStringLiteral("data.frames=%1").arg(kFrames), QStringLiteral("--set"),
             QStringLiteral("data.size=%1").arg(kSize)},
            {}, QProcessEnvironment::systemEnvironment(), 120'000);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        m_mp4 = run + QStringLiteral("/samples/step-2.mp4");
        m_sheet = run + QStringLiteral("/samples/step-2.png");
        QVERIFY2(QFileInfo::exists(m_mp4),
                 qPrintable(QDir(run + QStringLiteral("/samples")).entryList().join(u' ')));
    }

    void decodesTheTrainersMp4LikeTheFfmpegCommandLine()
    {
        auto clip = ClipDecoder::open(m_mp4);
        const ClipInfo &info = clip->info();
        QCOMPARE(info.frameCount, kFrames);
        QCOMPARE(info.width, kClips * kSize * kScale);
        QCOMPARE(info.height, kSize * kScale);
        QCOMPARE(info.codec, QStringLiteral("h264"));
        QCOMPARE(info.fps, 8.0);

        // The decoded planes, byte for byte.
        QString format;
        clip->rawFrame(0, &format);
        QCOMPARE(format, QStringLiteral("yuv420p"));
        const QByteArray yuv = ffmpegDecode(m_mp4, format);
        const qsizetype planeBytes = info.width * info.height * 3 / 2;
        QCOMPARE(yuv.size(), planeBytes * kFrames);
        // Out of order on purpose: every access is a seek or a step, and must land exactly.
        for (int i : {5, 0, 7, 6, 1, 2, 3, 4, 4}) {
            const QByteArray ours = clip->rawFrame(i);
            QVERIFY2(ours == yuv.mid(i * planeBytes, planeBytes),
                     qPrintable(QStringLiteral("frame %1").arg(i)));
        }
        // And the RGB the view paints equals `ffmpeg -pix_fmt bgra`'s.
        const QByteArray bgra = ffmpegDecode(m_mp4, QStringLiteral("bgra"));
        const qsizetype rgbBytes = qsizetype(info.width) * info.height * 4;
        QCOMPARE(bgra.size(), rgbBytes * kFrames);
        for (int i = kFrames - 1; i >= 0; --i) {
            const QImage image = clip->frame(i);
            QCOMPARE(image.size(), QSize(info.width, info.height));
            QVERIFY2(imageBytes(image) == bgra.mid(i * rgbBytes, rgbBytes),
                     qPrintable(QStringLiteral("frame %1").arg(i)));
        }
        // Frames differ from each other (a decoder stuck on one frame would pass the size checks).
        QVERIFY(clip->frame(0) != clip->frame(kFrames - 1));
    }

    void theContactSheetIsAnImage()
    {
        const QImage sheet(m_sheet);
        QCOMPARE(sheet.size(), QSize(kFrames * kSize * kScale, kClips * kSize * kScale));
    }

    void damagedFilesGiveErrorsNeverACrash()
    {
        // The decoder's fuzz pass: every truncation point in steps, and bit flips at random
        // places, of a real sample. Each either opens and yields frames or errors, and says so.
        QFile f(m_mp4);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray good = f.readAll();
        const QString bad = m_dir.filePath(QStringLiteral("bad.mp4"));
        int opened = 0, errors = 0;
        auto tryDecode = [&](const QByteArray &bytes) {
            QFile out(bad);
            QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
            out.write(bytes);
            out.close();
            try {
                auto clip = ClipDecoder::open(bad);
                ++opened;
                QVERIFY(clip->info().frameCount > 0 && clip->info().frameCount <= ClipDecoder::kMaxFrames);
                for (int i = 0; i < clip->info().frameCount; ++i) {
                    try {
                        const QImage image = clip->frame(i);
                        QCOMPARE(image.size(), QSize(clip->info().width, clip->info().height));
                    } catch (const MediaError &e) {
                        ++errors;
                        QVERIFY(e.message().contains(bad));
                    }
                }
            } catch (const MediaError &e) {
                ++errors;
                QVERIFY2(e.message().startsWith(bad + QStringLiteral(": ")), qPrintable(e.message()));
            }
        };
        for (qsizetype cut = 0; cut < good.size(); cut += std::max<qsizetype>(1, good.size() / 64))
            tryDecode(good.left(cut));
        QRandomGenerator rng(20261123);
        for (int round = 0; round < 200; ++round) {
            QByteArray flipped = good;
            for (int k = 0; k < 1 + round % 8; ++k) {
                const auto at = qsizetype(rng.bounded(quint32(flipped.size())));
                flipped[at] = char(flipped[at] ^ (1 << rng.bounded(8)));
            }
            tryDecode(flipped);
        }
        // A playlist named like a sample is refused: FFmpeg must not follow it to other files.
        {
            QFile playlist(bad);
            QVERIFY(playlist.open(QIODevice::WriteOnly | QIODevice::Truncate));
            playlist.write("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n" + QFile::encodeName(m_mp4) +
                           "\n#EXT-X-ENDLIST\n");
        }
        QVERIFY_THROWS_EXCEPTION(MediaError, ClipDecoder::open(bad));
        QVERIFY(errors > 0);  // the damage was seen
        QVERIFY(opened > 0);  // and flips in the picture data still open
    }

    void aFrameSourceDecodesAheadWithinItsBudget()
    {
        // A budget of 3 frames for an 8-frame clip: the window moves with the playhead.
        const qint64 frameBytes = qint64(kClips * kSize * kScale) * kSize * kScale * 4;
        FrameSource source(m_mp4, 3 * frameBytes);
        QSignalSpy opened(&source, &FrameSource::opened);
        QVERIFY(opened.wait(10'000));
        QCOMPARE(source.capacity(), 3);
        auto reference = ClipDecoder::open(m_mp4);
        for (int head : {0, 5, 2, 7}) {
            source.setPlayhead(head, true);
            QTRY_VERIFY(!source.frame(head).isNull());
            QCOMPARE(source.frame(head), reference->frame(head));
            // Ahead of the playhead (wrapping at the end) fills in; far behind it is evicted.
            const int next = (head + 1) % kFrames;
            QTRY_VERIFY(!source.frame(next).isNull());
        }
        QTRY_VERIFY(source.frame(2).isNull());  // out of the last window (7, 0, then 6 behind)

        // A clip that fits is decoded once and then loops without decoding.
        FrameSource whole(m_mp4);
        QVERIFY(QSignalSpy(&whole, &FrameSource::opened).wait(10'000));
        QCOMPARE(whole.capacity(), kFrames);
        QTRY_COMPARE(whole.decodedCount(), qint64(kFrames));
        for (int lap = 0; lap < 3; ++lap)
            for (int i = 0; i < kFrames; ++i) {
                whole.setPlayhead(i, true);
                QVERIFY(!whole.frame(i).isNull());
            }
        QTest::qWait(50);
        QCOMPARE(whole.decodedCount(), qint64(kFrames));
    }

    void aMissingOrCorruptFileFailsTheSource()
    {
        FrameSource missing(m_dir.filePath(QStringLiteral("nope.mp4")));
        QSignalSpy failed(&missing, &FrameSource::failed);
        QVERIFY(failed.wait(10'000));
        QCOMPARE(missing.state(), FrameSource::State::Failed);
        QVERIFY2(missing.error().contains(QStringLiteral("nope.mp4")), qPrintable(missing.error()));
    }

    void theDifferenceOfAClipWithItselfIsBlack()
    {
        auto clip = ClipDecoder::open(m_mp4);
        const QImage a = clip->frame(3);
        const QImage diff = absoluteDifference(a, clip->frame(3));
        QCOMPARE(diff.size(), a.size());
        for (int y = 0; y < diff.height(); ++y)
            for (int x = 0; x < diff.width(); ++x)
                QCOMPARE(diff.pixel(x, y) & 0xffffff, 0u);
        // And of two different frames it is not.
        const QImage other = absoluteDifference(a, clip->frame(7));
        bool nonBlack = false;
        for (int y = 0; y < other.height() && !nonBlack; ++y)
            for (int x = 0; x < other.width() && !nonBlack; ++x)
                nonBlack = (other.pixel(x, y) & 0xffffff) != 0;
        QVERIFY(nonBlack);
    }

    void nearestNeighbourFitIsWholeMultiples()
    {
        QCOMPARE(fitRect(QSize(32, 32), QRect(0, 0, 260, 300)), QRect(2, 22, 256, 256));
        QCOMPARE(fitRect(QSize(512, 128), QRect(0, 0, 256, 256)), QRect(0, 96, 256, 64));
    }

    void theExportWritesAnMp4ThatDecodesBack()
    {
        auto clip = ClipDecoder::open(m_mp4);
        const QString out = m_dir.filePath(QStringLiteral("export.mp4"));
        {
            ClipEncoder encoder(out, QSize(clip->info().width + 1, clip->info().height), 8);  // odd: padded
            for (int i = 0; i < kFrames; ++i)
                encoder.add(clip->frame(i));
            QVERIFY(!QFileInfo::exists(out));  // only complete files appear
            encoder.finish();
        }
        auto back = ClipDecoder::open(out);
        QCOMPARE(back->info().frameCount, kFrames);
        QCOMPARE(back->info().width, clip->info().width + 2);
        // Lossy, but close: the mean absolute difference of a frame is small.
        const QImage a = clip->frame(4), b = back->frame(4).copy(0, 0, a.width(), a.height());
        const QImage diff = absoluteDifference(a, b);
        qint64 sum = 0;
        for (int y = 0; y < diff.height(); ++y)
            for (int x = 0; x < diff.width(); ++x)
                sum += qRed(diff.pixel(x, y)) + qGreen(diff.pixel(x, y)) + qBlue(diff.pixel(x, y));
        QVERIFY2(double(sum) / (3.0 * diff.width() * diff.height()) < 4.0,
                 "the export is not the frames written");

        // Dropped without finish(): nothing is left.
        {
            ClipEncoder abandoned(m_dir.filePath(QStringLiteral("abandoned.mp4")), QSize(64, 64), 8);
            abandoned.add(clip->frame(0));
        }
        QVERIFY(QDir(m_dir.path()).entryList({QStringLiteral("abandoned*")}).isEmpty());
    }
};

ORRERY_TEST_MAIN(TestMedia, QGuiApplication)
#include "tst_media.moc"
