// SPDX-License-Identifier: GPL-3.0-or-later
//
// The main window's status bar, its permanent part: long work in progress (a submit, a report,
// finding logs) with a busy bar, each cluster's link (the window's ClusterHub), the runs shown
// or the ingest catching up, and what the follower does. Passing messages are the status bar's
// own (showMessage). Made by the window, which owns it; UI thread only.
#pragma once

#include "follower.h"

#include <QObject>

class QLabel;
class QMainWindow;
class QStatusBar;
class QWidget;

namespace orrery::gui {

class ClusterHub;

class StatusLine : public QObject {
    Q_OBJECT
public:
    // Its labels, made over `window` and added to its status bar (made now where it has none).
    StatusLine(QMainWindow *window, ClusterHub *hub);

    QLabel *clusterStatus() const { return m_clusterStatus; }
    QString activity() const;  // the work in progress said; "" when none

    void showActivity(const QString &text, bool busy);
    void showMessage(const QString &text, int timeoutMs);  // a passing one, as QStatusBar's
    void showFollowing(bool following);
    void showNotFollowing(const QString &why);
    // A follower tick: its trials, problems and events (each event a passing message too).
    void showFollowed(const FollowSummary &summary);
    void showRunCount(int runs);
    void showClusterStatus();  // each cluster's link, from the hub

private:
    QStatusBar *m_bar;
    ClusterHub *m_hub;
    QLabel *m_followLabel;
    QLabel *m_ingestLabel;
    QLabel *m_clusterStatus;
    QLabel *m_activityLabel;
    QWidget *m_activityBusy;
};

}  // namespace orrery::gui
