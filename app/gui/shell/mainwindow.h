// SPDX-License-Identifier: GPL-3.0-or-later
//
// Orrery's one main window (UX.md): the experiments → sweeps → trials tree on the left, the
// current run's details on the right, and the Runs, Compare, Video, Cluster and Environment tabs
// in the centre, all over one shared run selection. The store is read on the StoreReader's
// thread and active sweeps are followed on the Follower's: the UI thread only paints. Clusters
// are reached through one ClusterHub (one connection per cluster, SSH questions as dialogs),
// which the follower, the Video tab, the Cluster tab, the launcher and the sweep actions share;
// the status bar shows each cluster's link. The window places the rooms and wires them; what its
// menus, tabs and docks open or say has a controller of its own beside it (LaunchDialogs,
// LogWindows, SweepMenu, EnvironmentChecks, StatusLine).
#pragma once

#include "follower.h"
#include "snapshot.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QSet>
#include <QTimer>

#include <functional>
#include <memory>

class QLabel;
class QSystemTrayIcon;
class QTabWidget;
class QTableView;
class QTreeView;

namespace orrery::gui {

class ClusterHub;
class ClusterView;
class CompareView;
class DetailsView;
class EnvironmentModel;
class EnvironmentChecks;
class LaunchDialogs;
class LogView;
class LogWindows;
class RunHousekeeping;
class RunSelection;
class RunsPage;
class RunsTableModel;
class SshPrompter;
class StatusLine;
class StoreReader;
class StoreWriter;
class SweepActions;
class SweepMenu;
class SweepTreeModel;
class SweepTreeView;
class SystemPanel;
class VideoView;

class MainWindow : public QMainWindow {
    Q_OBJECT
    // logsOpened's LogView * as a complete type where moc registers it (QSignalSpy, queued calls).
    Q_MOC_INCLUDE("logview.h")
public:
    enum Tab { RunsTab, CompareTab, VideoTab, ClusterTab, EnvironmentTab };

    // Opens `databasePath` (empty: the CLI's default, $ORRERY_DB or the data directory).
    explicit MainWindow(const QString &databasePath = {}, QWidget *parent = nullptr);
    ~MainWindow() override;

    EnvironmentModel *environmentModel() const { return m_environment; }
    RunsTableModel *runsModel() const { return m_runsModel; }
    SweepTreeModel *treeModel() const { return m_treeModel; }
    RunSelection *selection() const { return m_selection; }
    CompareView *compareView() const { return m_compare; }
    DetailsView *detailsView() const { return m_details; }
    SystemPanel *systemPanel() const { return m_system; }
    VideoView *videoView() const { return m_video; }
    ClusterView *clusterView() const { return m_clusterView; }
    ClusterHub *clusterHub() const { return m_hub; }
    SshPrompter *prompter() const { return m_prompter; }
    SweepActions *sweepActions() const { return m_actions; }
    QTreeView *sweepTree() const;
    RunsPage *runsPage() const { return m_runsPage; }
    RunHousekeeping *housekeeping() const { return m_housekeeping; }
    QLabel *clusterStatusLabel() const;
    StoreReader *reader() const { return m_reader; }
    QTabWidget *tabs() const { return m_tabs; }
    // The sweep launcher (Ctrl+L), the launcher over a recorded sweep's spec, the connection manager.
    LaunchDialogs *launchDialogs() const { return m_launch; }
    // A live tail of a trial's or a Slurm job's logs in a window of its own (logsOpened).
    LogWindows *logWindows() const { return m_logs; }
    // The tree's menu on a sweep or trial, and the sweep report (reportExported).
    SweepMenu *sweepMenu() const { return m_sweepMenu; }

public Q_SLOTS:
    void openDatabase(const QString &path);
    // Re-reads the tree and the runs now (live updates call it, coalesced).
    void refresh();
    // The store has new data (a follower tick with points; the benchmark's writer): a refresh at
    // once, or as soon as the last one is 500 ms old — at most two a second, and no point waits
    // a fixed half second before it is read.
    void refreshSoon();
    void setFollowing(bool on);
    void importRunDirectories(const QString &root, const QString &experiment);

Q_SIGNALS:
    void environmentRefreshed();
    void snapshotShown();  // the tree and the table show a new snapshot
    // The database could not be opened, or a read of it failed (not for a row gone: staleRead).
    void databaseFailed(const QString &message);
    void staleRead(const QString &message);
    void logsOpened(orrery::gui::LogView *view);
    void logsFailed(const QString &message);
    // A housekeeping write (RunHousekeeping) finished: `error` empty when it was done (the refresh
    // it asked for follows as snapshotShown), else why nothing was changed.
    void runsEdited(const QString &error);
    void importFinished(int runs, int points);
    void reportExported(const QString &path, const QString &error);  // error empty: written
    // A notice turned into a desktop notification (shown through the system tray where there is
    // one: freedesktop notifications on Linux desktops). Emitted whether or not a tray shows it.
    void desktopNotification(const QString &title, const QString &body);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void buildRunsPage();
    void buildTabs();  // Compare, Video, Cluster, Environment; Ctrl+1..5
    void buildStatusBar();  // and what the rooms say for it
    void wireStore();  // the writer, then the reader
    void wireRefreshes();  // the follower's ticks, the current run's docks, live refreshes
    void buildDocks();
    void buildMenus();
    void wireRunHousekeeping();  // the run menu's writes, the tree's menu, Show archived in the View menu
    void showSnapshot(const Snapshot &snapshot);
    // A problem with the store: in the status bar, and in a dialog the first time `key` is seen
    // (never while another such dialog is open, never again by a timer's refresh).
    void storeProblem(const QString &text, const QString &key);
    void followed(const FollowSummary &summary);

    StoreReader *m_reader;
    StoreWriter *m_writer;  // the window's one read-write connection
    QString m_writerProblem;  // why the writer cannot write the open file ("": it can)
    bool m_opening = false;  // the writer is opening a file (its failure is the file's)
    Follower *m_follower;
    QSystemTrayIcon *m_tray = nullptr;  // made at the first notice, where the desktop has a tray
    RunSelection *m_selection;
    QTabWidget *m_tabs;
    EnvironmentModel *m_environment;
    QTableView *m_environmentView;
    RunsTableModel *m_runsModel;
    RunsPage *m_runsPage = nullptr;
    RunHousekeeping *m_housekeeping = nullptr;
    SweepTreeModel *m_treeModel;
    SweepTreeView *m_tree = nullptr;  // its expansion kept at close and when another database opens
    CompareView *m_compare = nullptr;
    DetailsView *m_details = nullptr;
    SystemPanel *m_system = nullptr;
    VideoView *m_video = nullptr;
    SshPrompter *m_prompter = nullptr;
    ClusterHub *m_hub = nullptr;
    ClusterView *m_clusterView = nullptr;
    SweepActions *m_actions = nullptr;
    EnvironmentChecks *m_checks = nullptr;
    LaunchDialogs *m_launch = nullptr;
    LogWindows *m_logs = nullptr;
    SweepMenu *m_sweepMenu = nullptr;
    StatusLine *m_status = nullptr;
    QLabel *m_banner = nullptr;

    QTimer m_refreshTimer;  // coalesces refresh requests
    QElapsedTimer m_sinceRefresh;  // since the last snapshot read went out
    bool m_snapshotInFlight = false, m_snapshotDirty = false;
    QSet<QString> m_problemsShown;  // the store problems already said in a dialog (once each)
    bool m_problemDialogOpen = false;
    // Each active sweep's progress tracker (rates need consecutive snapshots), used by the reads.
    std::shared_ptr<ProgressTrackers> m_progressTrackers = std::make_shared<ProgressTrackers>();
    bool m_firstSnapshot = true;
    bool m_wantFollow = true;
};

}  // namespace orrery::gui