// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's figures (bench/RESULTS.md "The video grid"), offscreen, in one run:
//  1. The 16-tile grid playing at 24 fps for --seconds (default 60) with 32x32, 64x64 and
//     256x256 clips: frames painted, dropped frames (VideoGrid's count: late frames and clock
//     skips), frames decoded, and the process's CPU % over the run (getrusage, 100 % = 1 core).
//  2. Decode throughput, frames/s: app/media's ClipDecoder (RGB32 out, one thread) against the
//     ffmpeg command line on the same file (`ffmpeg -benchmark -threads 1 -i F -pix_fmt bgra -f null -`,
//     its rtime: the decode loop without process start).
//  3. PSNR/SSIM of 16 tiles x 8 frames at 256x256 against a reference (the Video tab's reference
//     run; media::QualityReference: luma, Gaussian 11x11 SSIM): the computation alone on frames
//     already decoded, on one thread and on the machine's threads (one task per tile), the
//     reference's 8 frames filtered inside the timing; median and best of 7.
// The clips are made with the ffmpeg command line (testsrc2, a different hue per tile, H.264
// yuv420p like the trainer's), 240 frames (10 s) each, so a 256x256 clip does not fit its frame
// source's 48 MiB budget and keeps decoding while it plays.
//   bench_video [--seconds N] [--sizes 32,64,256] [--quality-only]
#include "clipdecoder.h"
#include "framesource.h"
#include "imageops.h"
#include "playbackclock.h"
#include "videogrid.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <QtConcurrent>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>

using namespace orrery;

namespace {

double cpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
        double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

bool ffmpeg(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral("ffmpeg"),
            QStringList{QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-y")} + args);
    if (!p.waitForFinished(600'000) || p.exitCode() != 0) {
        std::fprintf(stderr, "ffmpeg failed: %s\n", p.readAllStandardError().constData());
        return false;
    }
    return true;
}

QString makeClip(const QString &dir, int size, int i, int frames)
{
    const QString path = QStringLiteral("%1/clip-%2-%3.mp4").arg(dir).arg(size).arg(i);
    if (QFileInfo::exists(path))
        return path;
    ffmpeg({QStringLiteral("-f"),
            QStringLiteral("lavfi"),
            QStringLiteral("-i"),
            QStringLiteral("testsrc2=size=%1x%1:rate=24").arg(size),
            QStringLiteral("-frames:v"),
            QString::number(frames),
            QStringLiteral("-vf"),
            QStringLiteral("hue=h=%1").arg(i * 22),
            QStringLiteral("-c:v"),
            QStringLiteral("libx264"),
            QStringLiteral("-preset"),
            QStringLiteral("veryfast"),
            QStringLiteral("-crf"),
            QStringLiteral("18"),
            QStringLiteral("-g"),
            QStringLiteral("12"),
            QStringLiteral("-bf"),
            QStringLiteral("0"),
            QStringLiteral("-pix_fmt"),
            QStringLiteral("yuv420p"),
            path});
    return path;
}

void playGrid(const QString &dir, int size, int seconds)
{
    gui::VideoGrid grid;
    grid.resize(1280, 800);
    grid.show();
    QList<gui::VideoTile> tiles;
    for (int i = 0; i < gui::VideoGrid::kMaxTiles; ++i) {
        gui::VideoTile t;
        t.run = i + 1;
        t.color = QColor::fromHsv(i * 22, 200, 220);
        t.title = QStringLiteral("run %1").arg(i);
        t.caption = QStringLiteral("optim.lr=%1").arg(1e-4 * (i + 1));
        t.step = 1000;
        t.source = std::make_shared<media::FrameSource>(makeClip(dir, size, i, 240));
        tiles << t;
    }
    grid.setTiles(tiles);
    QElapsedTimer wait;
    wait.start();
    for (const auto &t : tiles)
        while (t.source->state() == media::FrameSource::State::Opening || t.source->frame(0).isNull()) {
            QTest::qWait(10);
            if (wait.elapsed() > 60'000) {
                std::fprintf(stderr, "clips did not open\n");
                return;
            }
        }
    gui::PlaybackClock clock;
    clock.setFrameCount(tiles[0].source->info().frameCount);
    clock.setFps(24);
    QObject::connect(&clock, &gui::PlaybackClock::indexChanged, &grid, [&](int index) {
        grid.addSkipped(clock.skipped());
        clock.resetSkipped();
        grid.setFrameIndex(index, clock.isPlaying());
    });
    grid.setFrameIndex(0, false);
    QTest::qWait(200);
    grid.resetCounters();
    qint64 decodedBefore = 0;
    for (const auto &t : tiles)
        decodedBefore += t.source->decodedCount();
    const double cpu0 = cpuSeconds();
    QElapsedTimer wall;
    wall.start();
    clock.play();
    QTest::qWait(seconds * 1000);
    clock.pause();
    const double elapsed = double(wall.nsecsElapsed()) / 1e9;
    const double cpu = cpuSeconds() - cpu0;
    qint64 decoded = -decodedBefore;
    for (const auto &t : tiles)
        decoded += t.source->decodedCount();
    std::printf("| %dx%d | %d | %.1f | %lld | %lld of %lld | %lld | %d | %.0f %% |\n", size, size,
                int(tiles.size()), elapsed, grid.paintedFrames(), grid.dropped(),
                grid.paintedFrames() * qint64(tiles.size()), decoded, tiles[0].source->capacity(),
                100.0 * cpu / elapsed);
    std::fflush(stdout);
}

void decodeThroughput(const QString &dir, int size, int frames)
{
    const QString path = QStringLiteral("%1/long-%2.mp4").arg(dir).arg(size);
    if (!QFileInfo::exists(path))
        ffmpeg({QStringLiteral("-f"), QStringLiteral("lavfi"), QStringLiteral("-i"),
                QStringLiteral("testsrc2=size=%1x%1:rate=24").arg(size), QStringLiteral("-frames:v"),
                QString::number(frames), QStringLiteral("-c:v"), QStringLiteral("libx264"),
                QStringLiteral("-preset"), QStringLiteral("veryfast"), QStringLiteral("-crf"),
                QStringLiteral("18"), QStringLiteral("-g"), QStringLiteral("12"), QStringLiteral("-bf"),
                QStringLiteral("0"), QStringLiteral("-pix_fmt"), QStringLiteral("yuv420p"), path});
    double ours = 1e9, theirs = 1e9;
    for (int rep = 0; rep < 3; ++rep) {  // best of 3 each, interleaved
        QElapsedTimer t;
        t.start();
        auto clip = media::ClipDecoder::open(path);
        const int n = clip->info().frameCount;
        for (int i = 0; i < n; ++i)
            (void)clip->frame(i);
        ours = std::min(ours, double(t.nsecsElapsed()) / 1e9);
        // ffmpeg's own timing of its decode loop (-benchmark's rtime), so its process start and
        // probing are not counted against it (ours includes opening and indexing the file).
        QProcess p;
        p.start(QStringLiteral("ffmpeg"),
                {QStringLiteral("-hide_banner"), QStringLiteral("-nostats"), QStringLiteral("-benchmark"),
                 QStringLiteral("-threads"), QStringLiteral("1"), QStringLiteral("-i"), path,
                 QStringLiteral("-pix_fmt"), QStringLiteral("bgra"), QStringLiteral("-f"),
                 QStringLiteral("null"), QStringLiteral("-")});
        p.waitForFinished(600'000);
        const QString out = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        const qsizetype at = out.indexOf(QStringLiteral("rtime="));
        if (at >= 0)
            theirs = std::min(theirs, out.mid(at + 6).section(QLatin1Char('s'), 0, 0).toDouble());
    }
    std::printf("| %dx%d | %d | %.0f | %.0f | %.2fx |\n", size, size, frames, frames / ours, frames / theirs,
                theirs / ours);
    std::fflush(stdout);
}

// 16 tiles x 8 frames against 8 reference frames, 256x256: the tiles are the reference plus noise
// of a different amplitude each (what the figures are computed on does not change their cost).
void referenceQuality()
{
    constexpr int kTiles = 16, kFrames = 8, kSide = 256, kReps = 7;
    std::mt19937 rng(31);
    QList<QImage> reference;
    QList<QList<QImage>> tiles(kTiles);
    for (int f = 0; f < kFrames; ++f) {
        QImage r(kSide, kSide, QImage::Format_RGB32);
        for (int y = 0; y < kSide; ++y)
            for (int x = 0; x < kSide; ++x)
                r.setPixel(x, y, qRgb((x + f * 5) % 256, (y * 2 + f) % 256, (x ^ y) % 256));
        reference << r;
        for (int t = 0; t < kTiles; ++t) {
            std::uniform_int_distribution<int> noise(-2 * t, 2 * t);
            QImage tile = r.copy();
            for (int y = 0; y < kSide; ++y) {
                auto *p = reinterpret_cast<QRgb *>(tile.scanLine(y));
                for (int x = 0; x < kSide; ++x) {
                    const int n = noise(rng);
                    p[x] = qRgb(std::clamp(qRed(p[x]) + n, 0, 255), std::clamp(qGreen(p[x]) + n, 0, 255),
                                std::clamp(qBlue(p[x]) + n, 0, 255));
                }
            }
            tiles[t] << tile;
        }
    }
    double checksum = 0;
    auto run = [&](bool threads) {
        QList<double> ms;
        for (int rep = 0; rep < kReps; ++rep) {
            QElapsedTimer timer;
            timer.start();
            QList<media::QualityReference> refs;
            for (const QImage &r : reference)
                refs << media::QualityReference(r);
            std::vector<double> sums(kTiles, 0.0);  // one slot per task: no sharing
            auto one = [&](int t) {
                for (int f = 0; f < kFrames; ++f)
                    sums[size_t(t)] += refs[f].compare(tiles[t][f]).ssim;
            };
            if (threads) {
                QList<int> ids;
                for (int t = 0; t < kTiles; ++t)
                    ids << t;
                QtConcurrent::blockingMap(ids, one);
            } else {
                for (int t = 0; t < kTiles; ++t)
                    one(t);
            }
            ms << double(timer.nsecsElapsed()) / 1e6;
            for (double v : sums)
                checksum += v;
        }
        std::sort(ms.begin(), ms.end());
        return std::pair(ms[kReps / 2], ms.front());
    };
    const auto [single, singleBest] = run(false);
    const auto [multi, multiBest] = run(true);
    std::printf("## PSNR/SSIM of %d tiles x %d frames at %dx%d against a reference (median / best of %d)\n\n",
                kTiles, kFrames, kSide, kSide, kReps);
    std::printf("| threads | ms (median) | ms (best) | per frame pair |\n|---|---|---|---|\n");
    std::printf("| 1 | %.1f | %.1f | %.2f ms |\n", single, singleBest, single / (kTiles * kFrames));
    std::printf("| %d (one task per tile) | %.1f | %.1f | %.2f ms |\n",
                QThreadPool::globalInstance()->maxThreadCount(), multi, multiBest,
                multi / (kTiles * kFrames));
    std::printf("\n(checksum %.3f)\n\n", checksum);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int seconds = 60;
    QList<int> sizes{32, 64, 256};
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--seconds"))
            seconds = args[i + 1].toInt();
        if (args[i] == QLatin1String("--sizes")) {
            sizes.clear();
            for (const QString &s : args[i + 1].split(QLatin1Char(',')))
                sizes << s.toInt();
        }
    }
    if (args.contains(QLatin1String("--quality-only"))) {
        referenceQuality();
        return 0;
    }
    QTemporaryDir dir;
    std::printf("## 16-tile grid at 24 fps, %d s each, offscreen 1280x800\n\n", seconds);
    std::printf("| clip | tiles | s | frames painted | dropped (tile-frames) | frames decoded | window "
                "(frames) | CPU |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (int size : sizes)
        playGrid(dir.path(), size, seconds);
    std::printf("\n## Decode throughput, one thread, RGB32/BGRA out (best of 3)\n\n");
    std::printf(
        "| clip | frames | ClipDecoder frames/s | ffmpeg CLI frames/s | ratio |\n|---|---|---|---|---|\n");
    for (int size : sizes)
        decodeThroughput(dir.path(), size, size >= 256 ? 2400 : 24000);
    std::printf("\n");
    referenceQuality();
    return 0;
}
