// SPDX-License-Identifier: GPL-3.0-or-later
// The Video tab's review (issue 31), offscreen, over a real store written through TrackingStore:
// the workbench fixture's sweep (lr x seed, metric loss) with sample clips encoded here (so each
// clip's content is known), and the runs model the window gives the view.
//
// - PSNR and SSIM against independent values: identical frames, a known noise level against the
//   PSNR formula, fixed frames against scikit-image's structural_similarity;
// - the step slider follows newer samples from the newest step and stays on a chosen older one;
// - an empty Video tab says what to do;
// - tiles keep the clips' shape from 1 to 16 runs, one caption line of name and swept values,
//   the sweep metric on each tile, the baseline first;
// - A and B chosen in their boxes; a pinned reference's PSNR/SSIM per tile (worker, cache,
//   a new sample file recomputed) and its curve over steps; the tiles sorted by a metric; the
//   strip of one run's samples over steps.
#include "testsupport.h"
#include "videosupport.h"
#include "workbenchsupport.h"

#include "clipdecoder.h"
#include "clipencoder.h"
#include "imageops.h"
#include "qcp.h"
#include "referencequality.h"
#include "videogrid.h"
#include "videoview.h"

#include "orrery/core/runfiles.h"
#include "orrery/core/store.h"

#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>
#include <limits>

using namespace orrery;
using namespace orrery::gui;

namespace {

constexpr int kSide = 64, kFrames = 4;

// A frame of run content `variant`: a pattern moving with the frame index, plus deterministic
// noise of amplitude `noise` (0: the same picture for every variant).
QImage frameOf(int frame, int noise, int seed)
{
    QImage image(kSide, kSide, QImage::Format_RGB32);
    for (int y = 0; y < kSide; ++y)
        for (int x = 0; x < kSide; ++x) {
            const int n =
                noise == 0 ? 0 : ((x * 131 + y * 71 + seed * 29 + frame * 17) % (2 * noise + 1)) - noise;
            const int v = std::clamp(((x + 3 * frame) * 4 + y * 2) % 256 + n, 0, 255);
            image.setPixel(x, y, qRgb(v, std::clamp(255 - v + n, 0, 255), (x * y + n + 256) % 256));
        }
    return image;
}

void writeClip(const QString &path, int noise, int seed)
{
    media::ClipEncoder encoder(path, {kSide, kSide}, 8);
    for (int f = 0; f < kFrames; ++f)
        encoder.add(frameOf(f, noise, seed));
    encoder.finish();
}

void addSample(core::TrackingStore &store, core::RunId run, qint64 step, const QString &file)
{
    core::Artifact a;
    a.path = QStringLiteral("samples/step-%1.mp4").arg(step);
    a.kind = QStringLiteral("video");
    a.step = step;
    a.remotePath = file;
    store.addArtifact(run, a);
}

// The fixture's sweep with the runs model the window would give the Video tab.
struct Review {
    test::Fixture fixture;
    RunsTableModel model;
    std::unique_ptr<test::VideoHarness> h;

    Review()
    {
        h = std::make_unique<test::VideoHarness>(fixture.path, QSize(1000, 720));
        refreshModel();
        h->view.setRunsModel(&model);
    }
    void refreshModel()
    {
        const Snapshot s = test::snapshotOf(fixture.path);
        model.setSweeps(s.index());
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
    }
    QString clip(core::RunId run, qint64 step) const
    {
        return fixture.dir.filePath(QStringLiteral("clip-%1-%2.mp4").arg(run).arg(step));
    }
    // Writes a clip of `noise` for each run at each step and records it.
    void samples(const QList<core::RunId> &runs, const QList<qint64> &steps, const QList<int> &noise)
    {
        auto store = core::TrackingStore::open(fixture.path);
        for (int i = 0; i < runs.size(); ++i)
            for (qint64 step : steps) {
                writeClip(clip(runs[i], step), noise.value(i, 20), int(runs[i]));
                addSample(*store, runs[i], step, clip(runs[i], step));
            }
    }
    bool allReady() const
    {
        for (const VideoTile &t : h->view.grid()->tiles())
            if (t.source && t.source->state() != media::FrameSource::State::Ready)
                return false;
        return true;
    }
    // A copy of the run's tile (a default tile, run 0, when it has none).
    VideoTile tileOf(core::RunId run) const
    {
        for (const VideoTile &t : h->view.grid()->tiles())
            if (t.run == run)
                return t;
        return {};
    }
};

bool sameImage(const QImage &a, const QImage &b)
{
    return a.convertToFormat(QImage::Format_RGB32) == b.convertToFormat(QImage::Format_RGB32);
}

}  // namespace

class TestVideoReview : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // --- PSNR and SSIM (luma; Gaussian 11x11, sigma 1.5, K1 0.01, K2 0.03) --------------------

    void identicalFramesAreInfiniteAndOne()
    {
        const QImage a = frameOf(0, 30, 1);
        QVERIFY(std::isinf(media::psnr(a, a)));
        QCOMPARE(media::ssim(a, a), 1.0);
    }

    void aKnownNoiseLevelGivesThePsnrFormula()
    {
        // Grey 128 against 128 ± 10 in a checkerboard: every luma differs by 10, MSE 100.
        QImage grey(40, 40, QImage::Format_RGB32), noisy(40, 40, QImage::Format_RGB32);
        grey.fill(qRgb(128, 128, 128));
        for (int y = 0; y < 40; ++y)
            for (int x = 0; x < 40; ++x) {
                const int v = (x + y) % 2 ? 138 : 118;
                noisy.setPixel(x, y, qRgb(v, v, v));
            }
        const double expected = 10 * std::log10(255.0 * 255.0 / 100.0);  // 28.1308 dB
        QVERIFY2(std::abs(media::psnr(grey, noisy) - expected) < 1e-3,
                 qPrintable(QString::number(media::psnr(grey, noisy))));
    }

    void ssimMatchesScikitImage()
    {
        // Expected values from scikit-image 0.26.0 (numpy, float64 luma), computed with:
        //   y, x = np.mgrid[0:40, 0:48]
        //   a = np.stack([(x*7 + y*3) % 256, (x*x + y*5) % 256, (x*y) % 256], -1)
        //   noise = np.clip(a + (((x*13 + y*29) % 17) - 8)[..., None], 0, 255)
        //   shift = np.roll(a, 1, axis=1)
        //   luma = lambda im: 0.299*im[..., 0] + 0.587*im[..., 1] + 0.114*im[..., 2]
        //   structural_similarity(luma(a), luma(o), gaussian_weights=True, sigma=1.5,
        //                         use_sample_covariance=False, data_range=255)
        //   peak_signal_noise_ratio(luma(a), luma(o), data_range=255)
        // Tolerance: 1e-5 in SSIM, 1e-4 dB (our luma and filters are float32: a float32 model of
        // them in numpy is within 2e-7 of scikit-image on these frames).
        constexpr int W = 48, H = 40;
        QImage a(W, H, QImage::Format_RGB32), noise(W, H, QImage::Format_RGB32),
            shift(W, H, QImage::Format_RGB32);
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                const int r = (x * 7 + y * 3) % 256, g = (x * x + y * 5) % 256, b = (x * y) % 256;
                a.setPixel(x, y, qRgb(r, g, b));
                const int n = ((x * 13 + y * 29) % 17) - 8;
                noise.setPixel(
                    x, y,
                    qRgb(std::clamp(r + n, 0, 255), std::clamp(g + n, 0, 255), std::clamp(b + n, 0, 255)));
            }
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x)
                shift.setPixel(x, y, a.pixel((x + W - 1) % W, y));
        const struct {
            const QImage &other;
            double ssim, psnr;
        } cases[] = {{noise, 0.9907460430856845, 34.44717105575725},
                     {shift, 0.19724264155506127, 12.85233137646031}};
        for (const auto &c : cases) {
            const media::FrameQuality q = media::QualityReference(a).compare(c.other);
            QVERIFY2(std::abs(q.ssim - c.ssim) < 1e-5,
                     qPrintable(QStringLiteral("SSIM %1, scikit-image %2").arg(q.ssim).arg(c.ssim)));
            QVERIFY2(std::abs(q.psnr - c.psnr) < 1e-4,
                     qPrintable(QStringLiteral("PSNR %1, scikit-image %2").arg(q.psnr).arg(c.psnr)));
        }
    }

    void framesOfAnotherSizeAreResizedToTheReference()
    {
        QImage small(32, 32, QImage::Format_RGB32), large(64, 64, QImage::Format_RGB32);
        small.fill(qRgb(90, 140, 30));
        large.fill(qRgb(90, 140, 30));
        const media::FrameQuality q = media::QualityReference(large).compare(small);
        QVERIFY(std::isinf(q.psnr));
        QCOMPARE(q.ssim, 1.0);
        QCOMPARE(media::QualityReference(large).size(), QSize(64, 64));
    }

    // --- the view --------------------------------------------------------------------------

    void theStepSliderFollowsNewerSamples()
    {
        Review r;
        const QList<core::RunId> runs = r.fixture.runs.mid(0, 2);
        r.samples(runs, {10, 20}, {10, 20});
        QVERIFY(r.h->select(runs));
        QCOMPARE(r.h->view.step(), qint64(20));
        // On the newest step: a newer sample moves the slider to it.
        r.samples(runs.mid(0, 1), {30}, {10});
        QSignalSpy shown(&r.h->view, &VideoView::samplesShown);
        r.h->view.refresh();
        QVERIFY(shown.wait(10'000));
        QCOMPARE(r.h->view.steps(), (QList<qint64>{10, 20, 30}));
        QCOMPARE(r.h->view.step(), qint64(30));
        // An older step the user chose stays.
        r.h->view.setStep(10);
        QCOMPARE(r.h->view.step(), qint64(10));
        r.samples(runs.mid(0, 1), {40}, {10});
        r.h->view.refresh();
        QVERIFY(shown.wait(10'000));
        QCOMPARE(r.h->view.steps().back(), qint64(40));
        QCOMPARE(r.h->view.step(), qint64(10));
    }

    void anEmptyTabSaysWhatToDo()
    {
        Review r;
        r.h->view.refresh();
        QTRY_VERIFY(!r.h->view.hint().isEmpty());
        QVERIFY2(r.h->view.hint().contains(QStringLiteral("Select runs")), qPrintable(r.h->view.hint()));
        QVERIFY(!r.h->view.grid()->isVisible());
        // Runs without samples: say why nothing plays.
        QVERIFY(r.h->select(r.fixture.runs.mid(0, 2)));
        QVERIFY2(r.h->view.hint().contains(QStringLiteral("has written a sample")),
                 qPrintable(r.h->view.hint()));
        // With samples, the grid.
        r.samples(r.fixture.runs.mid(0, 1), {10}, {10});
        QSignalSpy shown(&r.h->view, &VideoView::samplesShown);
        r.h->view.refresh();
        QVERIFY(shown.wait(10'000));
        QVERIFY(r.h->view.hint().isEmpty());
        QVERIFY(r.h->view.grid()->isVisible());
    }

    void tilesStayReadableFrom1To16Runs()
    {
        Review r;
        r.samples(r.fixture.runs.mid(0, 16), {10}, {});
        {
            auto store = core::TrackingStore::open(r.fixture.path);
            store->setTags(r.fixture.runs[5], {{QLatin1String(core::kBaselineTag), QStringLiteral("true")}});
        }
        r.refreshModel();
        for (int n : {1, 2, 8, 16}) {
            const QList<core::RunId> runs = r.fixture.runs.mid(0, n);
            QVERIFY(r.h->select(runs));
            QTRY_VERIFY(r.allReady());
            VideoGrid *grid = r.h->view.grid();
            QVERIFY2(r.h->view.width() <= 1000, "the tab's controls make it wider than asked");
            grid->repaint();
            const QList<QRect> rects = grid->tileRects();
            QCOMPARE(rects.size(), n);
            const int caption = grid->fontMetrics().height() + 6;
            for (int i = 0; i < n; ++i) {
                const QRect t = rects[i];
                QVERIFY2(grid->rect().contains(t),
                         qPrintable(QStringLiteral("%1 tiles: tile %2 leaves the grid").arg(n).arg(i)));
                for (int j = 0; j < i; ++j)
                    QVERIFY(!rects[j].intersects(t));
                // The picture area keeps the square clips' shape: a tile is not a tall cell.
                const int pw = t.width() - 6, ph = t.height() - 6 - caption;
                QVERIFY2(std::abs(pw - ph) <= 2,
                         qPrintable(QStringLiteral("%1 tiles: picture %2x%3").arg(n).arg(pw).arg(ph)));
            }
            // One caption line: the name and the sweep's swept values; not the constant width.
            for (const VideoTile &t : grid->tiles()) {
                const QString text = VideoGrid::captionText(t);
                QVERIFY2(text.startsWith(t.title), qPrintable(text));
                QVERIFY2(text.contains(QStringLiteral("optim.lr=")) && text.contains(QStringLiteral("seed=")),
                         qPrintable(text));
                QVERIFY2(!text.contains(QStringLiteral("model.width")), qPrintable(text));
                QVERIFY2(t.metric.startsWith(QStringLiteral("loss ")), qPrintable(t.metric));
            }
            // The baseline run first whenever it is shown.
            if (n > 5)
                QCOMPARE(grid->tiles().front().run, r.fixture.runs[5]);
        }
        // Each tile's metric is its run's latest loss (the fixture's lossAt at step 99).
        const VideoTile t = r.tileOf(r.fixture.runs[7]);  // lr 2, seed 1
        QCOMPARE(t.run, r.fixture.runs[7]);
        QCOMPARE(t.metric, QStringLiteral("loss %1").arg(QString::number(test::lossAt(2, 1, 99), 'g', 4)));
        QVERIFY(t.caption.contains(QStringLiteral("optim.lr=0.0001")));
    }

    void abComparesTheTwoChosenRuns()
    {
        Review r;
        const QList<core::RunId> runs = r.fixture.runs.mid(0, 3);
        r.samples(runs, {10}, {5, 20, 40});
        QVERIFY(r.h->select(runs));
        QTRY_VERIFY(r.allReady());
        r.h->view.setMode(VideoGrid::Mode::Difference);
        auto *a = r.h->view.findChild<QComboBox *>(QStringLiteral("videoA"));
        auto *b = r.h->view.findChild<QComboBox *>(QStringLiteral("videoB"));
        QVERIFY(a && b);
        a->setCurrentIndex(a->findData(QVariant::fromValue<core::RunId>(runs[2])));
        b->setCurrentIndex(b->findData(QVariant::fromValue<core::RunId>(runs[0])));
        VideoGrid *grid = r.h->view.grid();
        QCOMPARE(grid->shownTiles(), (QList<int>{2, 0}));
        QList<TileFrame> frames;
        QTRY_VERIFY((frames = grid->framesAt(grid->frameIndex()),
                     !frames[0].image.isNull() && !frames[2].image.isNull()));
        QVERIFY(sameImage(
            grid->currentABPicture(),
            VideoGrid::composeAB(frames[2].image, frames[0].image, VideoGrid::Mode::Difference, 0.5)));
        QVERIFY(!sameImage(
            grid->currentABPicture(),
            VideoGrid::composeAB(frames[0].image, frames[1].image, VideoGrid::Mode::Difference, 0.5)));
    }

    void aReferenceGivesEachTilePsnrAndSsim()
    {
        Review r;
        const QList<core::RunId> runs = r.fixture.runs.mid(0, 4);
        // runs[1] is the reference's own picture (noise 0 both), the others ever noisier.
        r.samples(runs, {10, 20}, {0, 0, 12, 40});
        QVERIFY(r.h->select(runs));
        QTRY_VERIFY(r.allReady());
        auto *ref = r.h->view.findChild<QComboBox *>(QStringLiteral("videoReference"));
        QVERIFY(ref);
        ReferenceQuality *quality = r.h->view.quality();
        ref->setCurrentIndex(ref->findData(QVariant::fromValue<core::RunId>(runs[0])));
        QCOMPARE(r.h->view.reference(), runs[0]);
        // Computed on a worker: nothing yet on return, the figures arrive later.
        QVERIFY(quality->inFlight() > 0);
        QVERIFY(r.tileOf(runs[2]).psnr.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!r.tileOf(runs[3]).psnr.isEmpty() && quality->inFlight() == 0, 20'000);
        QVERIFY(r.tileOf(runs[0]).reference);
        QVERIFY(std::isinf(r.tileOf(runs[1]).meanPsnr));
        QCOMPARE(r.tileOf(runs[1]).meanSsim, 1.0);
        // The figures are those of the decoded frames, frame by frame, against the reference's.
        {
            const VideoTile tile = r.tileOf(runs[2]);
            QVERIFY(tile.source);
            const VideoTile *t = &tile;
            auto clip = media::ClipDecoder::open(t->source->path());
            auto refClip = media::ClipDecoder::open(r.clip(runs[0], 10 + 10));
            QCOMPARE(t->psnr.size(), kFrames);
            double mean = 0;
            for (int f = 0; f < kFrames; ++f) {
                const media::FrameQuality q =
                    media::QualityReference(refClip->frame(f)).compare(clip->frame(f));
                QCOMPARE(t->psnr[f], q.psnr);
                QCOMPARE(t->ssim[f], q.ssim);
                mean += q.psnr / kFrames;
            }
            QVERIFY(std::abs(t->meanPsnr - mean) < 1e-9);
            QVERIFY(t->meanPsnr > r.tileOf(runs[3]).meanPsnr);  // more noise, further away
            QVERIFY(t->meanSsim > r.tileOf(runs[3]).meanSsim);
        }
        // The curve over steps: one graph per run against the reference, a point per step (the
        // identical run's infinite PSNR is no point).
        QCustomPlot *plot = r.h->view.qualityPlot();
        QTRY_COMPARE(plot->graphCount(), 3);
        QTRY_COMPARE(plot->graph(1)->dataCount(), 2);
        QCOMPARE(plot->graph(0)->dataCount(), 0);
        QVERIFY(plot->parentWidget()->isVisible());
        // Cached: moving the step back and forth computes nothing again.
        const qint64 computed = quality->computedCount();
        r.h->view.setStep(10);
        QCOMPARE(quality->inFlight(), 0);  // a request would be in flight on return
        r.h->view.setStep(20);
        QCOMPARE(quality->inFlight(), 0);
        QCOMPARE(quality->computedCount(), computed);
        QVERIFY(!r.tileOf(runs[2]).psnr.isEmpty());
        // A new sample file at the step is computed again: runs[2]'s clip now equals the reference.
        const double before = r.tileOf(runs[2]).meanPsnr;
        writeClip(r.clip(runs[2], 20), 0, int(runs[2]));
        {  // a new modification time whatever the file system's resolution
            QFile f(r.clip(runs[2], 20));
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(
                f.setFileTime(QDateTime::currentDateTime().addSecs(60), QFileDevice::FileModificationTime));
        }
        r.h->view.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(quality->computedCount() > computed && quality->inFlight() == 0, 20'000);
        QTRY_VERIFY(std::isinf(r.tileOf(runs[2]).meanPsnr));
        QVERIFY(!std::isinf(before));
    }

    void tilesSortByAMetric()
    {
        Review r;
        // runs[0..3]: lr index 0 and 1, seeds 0..2; loss falls with lr and rises with seed.
        const QList<core::RunId> runs{r.fixture.runs[0], r.fixture.runs[4], r.fixture.runs[2],
                                      r.fixture.runs[6]};
        r.samples(runs, {10}, {40, 0, 12, 25});
        QVERIFY(r.h->select(runs));
        QTRY_VERIFY(r.allReady());
        auto order = [&r] {
            QList<core::RunId> out;
            for (const VideoTile &t : r.h->view.grid()->tiles())
                out << t.run;
            return out;
        };
        QCOMPARE(order(), runs);  // the selection's order
        // The sweep metric, goal-aware (loss: minimise, the lowest first).
        r.h->view.setOrder(VideoView::Order::Metric);
        QList<std::pair<double, core::RunId>> byLoss;
        for (int i : {0, 4, 2, 6})
            byLoss.push_back({test::lossAt(i / 3, i % 3, 99), r.fixture.runs[i]});
        std::sort(byLoss.begin(), byLoss.end());
        QList<core::RunId> expected;
        for (const auto &p : byLoss)
            expected << p.second;
        QCOMPARE(order(), expected);
        // PSNR to the reference (runs[1]): the reference, then the closest first.
        r.h->view.setReference(runs[1]);
        r.h->view.setOrder(VideoView::Order::Psnr);
        QTRY_VERIFY_WITH_TIMEOUT(r.h->view.quality()->inFlight() == 0 && !r.tileOf(runs[0]).psnr.isEmpty(),
                                 20'000);
        QCOMPARE(order(), (QList<core::RunId>{runs[1], runs[2], runs[3], runs[0]}));
        r.h->view.setOrder(VideoView::Order::Ssim);
        QCOMPARE(order(), (QList<core::RunId>{runs[1], runs[2], runs[3], runs[0]}));
        r.h->view.setOrder(VideoView::Order::Name);  // lr0-s0, lr0-s2, lr1-s1, lr2-s0
        QCOMPARE(order(), (QList<core::RunId>{runs[0], runs[2], runs[1], runs[3]}));
    }

    void aStripShowsOneRunOverSteps()
    {
        Review r;
        const QList<core::RunId> runs = r.fixture.runs.mid(0, 2);
        r.samples(runs.mid(0, 1), {10, 20, 30}, {5});
        r.samples(runs.mid(1, 1), {20}, {5});
        r.h->selection.select(runs, nullptr, runs[0]);
        QTRY_COMPARE(r.h->view.steps(), (QList<qint64>{10, 20, 30}));
        r.h->view.setStrip(true);
        VideoGrid *grid = r.h->view.grid();
        QCOMPARE(grid->tiles().size(), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(grid->tiles()[i].run, runs[0]);
            QCOMPARE(grid->tiles()[i].step, qint64(10 * (i + 1)));
            QVERIFY(VideoGrid::captionText(grid->tiles()[i])
                        .contains(QStringLiteral("step %1").arg(10 * (i + 1))));
        }
        QTRY_VERIFY(r.allReady());
        // The same frame of each step's clip, side by side.
        QTRY_COMPARE((grid->repaint(), grid->shownIndexes()), (QList<int>{0, 0, 0}));
        r.h->view.setStrip(false);
        QCOMPARE(grid->tiles().size(), 2);
    }

    // Issue 41: a run's several series — the trainer's mp4s, TensorBoard's GIFs, images — each a
    // key in the Samples box; an image series shows in the grid; an mp4 that cannot be decoded
    // gives way to the GIF of the same step, and says so; the PSNR curve has points only at steps
    // where both clips were written, and its legend is beside the curve, not over it.
    void severalSeriesAndAClipThatCannotPlay()
    {
        Review r;
        const QList<core::RunId> runs = r.fixture.runs.mid(0, 2);
        r.samples(runs, {10, 30}, {5, 15});  // samples/step-{10,30}.mp4 for both
        {
            auto store = core::TrackingStore::open(r.fixture.path);
            auto add = [&](core::RunId run, const QString &path, const QString &file, qint64 step) {
                core::Artifact a;
                a.path = path;
                a.kind = core::sampleKindOf(path);
                a.step = step;
                a.remotePath = file;
                store->addArtifact(run, a);
            };
            // Run 0 also wrote a GIF at step 10 (real FFmpeg made it from its mp4), and an mp4 at
            // step 20 that is no video at all.
            const QString gif = r.fixture.dir.filePath(QStringLiteral("gen-10.gif"));
            QCOMPARE(
                QProcess::execute(QStringLiteral("ffmpeg"),
                                  {QStringLiteral("-loglevel"), QStringLiteral("error"), QStringLiteral("-y"),
                                   QStringLiteral("-i"), r.clip(runs[0], 10), gif}),
                0);
            add(runs[0], QStringLiteral("tensorboard/gen/step-10.gif"), gif, 10);
            const QString broken = r.fixture.dir.filePath(QStringLiteral("broken-20.mp4"));
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly) && f.write(QByteArray(4096, 'x')) == 4096);
            f.close();
            add(runs[0], QStringLiteral("samples/step-20.mp4"), broken, 20);
            add(runs[0], QStringLiteral("tensorboard/gen/step-20.gif"), gif, 20);
            // Both runs wrote a contact-sheet image at step 30.
            for (core::RunId run : runs) {
                const QString png = r.fixture.dir.filePath(QStringLiteral("sheet-%1.png").arg(run));
                QVERIFY(frameOf(0, 0, int(run)).save(png));
                add(run, QStringLiteral("samples/step-30.png"), png, 30);
            }
        }
        r.h->selection.select(runs, nullptr, runs[0]);
        QTRY_COMPARE(r.h->view.mediaKeys(),
                     (QStringList{QStringLiteral("samples"), QStringLiteral("samples (image)"),
                                  QStringLiteral("gen")}));
        QCOMPARE(r.h->view.mediaKey(), QStringLiteral("samples"));
        auto *box = r.h->view.findChild<QComboBox *>(QStringLiteral("videoKey"));
        QVERIFY(box && box->isEnabled() && box->count() == 3);
        QCOMPARE(r.h->view.steps(), (QList<qint64>{10, 20, 30}));

        // Step 20: run 0's mp4 cannot be decoded; its GIF of that step plays instead.
        r.h->view.setStep(20);
        QTRY_VERIFY_WITH_TIMEOUT(r.tileOf(runs[0]).note.contains(QStringLiteral("showing gen")), 10'000);
        QVERIFY(r.tileOf(runs[0]).source &&
                r.tileOf(runs[0]).source->path().endsWith(QStringLiteral(".gif")));
        QTRY_VERIFY(r.allReady());
        QVERIFY(VideoGrid::captionText(r.tileOf(runs[0])).contains(QStringLiteral("samples cannot play")));

        // The image series, chosen in the box: the tiles show the PNGs, decoded.
        box->setCurrentIndex(box->findData(QStringLiteral("samples (image)")));
        QCOMPARE(r.h->view.mediaKey(), QStringLiteral("samples (image)"));
        QCOMPARE(r.h->view.steps(), (QList<qint64>{30}));
        QCOMPARE(r.h->view.grid()->tiles().size(), 2);
        for (core::RunId run : runs)
            QVERIFY(r.tileOf(run).source && r.tileOf(run).source->path().endsWith(QStringLiteral(".png")));
        QTRY_VERIFY_WITH_TIMEOUT(r.allReady(), 10'000);
        for (core::RunId run : runs)  // decoded: not standing in for anything
            QVERIFY2(r.tileOf(run).note.isEmpty() &&
                         r.tileOf(run).source->path().endsWith(QStringLiteral(".png")),
                     qPrintable(r.tileOf(run).note));
        QImage shown;
        QTRY_VERIFY_WITH_TIMEOUT(!(shown = r.tileOf(runs[1]).source->frame(0)).isNull(), 10'000);
        QCOMPARE(shown.size(), QSize(kSide, kSide));
        // The PNG's own pixels (to the decoder's rounding of its colour conversion).
        const QImage want = frameOf(0, 0, int(runs[1])), got = shown.convertToFormat(QImage::Format_RGB32);
        double diff = 0;
        for (int y = 0; y < kSide; ++y)
            for (int x = 0; x < kSide; ++x) {
                const QRgb a = want.pixel(x, y), b = got.pixel(x, y);
                diff += std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) +
                    std::abs(qBlue(a) - qBlue(b));
            }
        diff /= 3.0 * kSide * kSide;
        QVERIFY2(diff < 4, qPrintable(QStringLiteral("mean difference %1").arg(diff)));

        // Back to the mp4s with run 1 as the reference: run 0's PSNR curve at 10 and 30 only
        // (run 1 wrote nothing at 20; the nearest of another step is not a point).
        box->setCurrentIndex(box->findData(QStringLiteral("samples")));
        r.h->view.setReference(runs[1]);
        QCustomPlot *plot = r.h->view.qualityPlot();
        auto pointsOf = [&] {
            QList<double> keys;
            for (int g = 0; g < plot->graphCount(); ++g)
                for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd();
                     ++it)
                    keys << it->key;
            return keys;
        };
        QTRY_COMPARE_WITH_TIMEOUT(pointsOf(), (QList<double>{10, 30}), 20'000);
        plot->replot();
        QVERIFY(!plot->legend->outerRect().intersects(plot->axisRect()->outerRect()));
    }
};

ORRERY_TEST_MAIN(TestVideoReview, QApplication)
#include "tst_video_review.moc"
