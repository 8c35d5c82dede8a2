// SPDX-License-Identifier: GPL-3.0-or-later
#include "transportbar.h"

#include "playbackclock.h"
#include "videogrid.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QToolButton>

#include <algorithm>

namespace orrery::gui {

namespace {

constexpr double kSpeeds[] = {0.25, 0.5, 1, 2, 4};

}  // namespace

TransportBar::TransportBar(PlaybackClock *clock, VideoGrid *grid, QWidget *view)
    : QObject(view), m_clock(clock), m_grid(grid), m_view(view)
{ }

QHBoxLayout *TransportBar::build()
{
    auto *transport = new QHBoxLayout;
    m_playButton = new QToolButton(m_view);
    m_playButton->setObjectName(QStringLiteral("playButton"));
    m_playButton->setFocusPolicy(Qt::NoFocus);
    m_playButton->setToolTip(tr("Play or pause every tile (Space)"));
    connect(m_playButton, &QToolButton::clicked, m_clock, &PlaybackClock::toggle);
    auto stepButton = [this, transport](const QString &text, int delta, const QString &tip) {
        auto *b = new QToolButton(m_view);
        b->setText(text);
        b->setToolTip(tip);
        b->setFocusPolicy(Qt::NoFocus);
        b->setAutoRepeat(true);
        connect(b, &QToolButton::clicked, m_clock, [this, delta] { m_clock->step(delta); });
        transport->addWidget(b);
    };
    transport->addWidget(m_playButton);
    stepButton(QStringLiteral("◀|"), -1, tr("Previous frame (←)"));
    stepButton(QStringLiteral("|▶"), 1, tr("Next frame (→)"));
    m_scrub = new QSlider(Qt::Horizontal, m_view);
    m_scrub->setObjectName(QStringLiteral("scrub"));
    m_scrub->setFocusPolicy(Qt::NoFocus);
    connect(m_scrub, &QSlider::valueChanged, m_clock, &PlaybackClock::seek);
    transport->addWidget(m_scrub, 1);
    m_frameLabel = new QLabel(m_view);
    m_frameLabel->setMinimumWidth(90);
    transport->addWidget(m_frameLabel);
    m_speedBox = new QComboBox(m_view);
    m_speedBox->setFocusPolicy(Qt::NoFocus);
    for (double s : kSpeeds)
        m_speedBox->addItem(QStringLiteral("%1×").arg(s), s);
    m_speedBox->setCurrentIndex(2);
    connect(m_speedBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_clock->setSpeed(m_speedBox->itemData(i).toDouble()); });
    transport->addWidget(m_speedBox);
    m_loopBox = new QCheckBox(tr("Loop"), m_view);
    m_loopBox->setFocusPolicy(Qt::NoFocus);
    m_loopBox->setChecked(true);
    connect(m_loopBox, &QCheckBox::toggled, m_clock, &PlaybackClock::setLoop);
    transport->addWidget(m_loopBox);
    m_droppedLabel = new QLabel(m_view);
    m_droppedLabel->setObjectName(QStringLiteral("droppedFrames"));
    m_droppedLabel->setToolTip(tr("Frames a tile could not show in time while playing"));
    transport->addWidget(m_droppedLabel);
    return transport;
}

void TransportBar::showClock()
{
    const int n = m_clock->frameCount();
    m_playButton->setText(m_clock->isPlaying() ? tr("Pause") : tr("Play"));
    m_playButton->setEnabled(n > 0);
    {
        const QSignalBlocker block(m_scrub);
        m_scrub->setRange(0, std::max(0, n - 1));
        m_scrub->setValue(m_clock->index());
        m_scrub->setEnabled(n > 1);
    }
    m_frameLabel->setText(n > 0 ? tr("frame %1 / %2").arg(m_clock->index() + 1).arg(n) : QString());
    m_droppedLabel->setText(tr("dropped %1").arg(m_grid->dropped()));
}

void TransportBar::fitClockToTiles()
{
    int frames = 0;
    double fps = 0;
    for (const VideoTile &t : m_grid->tiles())
        if (t.source && t.source->state() == media::FrameSource::State::Ready) {
            const media::ClipInfo info = t.source->info();
            frames = std::max(frames, info.frameCount);
            if (fps <= 0)
                fps = info.fps;
        }
    m_clock->setFrameCount(frames);
    if (fps > 0 && fps != m_clock->fps())
        m_clock->setFps(fps);
    m_grid->setFrameIndex(m_clock->index(), m_clock->isPlaying());
    showClock();
}

}  // namespace orrery::gui
