// SPDX-License-Identifier: GPL-3.0-or-later
// The Video tab over a real store of real trainer runs, offscreen: the step slider's stops are
// the steps with samples, a run without the chosen step shows its nearest (labelled); every
// tile shows the clock's frame index through play, pause, scrub and frame steps (a shorter clip
// its last frame); the slider swaps clips and keeps the index; A/B of a clip with itself is black
// and a wipe is A left and B right; a damaged sample is an error tile; the exports write a PNG
// and an MP4 of every frame; the dropped-frame counter counts late and skipped frames.
#include "testsupport.h"
#include "videosupport.h"

#include "clipdecoder.h"
#include "playbackclock.h"
#include "samplefetcher.h"
#include "videogrid.h"
#include "videoview.h"

#include "orrery/core/store.h"

#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace orrery;
using namespace orrery::gui;

namespace {

bool allReady(const VideoGrid *grid)
{
    for (const VideoTile &t : grid->tiles())
        if (t.source && t.source->state() != media::FrameSource::State::Ready)
            return false;
    return true;
}

// Every tile with a clip has painted the frame the clock says (a shorter clip: its last).
bool inLockStep(VideoGrid *grid, int index, QString *why)
{
    grid->repaint();
    const QList<int> shown = grid->shownIndexes();
    for (int i = 0; i < grid->tiles().size(); ++i) {
        const VideoTile &t = grid->tiles()[i];
        if (!t.source)
            continue;
        const int expected = std::min(index, t.source->info().frameCount - 1);
        if (shown.value(i) != expected) {
            *why = QStringLiteral("tile %1 shows frame %2, the clock says %3")
                       .arg(i)
                       .arg(shown.value(i))
                       .arg(expected);
            return false;
        }
    }
    return true;
}

}  // namespace

class TestVideoView : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_db;
    QList<core::RunId> m_runs;  // lr-a (steps 2, 4), lr-b (steps 2, 4), short (step 2, 4 frames)

    void train(const QString &name, const QStringList &sets)
    {
        QStringList args{QStringLiteral("--config"),
                         orrery::test::sourceFile(QStringLiteral("tests/trainer/test.yaml")),
                         QStringLiteral("--run-dir"), m_dir.filePath(name)};
        for (const QString &s : sets)
            args << QStringLiteral("--set") << s;
        const auto r = orrery::test::runProcess(qEnvironmentVariable("ORRERY_TRAINER"), args, {},
                                                QProcessEnvironment::systemEnvironment(), 120'000);
        QVERIFY2(r.code == 0, qPrintable(r.err));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(qEnvironmentVariable("ORRERY_TRAINER")).isExecutable(),
                 "ORRERY_TRAINER must name orrery-train");
        // Clips of 8 frames of 32x32 (tiny's shape; test.yaml's are smaller), "short" of 4.
        const QStringList common{QStringLiteral("train.sample_every=2"), QStringLiteral("sample.steps=2"),
                                 QStringLiteral("sample.count=2"), QStringLiteral("data.size=32"),
                                 QStringLiteral("data.frames=8")};
        train(QStringLiteral("lr-a"),
              common + QStringList{QStringLiteral("train.steps=4"), QStringLiteral("optim.lr=1e-3")});
        train(QStringLiteral("lr-b"),
              common + QStringList{QStringLiteral("train.steps=4"), QStringLiteral("optim.lr=3e-3")});
        train(QStringLiteral("short"),
              common + QStringList{QStringLiteral("train.steps=2"), QStringLiteral("data.frames=4")});
        m_db = m_dir.filePath(QStringLiteral("store.sqlite"));
        auto store = core::TrackingStore::open(m_db);
        for (const QString &name : {QStringLiteral("lr-a"), QStringLiteral("lr-b"), QStringLiteral("short")})
            m_runs << store->ingestRunDirectory(m_dir.filePath(name), QStringLiteral("video")).run;
        QCOMPARE(store->samples(m_runs[0]).size(), 2);
        QCOMPARE(store->sampleNear(m_runs[2], 4)->step, qint64(2));
    }

    void theGridPlaysInLockStep()
    {
        orrery::test::VideoHarness h(m_db, {1000, 700});
        gui::VideoView &view = h.view;
        QVERIFY(h.select(m_runs));
        QCOMPARE(view.steps(), (QList<qint64>{2, 4}));
        QCOMPARE(view.step(), qint64(4));  // the latest by default
        VideoGrid *grid = view.grid();
        QCOMPARE(grid->tiles().size(), 3);
        QTRY_VERIFY(allReady(grid));
        QVERIFY(!grid->tiles()[0].otherStep);
        QCOMPARE(grid->tiles()[2].step, qint64(2));  // the short run has no step 4: its nearest
        QVERIFY(grid->tiles()[2].otherStep);
        // Only the differing param is captioned: the learning rates (and frames of the short run).
        QVERIFY2(grid->tiles()[0].caption.contains(QStringLiteral("optim.lr=0.001")),
                 qPrintable(grid->tiles()[0].caption));
        QVERIFY(!grid->tiles()[0].caption.contains(QStringLiteral("model.channels")));

        PlaybackClock *clock = view.clock();
        QTRY_COMPARE(clock->frameCount(), 8);  // the longest clip (set once every tile has opened its clip)
        QCOMPARE(clock->fps(), 8.0);
        QString why;
        // Play for a while, then pause: all on one frame.
        clock->setSpeed(4);
        clock->play();
        QTRY_VERIFY(clock->index() >= 5);
        clock->pause();
        QTRY_VERIFY2(inLockStep(grid, clock->index(), &why), qPrintable(why));
        // Scrub past the short clip's end: it holds its last frame.
        clock->seek(6);
        QTRY_VERIFY2(inLockStep(grid, 6, &why), qPrintable(why));
        QCOMPARE(grid->shownIndexes().value(2), 3);
        // Frame steps, wrapping backwards from the first frame.
        clock->seek(0);
        clock->step(-1);
        QCOMPARE(clock->index(), 7);
        QTRY_VERIFY2(inLockStep(grid, 7, &why), qPrintable(why));
        clock->step(1);
        QCOMPARE(clock->index(), 0);
        QTRY_VERIFY2(inLockStep(grid, 0, &why), qPrintable(why));
        // The keys: Space plays and pauses, → steps.
        view.setFocus();
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(clock->index(), 1);
        QTest::keyClick(&view, Qt::Key_Space);
        QVERIFY(clock->isPlaying());
        QTest::keyClick(&view, Qt::Key_Space);
        QVERIFY(!clock->isPlaying());

        // The pixels painted are the clip's own frame (decoded independently here).
        clock->seek(3);
        QTRY_VERIFY2(inLockStep(grid, 3, &why), qPrintable(why));
        auto reference = media::ClipDecoder::open(grid->tiles()[1].source->path());
        QCOMPARE(grid->framesAt(3)[1].image, reference->frame(3));

        // The step slider swaps every clip and keeps the frame index.
        const QString before = grid->tiles()[0].source->path();
        view.setStep(2);
        QCOMPARE(view.step(), qint64(2));
        QVERIFY(grid->tiles()[0].source->path() != before);
        QVERIFY(grid->tiles()[0].source->path().endsWith(QStringLiteral("step-2.mp4")));
        QVERIFY(!grid->tiles()[2].otherStep);
        QCOMPARE(clock->index(), 3);
        QTRY_VERIFY(allReady(grid));
        QTRY_VERIFY2(inLockStep(grid, 3, &why), qPrintable(why));
    }

    void abModes()
    {
        orrery::test::VideoHarness h(m_db, {800, 500});
        gui::VideoView &view = h.view;
        // A against itself: the same run twice is not a selection, so the grid gets two tiles of
        // one clip, as A/B of a run with a copy of itself would.
        QVERIFY(h.select({m_runs[0], m_runs[1]}));
        VideoGrid *grid = view.grid();
        QTRY_VERIFY(allReady(grid));
        view.clock()->seek(5);
        QTRY_VERIFY(!grid->framesAt(5)[0].image.isNull() && !grid->framesAt(5)[1].image.isNull());

        view.setMode(VideoGrid::Mode::Difference);
        const QImage a = grid->framesAt(5)[0].image, b = grid->framesAt(5)[1].image;
        auto countNonBlack = [](const QImage &img) {
            int n = 0;
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x)
                    n += (img.pixel(x, y) & 0xffffff) != 0;
            return n;
        };
        QCOMPARE(countNonBlack(VideoGrid::composeAB(a, a, VideoGrid::Mode::Difference, 0.5)), 0);
        QVERIFY(countNonBlack(grid->currentABPicture()) > 0);  // two runs' samples differ
        QList<VideoTile> twice{grid->tiles()[0], grid->tiles()[0]};
        grid->setTiles(twice);
        QCOMPARE(countNonBlack(grid->currentABPicture()), 0);

        // A wipe at 0.25: the left quarter is A's, the rest B's.
        const QImage wipe = VideoGrid::composeAB(a, b, VideoGrid::Mode::Wipe, 0.25);
        const int split = a.width() / 4;
        QCOMPARE(wipe.copy(0, 0, split, a.height()), a.copy(0, 0, split, a.height()));
        QCOMPARE(wipe.copy(split, 0, a.width() - split, a.height()),
                 b.convertToFormat(QImage::Format_RGB32).copy(split, 0, a.width() - split, a.height()));
    }

    void exportsAndADamagedSample()
    {
        // A copy of the store whose first run's step-4 sample is truncated.
        const QString dir = m_dir.filePath(QStringLiteral("damaged"));
        QVERIFY(QDir().mkpath(dir));
        const QString damaged = dir + QStringLiteral("/step-4.mp4");
        {
            QFile in(m_dir.filePath(QStringLiteral("lr-a/samples/step-4.mp4")));
            QVERIFY(in.open(QIODevice::ReadOnly));
            QFile out(damaged);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(in.readAll().left(1500));
        }
        const QString db = m_dir.filePath(QStringLiteral("damaged.sqlite"));
        {
            auto store = core::TrackingStore::open(db);
            const auto e = store->ensureExperiment(QStringLiteral("video"));
            const auto bad = store->createRun(e, QStringLiteral("damaged"));
            store->addArtifact(
                bad,
                {QStringLiteral("samples/step-4.mp4"), QStringLiteral("video"), 4, damaged, damaged, -1});
            const auto good =
                store->ingestRunDirectory(m_dir.filePath(QStringLiteral("lr-b")), QStringLiteral("video"))
                    .run;
            Q_UNUSED(good);
        }
        orrery::test::VideoHarness h(db, {900, 500});
        gui::VideoView &view = h.view;
        QList<core::RunId> ids;
        for (const auto &r :
             core::TrackingStore::open(db, core::TrackingStore::Mode::ReadOnly)->queryRuns({}))
            ids << r.run.id;
        QVERIFY(h.select(ids));
        VideoGrid *grid = view.grid();
        QTRY_VERIFY(std::any_of(grid->tiles().cbegin(), grid->tiles().cend(), [](const VideoTile &t) {
            return t.source && t.source->state() == media::FrameSource::State::Failed;
        }));
        const QList<TileFrame> frames = grid->framesAt(0);
        bool errorShown = false;
        for (const TileFrame &f : frames)
            errorShown |= f.overlay.contains(QStringLiteral("step-4.mp4"));
        QVERIFY(errorShown);
        QTRY_VERIFY(view.clock()->frameCount() == 8);  // the good clip still plays

        // Exports: the grid's frame as PNG; the current tile's frame at its own size; every frame as MP4.
        const QString png = m_dir.filePath(QStringLiteral("grid.png"));
        QTRY_VERIFY(!grid->framesAt(view.clock()->index())[1].image.isNull() ||
                    !grid->framesAt(view.clock()->index())[0].image.isNull());
        QVERIFY(view.exportFramePng(png));
        QCOMPARE(QImage(png).size(), grid->size());
        const QString frame = m_dir.filePath(QStringLiteral("frame.png"));
        QString error;
        QVERIFY2(view.saveCurrentFrame(frame, &error), qPrintable(error));
        QCOMPARE(QImage(frame).size(), QSize(2 * 32 * 4, 32 * 4));  // sample.count=2 clips of 32x32, x4
        const QString mp4 = m_dir.filePath(QStringLiteral("grid.mp4"));
        QSignalSpy finished(&view, &VideoView::exportFinished);
        view.exportMp4(mp4);
        QVERIFY(finished.wait(60'000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        auto exported = media::ClipDecoder::open(mp4);
        QCOMPARE(exported->info().frameCount, 8);
        QCOMPARE(exported->info().width, grid->width() + grid->width() % 2);
    }

    void droppedFramesAreCounted()
    {
        // How fast it plays is the benchmark's (bench/RESULTS.md: 16 tiles, 60 s, 0 dropped);
        // here, that the counter counts what it should, without timing anything.
        orrery::test::VideoHarness h(m_db, {900, 600});
        VideoGrid *grid = h.view.grid();
        QVERIFY(h.select(m_runs));
        QTRY_VERIFY(allReady(grid));
        for (const VideoTile &t : grid->tiles())
            QTRY_COMPARE(t.source->decodedCount(), qint64(t.source->info().frameCount));
        grid->setFrameIndex(0, true);
        grid->repaint();
        grid->resetCounters();
        // Every frame decoded and painted in turn: nothing dropped.
        for (int i = 1; i < 8; ++i) {
            grid->setFrameIndex(i, true);
            grid->repaint();
        }
        QCOMPARE(grid->paintedFrames(), qint64(7));
        QCOMPARE(grid->dropped(), qint64(0));
        // An index the clock passed before it was painted: one per tile.
        grid->setFrameIndex(0, true);
        grid->setFrameIndex(1, true);
        grid->repaint();
        QCOMPARE(grid->dropped(), qint64(3));
        // Frames the clock skipped (a late timer): one per tile each.
        grid->addSkipped(2);
        QCOMPARE(grid->dropped(), qint64(3 + 2 * 3));
        // Paused, a late frame is not a dropped one.
        grid->resetCounters();
        grid->setFrameIndex(2, false);
        grid->setFrameIndex(3, false);
        grid->repaint();
        QCOMPARE(grid->dropped(), qint64(0));

        // And it plays: at 24 fps the clock moves and the grid paints.
        h.view.clock()->setFps(24);
        h.view.clock()->play();
        QTRY_VERIFY(grid->paintedFrames() >= 12);
        h.view.clock()->pause();
    }
};

ORRERY_TEST_MAIN(TestVideoView, QApplication)
#include "tst_videoview.moc"
