// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's transport row over its PlaybackClock: play/pause, frame step, the scrub bar,
// speed (0.25×–4×), loop, the frame counter and the grid's dropped frames. It also keeps the
// clock to the tiles' clips: the longest clip's length, at the first tile's frame rate. The
// row's widgets are the view's children, as is the bar. UI thread only.
#pragma once

#include <QObject>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QSlider;
class QToolButton;
class QWidget;

namespace orrery::gui {

class PlaybackClock;
class VideoGrid;

class TransportBar : public QObject {
    Q_OBJECT
public:
    TransportBar(PlaybackClock *clock, VideoGrid *grid, QWidget *view);

    // The row: play, the frame steps, the scrub bar, the frame, speed, loop, dropped frames.
    QHBoxLayout *build();
    // The row says what the clock does: playing or not, the frame, the frames dropped.
    void showClock();
    // The clock over the tiles' clips as they are now (a clip opened, the tiles changed).
    void fitClockToTiles();

private:
    PlaybackClock *m_clock;
    VideoGrid *m_grid;
    QWidget *m_view;
    QToolButton *m_playButton = nullptr;
    QSlider *m_scrub = nullptr;
    QLabel *m_frameLabel = nullptr;
    QComboBox *m_speedBox = nullptr;
    QCheckBox *m_loopBox = nullptr;
    QLabel *m_droppedLabel = nullptr;
};

}  // namespace orrery::gui
