// SPDX-License-Identifier: GPL-3.0-or-later
#include "playbackclock.h"

#include <algorithm>
#include <cmath>

namespace orrery::gui {

PlaybackClock::PlaybackClock(QObject *parent) : QObject(parent)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &PlaybackClock::tick);
}

void PlaybackClock::setFrameCount(int frames)
{
    m_frameCount = std::max(0, frames);
    if (m_index >= m_frameCount)
        setIndex(std::max(0, m_frameCount - 1));
    if (m_frameCount == 0)
        pause();
}

void PlaybackClock::setFps(double fps)
{
    m_fps = fps > 0 ? fps : 8;
    restartAnchor();
}

void PlaybackClock::setSpeed(double speed)
{
    m_speed = std::clamp(speed, 0.25, 4.0);
    restartAnchor();
}

void PlaybackClock::setLoop(bool on)
{
    m_loop = on;
}

void PlaybackClock::restartAnchor()
{
    m_anchor = m_index;
    m_shown = 0;
    m_elapsed.start();
    // Half a frame period, at least 1 ms: 24 fps ticks every 20 ms.
    m_timer.setInterval(std::max(1, int(500.0 / (m_fps * m_speed))));
}

void PlaybackClock::play()
{
    if (m_playing || m_frameCount == 0)
        return;
    if (!m_loop && m_index >= m_frameCount - 1)
        setIndex(0);  // play at the end of a clip that does not loop: from the start
    m_playing = true;
    restartAnchor();
    m_timer.start();
    Q_EMIT playingChanged(true);
}

void PlaybackClock::pause()
{
    if (!m_playing)
        return;
    m_playing = false;
    m_timer.stop();
    Q_EMIT playingChanged(false);
}

void PlaybackClock::toggle()
{
    m_playing ? pause() : play();
}

void PlaybackClock::seek(int index)
{
    setIndex(std::clamp(index, 0, std::max(0, m_frameCount - 1)));
    restartAnchor();
}

void PlaybackClock::step(int delta)
{
    pause();
    if (m_frameCount == 0)
        return;
    int next = m_index + delta;
    if (m_loop)
        next = ((next % m_frameCount) + m_frameCount) % m_frameCount;
    seek(next);
}

void PlaybackClock::tick()
{
    if (m_frameCount == 0)
        return;
    // Frames due since the anchor, by the wall clock; each one not shown by a tick is skipped.
    const qint64 due = qint64(std::floor(double(m_elapsed.nsecsElapsed()) * 1e-9 * m_fps * m_speed));
    if (due <= m_shown)
        return;
    m_skipped += due - m_shown - 1;
    m_shown = due;
    const qint64 next = m_anchor + due;
    if (next >= m_frameCount && !m_loop) {
        setIndex(m_frameCount - 1);
        pause();
        return;
    }
    setIndex(int(next % m_frameCount));
}

void PlaybackClock::setIndex(int index)
{
    if (index == m_index)
        return;
    m_index = index;
    Q_EMIT indexChanged(index);
}

}  // namespace orrery::gui
