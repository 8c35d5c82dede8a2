// SPDX-License-Identifier: GPL-3.0-or-later
//
// The window's log windows: a live tail of a trial's attempt's stdout and stderr (double-click in
// the tree, the Details dock, the tree's menu) or of a Slurm job's (double-click in the Cluster
// tab's queue), each in a window of its own over the main window. Where the logs are is the
// executor's to say (SweepOperations::logs, the CLI's `sweep logs` too), found on a pool thread
// since a cluster's executor connects; the files are read through the window's ClusterHub.
// UI thread only; owned by the window.
#pragma once

#include "orrery/core/store.h"
#include "orrery/remote/executors.h"

#include <QObject>
#include <QPair>

class QWidget;

namespace orrery::gui {

class ClusterHub;
class LogView;
class StoreReader;

class LogWindows : public QObject {
    Q_OBJECT
    // opened's LogView * as a complete type where moc registers it (QSignalSpy, queued calls).
    Q_MOC_INCLUDE("logview.h")
public:
    // The windows open over `window`; the trials' logs are found in `reader`'s database.
    LogWindows(QWidget *window, StoreReader *reader, ClusterHub *hub);

public Q_SLOTS:
    // `attempt` -1: the latest; a failed attempt opens on its stderr, with the other attempts in
    // the view's chooser.
    void openTrialLogs(core::SweepId sweep, int trial, int attempt = -1);
    void openJobLogs(const QString &cluster, const QString &jobId);

Q_SIGNALS:
    void opened(orrery::gui::LogView *view);
    void failed(const QString &message);
    // For the status bar: finding the logs (busy), and what went wrong.
    void activity(const QString &text, bool busy);
    void message(const QString &text, int timeoutMs);

private:
    // A log window over `files` (label, path) of `cluster` ("": this machine).
    LogView *show(const QString &title, const QString &cluster, const QList<QPair<QString, QString>> &files,
                  const QString &emptyHint = {});
    // The view's attempt chooser: each attempt chosen shows that attempt's files, found as the
    // first ones were (in `database`, over `connections`).
    void followAttempts(LogView *view, const QString &database,
                        const remote::Executors::ConnectionSource &connections, core::SweepId sweep,
                        int trial, const QList<int> &attempts);

    QWidget *m_window;
    StoreReader *m_reader;
    ClusterHub *m_hub;
};

}  // namespace orrery::gui
