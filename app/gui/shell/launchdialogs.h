// SPDX-License-Identifier: GPL-3.0-or-later
//
// The window's dialogs for sweeps and clusters (the Sweeps menu): the sweep launcher (Ctrl+L; one
// at a time, the spec last edited kept across restarts), the launcher over a recorded sweep's spec
// ("Open in launcher", "Launch again", `orrery sweep relaunch`), and the connection manager. Each is
// non-modal, over the main window, on the window's ClusterHub and StoreWriter. A submitted sweep is
// the window's to show and follow (submitted). UI thread only; owned by the window.
#pragma once

#include "orrery/core/store.h"

#include <QObject>

class QTabWidget;
class QWidget;

namespace orrery::gui {

class ClusterHub;
class ClusterView;
class Launcher;
class SshPrompter;
class StoreReader;
class StoreWriter;

class LaunchDialogs : public QObject {
    Q_OBJECT
public:
    // `tabs` and `clusterView`: the cluster shown in the Cluster tab is the dialogs' first choice.
    LaunchDialogs(QWidget *window, ClusterHub *hub, SshPrompter *prompter, StoreReader *reader,
                  StoreWriter *writer, QTabWidget *tabs, ClusterView *clusterView);

public Q_SLOTS:
    // The sweep launcher (the open one, raised); returned so tests can drive it.
    Launcher *openLauncher();
    // The launcher with a recorded sweep's spec as it was submitted, on its cluster: to edit, or
    // `submit` at once as a new sweep once its checks pass.
    Launcher *openSweepInLauncher(core::SweepId sweep, bool submit);
    void openConnectionManager();

Q_SIGNALS:
    // For the status bar: a submit's progress (busy), and that it was submitted.
    void activity(const QString &text, bool busy);
    void message(const QString &text, int timeoutMs);
    void submitted(qint64 sweep);

private:
    QWidget *m_window;
    ClusterHub *m_hub;
    SshPrompter *m_prompter;
    StoreReader *m_reader;
    StoreWriter *m_writer;
    QTabWidget *m_tabs;
    ClusterView *m_clusterView;
};

}  // namespace orrery::gui
