// SPDX-License-Identifier: GPL-3.0-or-later
//
// What leaves the Video tab as a file, under its one Export button: the current run's contact
// sheet, the current run's frame at the sample's own size, the grid's frame as PNG, and the
// whole grid as MP4 — one frame per clock index, drawn as the grid draws it
// (VideoGrid::paintFrames). The MP4 is encoded on the blocking pool from a copy of the grid's
// tiles (the worker opens its own decoders and never reads the grid); progress() and finished()
// come back on the UI thread, cancel() stops it (the encoder removes its partial file), and so
// does the destructor. UI thread only; the widgets and dialogs are the view's children.
#pragma once

#include "videostate.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

class QHBoxLayout;
class QSlider;
class QWidget;

namespace orrery::gui {

class PlaybackClock;
class RunSelection;
class SampleFetcher;
class VideoGrid;

class VideoExport : public QObject {
    Q_OBJECT
public:
    // `wipe`: the A/B divider's slider (thousandths), drawn into the MP4 as it is at the start.
    VideoExport(VideoGrid *grid, PlaybackClock *clock, RunSelection *selection, const QSlider *wipe,
                QWidget *view);
    ~VideoExport() override;

    // The Export button on `top`, with its menu; its contact sheet entry calls `contactSheet`.
    void addButton(QHBoxLayout *top, std::function<void()> contactSheet);

    bool saveCurrentFrame(const QString &path, QString *error = nullptr);  // the current run's tile
    bool exportFramePng(const QString &path, QString *error = nullptr);  // the whole grid
    void exportMp4(const QString &path);
    void cancel();

Q_SIGNALS:
    void progress(int frame, int frames);
    void finished(bool ok, const QString &message);

private:
    void askMp4();  // the file dialog, then the export behind a progress dialog

    VideoGrid *m_grid;
    PlaybackClock *m_clock;
    RunSelection *m_selection;
    const QSlider *m_wipe;
    QWidget *m_view;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

// The contact sheet (clips × frames) of the `current` run's sample at `step` (else the first
// run's), in a dialog with whole-multiple zooms. One of a cluster's runs not fetched yet is
// fetched, and the user is told to open it again.
void showContactSheet(QWidget *parent, SampleFetcher *fetcher, const QList<RunSamples> &runs,
                      core::RunId current, qint64 step);

}  // namespace orrery::gui
