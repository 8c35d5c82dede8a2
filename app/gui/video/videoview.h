// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab (UX.md "Do the samples actually look better?"): the sample clips of up to 16
// selected runs at one training step, on one clock.
//
// - Samples: a run may write several series of videos and images a step (the trainer's samples,
//   TensorBoard's GIFs, W&B's media, images): one media key (core::mediaKey) is shown, chosen in
//   the Samples box (default: the key the most runs have, videos first). A clip that cannot be
//   decoded gives way to another sample of the same run and step, and its caption says so.
// - Step slider: its stops are the steps at which any selected run wrote a sample of the key
//   (core::sampleSteps); each tile shows its run's sample nearest the chosen step, labelled when
//   that is not the chosen step. Moving it swaps every tile's clip and keeps the frame index.
// - Transport: play/pause (Space), frame step (←/→), scrub, loop, speed 0.25×–4×, the frame
//   counter and the dropped-frame counter. Clips of different lengths or rates stay in step by
//   frame index: the clock runs at the first tile's rate over the longest clip, and a shorter
//   clip holds its last frame.
// - Tiles (1 to 16): the baseline run (RunRow::isBaseline) first, then in the chosen order —
//   selection, the sweep metric (goal-aware), PSNR or SSIM to the reference, name; each tile
//   shows the sweep metric's latest value and a one-line caption of the leading sweep's swept
//   params (the window gives the view its RunsTableModel for the sweeps: setRunsModel).
// - Modes: the grid; A/B wipe and A/B difference of two runs chosen in the A and B boxes (the
//   first two by default); a strip of one run's samples over steps (the current run).
// - A reference run (its chooser, or a tile's menu): PSNR/SSIM of each tile against it at the
//   same step (ReferenceQuality: on a worker, cached), on the tiles and as a curve over steps.
// - Nothing selected, or no sample: a hint saying what to do instead of an empty canvas.
// - Save the current tile's frame (its own pixels), export the grid's frame as PNG or the whole
//   grid as MP4 (on a worker, with progress and cancel), open the step's contact sheet.
// - Samples of runs trained on a cluster are fetched once into the local cache (SampleFetcher),
//   with progress and cancel; a tile says what it is waiting for or what went wrong.
#pragma once

#include "referencequality.h"
#include "videogrid.h"

#include "orrery/core/params.h"
#include "orrery/core/store.h"

#include <QHash>
#include <QPointer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QStackedWidget;
class QProgressBar;
class QSlider;
class QToolButton;

namespace orrery::gui {

class PlaybackClock;
class RunSelection;
class RunsTableModel;
class SampleFetcher;
class StoreReader;

class VideoView : public QWidget {
    Q_OBJECT
public:
    VideoView(StoreReader *reader, RunSelection *selection, QWidget *parent = nullptr);
    ~VideoView() override;

    enum class Order { Selection, Metric, Psnr, Ssim, Name };

    // The window's runs model: each run's sweep (its metric and swept params). Optional: without
    // it captions name the params that differ and tiles show no metric.
    void setRunsModel(const RunsTableModel *model) { m_runsModel = model; }

    VideoGrid *grid() const { return m_grid; }
    ReferenceQuality *quality() const { return m_quality; }
    QCustomPlot *qualityPlot() const { return m_plot; }
    // The hint shown instead of the grid (nothing selected, no samples); empty while tiles show.
    QString hint() const;
    void setReference(core::RunId run);  // 0: none
    core::RunId reference() const { return m_reference; }
    void setABRuns(core::RunId a, core::RunId b);  // the A and B boxes
    void setOrder(Order order);
    void setStrip(bool on);  // the current run's samples over steps
    bool strip() const { return m_strip; }
    PlaybackClock *clock() const { return m_clock; }
    SampleFetcher *fetcher() const { return m_fetcher; }
    // The steps the slider stops at, and the one chosen.
    const QList<qint64> &steps() const { return m_steps; }
    qint64 step() const { return m_step; }
    void setStep(qint64 step);  // the nearest stop
    void setMode(VideoGrid::Mode mode);
    // The series shown (core::mediaKey) and those the shown runs have, in the Samples box's order.
    void setMediaKey(const QString &key);
    QString mediaKey() const { return m_mediaKey; }
    QStringList mediaKeys() const { return m_mediaKeys; }

    // Re-reads the selected runs' samples (the window calls it on live refreshes).
    void refresh();

    // Exports (the dialogs' work; tests call them directly).
    bool saveCurrentFrame(const QString &path, QString *error = nullptr);  // the current run's tile
    bool exportFramePng(const QString &path, QString *error = nullptr);  // the whole grid
    // The whole grid as MP4, one frame per clock index, on a worker: exportFinished() reports.
    void exportMp4(const QString &path);
    void cancelExport();

Q_SIGNALS:
    void samplesShown();  // the tiles show a new read's samples
    void exportProgress(int frame, int frames);
    void exportFinished(bool ok, const QString &message);

protected:
    void hideEvent(QHideEvent *event) override;

private:
    struct RunSamples {
        core::RunId run = 0;
        QString name, cluster;
        core::Params params;
        bool baseline = false;
        QList<core::LatestMetric> metrics;
        QList<core::Artifact> videos, images;
        QHash<QString, QList<core::Artifact>> byKey;  // videos and images by media key, by step
    };
    const QList<core::Artifact> &shownSamples(const RunSamples &r) const;  // of the chosen key
    void buildUi();
    // buildUi's parts.
    QHBoxLayout *buildChoosers();
    void buildStepControls(QHBoxLayout *top);
    void buildExportMenu(QHBoxLayout *top);
    QWidget *buildStack();
    QHBoxLayout *buildTransport();
    QWidget *buildFetchBar();
    void connectControls();
    void selectionChanged(const QObject *source);
    void showSamples(QList<RunSamples> runs);
    void rebuildTiles();
    QList<VideoTile> runTiles();
    QList<VideoTile> stripTiles();
    VideoTile tileFor(const RunSamples &r, qint64 step);
    std::optional<QString> localClip(const RunSamples &r, qint64 step);
    const RunSamples *samplesOf(core::RunId run) const;
    void applyQuality(QList<VideoTile> &tiles);
    void updateQualityPlot();
    void updateChoosers();
    void showTileMenu(core::RunId run, const QPoint &globalPos);
    void updateClock();
    void updateTransport();
    void showContactSheet();
    std::shared_ptr<media::FrameSource> sourceFor(const QString &path);

    StoreReader *m_reader;
    RunSelection *m_selection;
    PlaybackClock *m_clock;
    SampleFetcher *m_fetcher;
    VideoGrid *m_grid;
    QComboBox *m_modeBox = nullptr;
    QSlider *m_stepSlider = nullptr;
    QLabel *m_stepLabel = nullptr;
    QSlider *m_wipeSlider = nullptr;
    QToolButton *m_playButton = nullptr;
    QSlider *m_scrub = nullptr;
    QLabel *m_frameLabel = nullptr;
    QComboBox *m_speedBox = nullptr;
    QCheckBox *m_loopBox = nullptr;
    QLabel *m_droppedLabel = nullptr;
    QLabel *m_note = nullptr;
    QComboBox *m_aBox = nullptr, *m_bBox = nullptr, *m_refBox = nullptr, *m_orderBox = nullptr;
    QComboBox *m_keyBox = nullptr;
    QComboBox *m_plotMetric = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_hint = nullptr;
    QCustomPlot *m_plot = nullptr;
    QWidget *m_fetchBar = nullptr;
    QProgressBar *m_fetchProgress = nullptr;
    QLabel *m_fetchLabel = nullptr;

    const RunsTableModel *m_runsModel = nullptr;
    ReferenceQuality *m_quality;
    core::RunId m_reference = 0, m_a = 0, m_b = 0;
    Order m_order = Order::Selection;
    bool m_strip = false;
    QList<RunSamples> m_runs;  // the shown runs (selection order)
    std::optional<RunSamples> m_referenceRun;  // read too when it is not among them
    QList<qint64> m_steps;
    QString m_mediaKey;
    QStringList m_mediaKeys;
    qint64 m_step = -1;
    QHash<QString, QString> m_fetchErrors;  // by remote path
    // Decoded clips by local path, kept while a tile shows them or recently did (moving the
    // step slider back and forth does not decode again).
    QHash<QString, std::shared_ptr<media::FrameSource>> m_sources;
    QList<QString> m_sourceOrder;  // least recently used first
    quint64 m_generation = 0;
    std::shared_ptr<std::atomic<bool>> m_exportCancel;
};

}  // namespace orrery::gui
