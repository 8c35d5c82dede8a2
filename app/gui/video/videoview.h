// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab (UX.md "Do the samples actually look better?"): the sample clips of up to 16
// selected runs at one training step, on one clock.
//
// - Step slider: its stops are the steps at which any selected run wrote a sample
//   (core::sampleSteps); each tile shows its run's sample nearest the chosen step, labelled when
//   that is not the chosen step. Moving it swaps every tile's clip and keeps the frame index.
// - Transport: play/pause (Space), frame step (←/→), scrub, loop, speed 0.25×–4×, the frame
//   counter and the dropped-frame counter. Clips of different lengths or rates stay in step by
//   frame index: the clock runs at the first tile's rate over the longest clip, and a shorter
//   clip holds its last frame.
// - Modes: the grid; A/B wipe and A/B difference of the first two runs.
// - Save the current tile's frame (its own pixels), export the grid's frame as PNG or the whole
//   grid as MP4 (on a worker, with progress and cancel), open the step's contact sheet.
// - Samples of runs trained on a cluster are fetched once into the local cache (SampleFetcher),
//   with progress and cancel; a tile says what it is waiting for or what went wrong.
#pragma once

#include "videogrid.h"

#include "orrery/core/params.h"
#include "orrery/core/store.h"

#include <QHash>
#include <QPointer>
#include <QWidget>

#include <atomic>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QSlider;
class QToolButton;

namespace orrery::gui {

class PlaybackClock;
class RunSelection;
class SampleFetcher;
class StoreReader;

class VideoView : public QWidget {
    Q_OBJECT
public:
    VideoView(StoreReader *reader, RunSelection *selection, QWidget *parent = nullptr);
    ~VideoView() override;

    VideoGrid *grid() const { return m_grid; }
    PlaybackClock *clock() const { return m_clock; }
    SampleFetcher *fetcher() const { return m_fetcher; }
    // The steps the slider stops at, and the one chosen.
    const QList<qint64> &steps() const { return m_steps; }
    qint64 step() const { return m_step; }
    void setStep(qint64 step);  // the nearest stop
    void setMode(VideoGrid::Mode mode);

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
        QList<core::Artifact> videos, images;
    };
    void buildUi();
    void selectionChanged(const QObject *source);
    void showSamples(QList<RunSamples> runs);
    void rebuildTiles();
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
    QWidget *m_fetchBar = nullptr;
    QProgressBar *m_fetchProgress = nullptr;
    QLabel *m_fetchLabel = nullptr;

    QList<RunSamples> m_runs;
    QList<qint64> m_steps;
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
