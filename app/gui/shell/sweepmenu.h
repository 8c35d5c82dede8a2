// SPDX-License-Identifier: GPL-3.0-or-later
//
// What can be done to the sweep or trial under the sweep tree's cursor: its context menu (cancel,
// stop, retry through SweepActions; open in the launcher, launch again; export the report; the
// trial's logs and its run's menu, RunHousekeeping's; its directory; each action as a CLI command
// to copy), and the sweep report it and File → Export sweep report… write. Opening the launcher
// and the logs is the window's (launcherRequested, trialLogsRequested). UI thread only; owned by
// the window.
#pragma once

#include "sweepactions.h"

#include "orrery/core/store.h"

#include <QObject>

class QMenu;
class QModelIndex;
class QPoint;
class QWidget;

namespace orrery::gui {

class ClusterHub;
class RunHousekeeping;
class StoreReader;
class SweepTreeModel;
class SweepTreeView;

class SweepMenu : public QObject {
    Q_OBJECT
public:
    // Pops up on `tree`'s context menu requests; dialogs open over `window`. The report is read
    // from `reader`'s database, a cluster's samples over `hub`.
    SweepMenu(QWidget *window, SweepTreeView *tree, SweepTreeModel *model, SweepActions *actions,
              RunHousekeeping *housekeeping, StoreReader *reader, ClusterHub *hub);

    // A file the window cannot write: the actions that write are there, disabled.
    void setReadOnly(bool readOnly) { m_readOnly = readOnly; }

public Q_SLOTS:
    void popup(const QPoint &pos);  // at `pos` in the tree's viewport
    // File → Export sweep report…: the sweep selected in the tree (or its trial's), else says so.
    void exportSelected();
    // A file dialog, then exportReport. exportReport writes `orrery sweep report`'s page
    // (SweepOperations::report) on a pool thread; reportExported says how it went.
    void chooseReportFile(core::SweepId sweep);
    void exportReport(core::SweepId sweep, const QString &path);

Q_SIGNALS:
    void launcherRequested(orrery::core::SweepId sweep, bool submit);
    void trialLogsRequested(orrery::core::SweepId sweep, int trial);
    void reportExported(const QString &path, const QString &error);  // error empty: written
    // For the status bar: the report's progress (busy), and how it went.
    void activity(const QString &text, bool busy);
    void message(const QString &text, int timeoutMs);

private:
    // The menu's part for a sweep (`index`), or for a trial; each returns its "Copy as CLI
    // command" submenu, made in `menu`.
    QMenu *addSweepActions(QMenu &menu, const QModelIndex &index);
    QMenu *addTrialActions(QMenu &menu, const QModelIndex &index);
    // `action`'s command line in `copy`, as `label`.
    void addCommand(QMenu *copy, SweepActions::Action action, core::SweepId sweep, int trial,
                    const QString &label);

    QWidget *m_window;
    SweepTreeView *m_tree;
    SweepTreeModel *m_model;
    SweepActions *m_actions;
    RunHousekeeping *m_housekeeping;
    StoreReader *m_reader;
    ClusterHub *m_hub;
    bool m_readOnly = false;
};

}  // namespace orrery::gui
