// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one clock of the video view: every tile shows the frame index this clock says, so after
// play, pause, scrub or a frame step all tiles are on the same frame by construction.
//
// While playing, the index follows wall time (anchor index + elapsed × fps × speed), not a count
// of timer ticks: a late tick does not slow playback down, it skips frames, and skipped() counts
// them (the view adds them to its dropped frames). The timer ticks at twice the frame rate so a
// frame is shown at most half a period late. UI thread only.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace orrery::gui {

class PlaybackClock : public QObject {
    Q_OBJECT
public:
    explicit PlaybackClock(QObject *parent = nullptr);

    int index() const { return m_index; }
    int frameCount() const { return m_frameCount; }
    bool isPlaying() const { return m_playing; }
    bool loops() const { return m_loop; }
    double fps() const { return m_fps; }
    double speed() const { return m_speed; }
    // Frames the clock passed over without showing them (a late timer), since the last reset.
    qint64 skipped() const { return m_skipped; }
    void resetSkipped() { m_skipped = 0; }

    void setFrameCount(int frames);  // the longest clip's; the index is kept within it
    void setFps(double fps);  // the first tile's frame rate
    void setSpeed(double speed);  // 0.25 .. 4
    void setLoop(bool on);

public Q_SLOTS:
    void play();
    void pause();
    void toggle();
    void seek(int index);  // scrub: also pauses nothing, playback goes on from there
    void step(int delta);  // ←/→: pauses, then moves by delta (wrapping when looping)

Q_SIGNALS:
    void indexChanged(int index);
    void playingChanged(bool playing);

private:
    void tick();
    void restartAnchor();
    void setIndex(int index);

    QTimer m_timer;
    QElapsedTimer m_elapsed;
    int m_anchor = 0;  // the index when m_elapsed started
    qint64 m_shown = 0;  // frames since the anchor that a tick has shown
    int m_index = 0;
    int m_frameCount = 0;
    double m_fps = 8, m_speed = 1;
    bool m_playing = false, m_loop = true;
    qint64 m_skipped = 0;
};

}  // namespace orrery::gui
