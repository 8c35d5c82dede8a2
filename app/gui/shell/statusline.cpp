// SPDX-License-Identifier: GPL-3.0-or-later
#include "statusline.h"

#include "clusterhub.h"

#include <QDateTime>
#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QStatusBar>

namespace orrery::gui {

StatusLine::StatusLine(QMainWindow *window, ClusterHub *hub)
    : QObject(window), m_hub(hub), m_followLabel(new QLabel(window)), m_ingestLabel(new QLabel(window)),
      m_clusterStatus(new QLabel(window))
{
    m_clusterStatus->setObjectName(QStringLiteral("clusterStatus"));
    m_activityLabel = new QLabel(window);
    m_activityLabel->setObjectName(QStringLiteral("activity"));
    auto *busy = new QProgressBar(window);
    busy->setRange(0, 0);
    busy->setMaximumSize(80, 12);
    busy->setTextVisible(false);
    busy->hide();
    m_activityBusy = busy;
    m_bar = window->statusBar();
    m_bar->addPermanentWidget(m_activityLabel);
    m_bar->addPermanentWidget(m_activityBusy);
    m_bar->addPermanentWidget(m_clusterStatus);
    m_bar->addPermanentWidget(m_ingestLabel);
    m_bar->addPermanentWidget(m_followLabel);
    connect(m_hub, &ClusterHub::statusChanged, this, &StatusLine::showClusterStatus);
}

QString StatusLine::activity() const
{
    return m_activityLabel->text();
}

void StatusLine::showActivity(const QString &text, bool busy)
{
    m_activityLabel->setText(text);
    m_activityBusy->setVisible(busy);
}

void StatusLine::showMessage(const QString &text, int timeoutMs)
{
    m_bar->showMessage(text, timeoutMs);
}

void StatusLine::showFollowing(bool following)
{
    m_followLabel->setText(following ? tr("following sweeps…") : tr("not following"));
}

void StatusLine::showNotFollowing(const QString &why)
{
    m_followLabel->setText(tr("not following"));
    m_followLabel->setToolTip(why);
}

void StatusLine::showFollowed(const FollowSummary &s)
{
    QString text = s.active ? tr("following: %1 active trial(s), %2 running").arg(s.active).arg(s.running)
                            : tr("following: no active sweep");
    if (!s.elsewhere.isEmpty())
        text += tr(" · %n sweep(s) acted on by another follower", nullptr, int(s.elsewhere.size()));
    if (!s.errors.isEmpty())
        text += tr(" · %n problem(s)", nullptr, int(s.errors.size()));
    m_followLabel->setText(text);
    m_followLabel->setToolTip(
        tr("last tick %1\n%2")
            .arg(QDateTime::fromMSecsSinceEpoch(s.atMs).toString(QStringLiteral("hh:mm:ss")),
                 (s.events + s.errors).join(QLatin1Char('\n'))));
    if (s.backlog)
        m_ingestLabel->setText(tr("ingesting: catching up (%1 KiB this tick)").arg(s.bytes / 1024));
    for (const QString &e : s.events)
        m_bar->showMessage(e, 8000);
}

void StatusLine::showRunCount(int runs)
{
    m_ingestLabel->setText(tr("%n run(s)", nullptr, runs));
}

void StatusLine::showClusterStatus()
{
    QStringList parts;
    QStringList tips;
    for (const QString &name : m_hub->clusters()) {
        const ClusterHub::Status s = m_hub->status(name);
        if (s.link == ClusterHub::Link::Idle)
            continue;
        const char *colour = s.link == ClusterHub::Link::Connected ? "#2e7d32"
            : s.link == ClusterHub::Link::Connecting               ? "#f57c00"
                                                                   : "#d32f2f";
        QString text = ClusterHub::linkText(s.link);
        if (s.link == ClusterHub::Link::Connected && s.connects > 1)
            text = tr("reconnected");
        parts << QStringLiteral("<span style='color:%1'>●</span> %2 %3")
                     .arg(QLatin1String(colour), name.toHtmlEscaped(), text.toHtmlEscaped());
        tips << QStringLiteral("%1: %2%3")
                    .arg(name, ClusterHub::linkText(s.link),
                         s.message.isEmpty() ? QString() : QStringLiteral(" — ") + s.message);
    }
    m_clusterStatus->setText(parts.join(QStringLiteral("  ")));
    m_clusterStatus->setToolTip(tips.join(QLatin1Char('\n')));
}

}  // namespace orrery::gui
