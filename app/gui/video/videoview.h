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
#include "videostate.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QStackedWidget;
class QSlider;

namespace orrery::gui {

class FetchBar;
class PlaybackClock;
class QualityPlot;
class ReviewChoosers;
class RunSelection;
class RunsTableModel;
class SampleFetcher;
class StoreReader;
class TransportBar;
class VideoExport;
class VideoTiles;

// The view builds the tab and keeps its state (VideoState); its parts each own a piece: the tiles
// (VideoTiles), the choosers (ReviewChoosers), the quality plot (QualityPlot), the transport
// (TransportBar), the exports (VideoExport) and the fetch line (FetchBar).
class VideoView : public QWidget {
    Q_OBJECT
public:
    VideoView(StoreReader *reader, RunSelection *selection, QWidget *parent = nullptr);
    ~VideoView() override;

    using Order = TileOrder;  // Selection, Metric, Psnr, Ssim, Name

    // The window's runs model: each run's sweep (its metric and swept params). Optional: without
    // it captions name the params that differ and tiles show no metric.
    void setRunsModel(const RunsTableModel *model);

    VideoGrid *grid() const { return m_grid; }
    ReferenceQuality *quality() const { return m_quality; }
    QCustomPlot *qualityPlot() const;
    // The hint shown instead of the grid (nothing selected, no samples); empty while tiles show.
    QString hint() const;
    void setReference(core::RunId run);  // 0: none
    core::RunId reference() const { return m_state.reference; }
    void setABRuns(core::RunId a, core::RunId b);  // the A and B boxes
    void setOrder(Order order);
    void setStrip(bool on);  // the current run's samples over steps
    bool strip() const { return m_state.strip; }
    PlaybackClock *clock() const { return m_clock; }
    SampleFetcher *fetcher() const { return m_fetcher; }
    // The steps the slider stops at, and the one chosen.
    const QList<qint64> &steps() const { return m_state.steps; }
    qint64 step() const { return m_state.step; }
    void setStep(qint64 step);  // the nearest stop
    void setMode(VideoGrid::Mode mode);
    // The series shown (core::mediaKey) and those the shown runs have, in the Samples box's order.
    void setMediaKey(const QString &key);
    QString mediaKey() const { return m_state.mediaKey; }
    QStringList mediaKeys() const { return m_state.mediaKeys; }

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
    void buildUi();
    // buildUi's parts.
    void buildStepControls(QHBoxLayout *top);
    QWidget *buildStack();
    void connectControls();
    void selectionChanged(const QObject *source);
    void showSamples(QList<RunSamples> runs);
    void rebuildTiles();
    void showTileMenu(core::RunId run, const QPoint &globalPos);

    StoreReader *m_reader;
    RunSelection *m_selection;
    PlaybackClock *m_clock;
    SampleFetcher *m_fetcher;
    VideoGrid *m_grid;
    ReviewChoosers *m_choosers = nullptr;
    VideoExport *m_export = nullptr;
    QualityPlot *m_qualityPlot = nullptr;
    TransportBar *m_transport = nullptr;
    FetchBar *m_fetchBar = nullptr;
    QComboBox *m_modeBox = nullptr;
    QSlider *m_stepSlider = nullptr;
    QLabel *m_stepLabel = nullptr;
    QSlider *m_wipeSlider = nullptr;
    QLabel *m_note = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_hint = nullptr;

    ReferenceQuality *m_quality;
    VideoState m_state;
    std::unique_ptr<VideoTiles> m_tiles;  // reads m_state
    quint64 m_generation = 0;
};

}  // namespace orrery::gui
