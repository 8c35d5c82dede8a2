// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "clusterhub.h"
#include "clusterview.h"
#include "compareview.h"
#include "detailsview.h"
#include "environmentchecks.h"
#include "environmentmodel.h"
#include "launchdialogs.h"
#include "logview.h"
#include "logwindows.h"
#include "postifalive.h"
#include "runhousekeeping.h"
#include "runselection.h"
#include "runspage.h"
#include "runstablemodel.h"
#include "samplefetcher.h"
#include "sshprompts.h"
#include "statusline.h"
#include "storereader.h"
#include "storewriter.h"
#include "sweepactions.h"
#include "sweepmenu.h"
#include "sweeptreemodel.h"
#include "sweeptreeview.h"
#include "systempanel.h"
#include "videoview.h"
#include "windowsettings.h"

#include "orrery/core/mlflowstore.h"
#include "orrery/core/paths.h"
#include "orrery/core/version.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <atomic>
#include <memory>

namespace orrery::gui {

namespace {

// The docks' widths: what they open at, and the least they can be (the window's own minimum is
// the central tab's plus these).
constexpr int kTreeWidth = 380, kTreeMaxWidth = 480, kDetailsWidth = 340, kDockMinimumWidth = 220;

// The window's least width is the shown tab's, not the widest tab's (Video's controls): on the
// Runs tab of a 1,500 px screen both docks keep their widths. A tab shown later that needs more
// takes it from the docks, down to their minimums. Each tab keeps the docks' widths it was left
// with: back on Runs after Video, the docks have their widths again instead of staying squeezed
// for the rest of the day.
void keepDockWidthsPerTab(QMainWindow *window, QTabWidget *tabs)
{
    QList<QSizePolicy> policies;
    for (int i = 0; i < tabs->count(); ++i)
        policies.append(tabs->widget(i)->sizePolicy());
    auto dockWidths = std::make_shared<QHash<int, QHash<QDockWidget *, int>>>();
    auto leftTab = std::make_shared<int>(tabs->currentIndex());
    auto fitShownTab = [window, tabs, policies, dockWidths, leftTab](int shown) {
        // A dock behind another's tab is "visible" off the window's edge: only what is seen counts.
        auto docked = [](const QDockWidget *dock) {
            return !dock->isFloating() && !dock->visibleRegion().isEmpty();
        };
        QHash<QDockWidget *, int> &left = (*dockWidths)[*leftTab];
        left.clear();
        for (QDockWidget *dock : window->findChildren<QDockWidget *>())  // still the left tab's layout
            if (docked(dock))
                left.insert(dock, dock->width());
        for (int i = 0; i < tabs->count(); ++i)
            tabs->widget(i)->setSizePolicy(
                i == shown ? policies[i] : QSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored));
        tabs->updateGeometry();
        QList<QDockWidget *> docks;
        QList<int> widths;
        const QHash<QDockWidget *, int> kept = dockWidths->value(shown);
        for (auto [dock, width] : kept.asKeyValueRange())
            if (docked(dock)) {
                docks.append(dock);
                widths.append(width);
            }
        // Once the shown tab's least width is in the layout (a posted LayoutRequest, before this):
        // under the left tab's, the last dock got only what that left.
        if (!docks.isEmpty())
            QMetaObject::invokeMethod(
                window, [window, docks, widths] { window->resizeDocks(docks, widths, Qt::Horizontal); },
                Qt::QueuedConnection);
        *leftTab = shown;
    };
    QObject::connect(tabs, &QTabWidget::currentChanged, window, fitShownTab);
    fitShownTab(tabs->currentIndex());
}

// The docks' opening widths, once the window has its size (before, the layout gives the space as
// it likes): the tree wide enough for state, best value and GPU-hours, Details for field and
// value; a saved layout (`restored`) wins. Where the window has less room than both ask for (a
// 1,500 px screen), the tree keeps its width and Details takes the rest: split in proportion, the
// tree's best value was cut off.
void sizeDocksAtFirstLook(QMainWindow *window, const QTreeView *view, bool restored)
{
    if (!restored) {
        auto *tree = window->findChild<QDockWidget *>(QStringLiteral("treeDock"));
        auto *details = window->findChild<QDockWidget *>(QStringLiteral("detailsDock"));
        const int room = window->width() - window->centralWidget()->minimumSizeHint().width() -
            2 * window->style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, window);
        // Wide enough for the tree's name, state and best value as the first snapshot sized
        // them (a failed sweep's state is long), within kTreeWidth..kTreeMaxWidth.
        const QHeaderView *header = view->header();
        const int contents = header->sectionPosition(SweepTreeModel::BestColumn) +
            header->sectionSize(SweepTreeModel::BestColumn) + view->width() - view->viewport()->width() +
            tree->width() - view->width();
        const int wanted = std::clamp(contents, kTreeWidth, kTreeMaxWidth);
        const int treeWidth = std::clamp(room - kDockMinimumWidth, kDockMinimumWidth, wanted);
        const int detailsWidth = std::clamp(room - treeWidth, kDockMinimumWidth, kDetailsWidth);
        window->resizeDocks({tree, details}, {treeWidth, detailsWidth}, Qt::Horizontal);
    } else {
        // The widths they had at the last close, now that the window has its size.
        const auto saved = windowSettings();
        const int treeWidth = saved->value(QStringLiteral("window/treeWidth")).toInt();
        const int detailsWidth = saved->value(QStringLiteral("window/detailsWidth")).toInt();
        auto *tree = window->findChild<QDockWidget *>(QStringLiteral("treeDock"));
        auto *details = window->findChild<QDockWidget *>(QStringLiteral("detailsDock"));
        if (treeWidth > 0 && detailsWidth > 0 && tree->isVisible() && details->isVisible())
            window->resizeDocks({tree, details}, {treeWidth, detailsWidth}, Qt::Horizontal);
        else if (treeWidth > 0 && tree->isVisible())
            window->resizeDocks({tree}, {treeWidth}, Qt::Horizontal);
    }
}

// Compare's metrics as they were left for `database` (none saved: the default ones).
void loadMetricChoice(CompareView *compare, const QString &database)
{
    const auto settings = windowSettings();
    const QString group = databaseSettingsGroup(database);
    const QSignalBlocker block(compare);  // restoring is not a change to save
    compare->setMetricChoice({settings->value(group + QLatin1String("/compareMetrics")).toStringList(),
                              settings->value(group + QLatin1String("/compareSearch")).toString()});
}

// Compare's choice of metrics, kept per database.
void saveMetricChoice(const CompareView *compare, const QString &database)
{
    const CompareView::MetricChoiceState state = compare->metricChoice();
    const auto settings = windowSettings();
    const QString group = databaseSettingsGroup(database);
    settings->setValue(group + QLatin1String("/database"), database);
    settings->setValue(group + QLatin1String("/compareMetrics"), state.chosen);
    settings->setValue(group + QLatin1String("/compareSearch"), state.filter);
}

// A notice in the system tray, made over `window` at the first one; none where the desktop has no
// tray (offscreen, a bare X session: the status bar has the event). Returns the tray.
QSystemTrayIcon *showInTray(QWidget *window, QSystemTrayIcon *tray, const QString &title,
                            const core::Notice &notice)
{
    if (!QSystemTrayIcon::isSystemTrayAvailable())
        return tray;
    if (!tray) {
        tray = new QSystemTrayIcon(window->windowIcon(), window);
        tray->setToolTip(MainWindow::tr("Orrery"));
        tray->show();
    }
    const bool bad =
        notice.kind != core::Notice::Kind::SweepEnded || notice.state != QLatin1String("finished");
    tray->showMessage(title, notice.message, bad ? QSystemTrayIcon::Warning : QSystemTrayIcon::Information,
                      10000);
    return tray;
}

// Selects `sweep` in `tree` at the first snapshot `window` shows that has it (one just submitted).
void selectWhenShown(MainWindow *window, QTreeView *tree, const SweepTreeModel *model, core::SweepId sweep)
{
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = QObject::connect(window, &MainWindow::snapshotShown, window, [tree, model, once, sweep] {
        const QModelIndex i = model->sweepIndex(sweep);
        if (!i.isValid())
            return;
        QObject::disconnect(*once);
        tree->expand(i.parent());
        tree->expand(i);
        tree->selectionModel()->select(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        tree->scrollTo(i);
    });
}

}  // namespace

MainWindow::MainWindow(const QString &databasePath, QWidget *parent)
    : QMainWindow(parent), m_reader(new StoreReader(this)), m_writer(new StoreWriter(this)),
      m_follower(new Follower(m_writer, this)), m_selection(new RunSelection(this)),
      m_tabs(new QTabWidget(this)), m_environment(new EnvironmentModel(this)),
      m_environmentView(new QTableView(this)), m_runsModel(new RunsTableModel(this)),
      m_treeModel(new SweepTreeModel(this))
{
    setWindowTitle(tr("Orrery %1").arg(core::version()));
    setObjectName(QStringLiteral("mainWindow"));
    // The docks at their opening widths beside the widest tab, as much of it as the screen has
    // (a saved geometry, restored below, wins).
    const QRect screen = QGuiApplication::primaryScreen()
        ? QGuiApplication::primaryScreen()->availableGeometry()
        : QRect(0, 0, 1400, 860);
    resize(std::min(1600, screen.width()), std::min(900, screen.height()));

    auto *centre = new QWidget(this);
    auto *centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    m_banner = new QLabel(centre);
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #664d03; padding: 6px; }"));
    m_banner->hide();
    centreLayout->addWidget(m_banner);
    centreLayout->addWidget(m_tabs, 1);
    setCentralWidget(centre);

    // Clusters first: the follower, the Video and Cluster tabs and the actions share them.
    m_prompter = new SshPrompter(this, this);
    m_hub = new ClusterHub(m_prompter, this);
    m_follower->setConnectionSource(m_hub->connectionSource());
    m_actions = new SweepActions(m_hub, m_writer, this);

    buildRunsPage();
    buildTabs();
    keepDockWidthsPerTab(this, m_tabs);
    buildDocks();
    buildMenus();
    wireRunHousekeeping();
    buildStatusBar();
    wireStore();
    wireRefreshes();

    const auto settings = windowSettings();
    restoreGeometry(settings->value(QStringLiteral("window/geometry")).toByteArray());
    const bool restored = restoreState(settings->value(QStringLiteral("window/state")).toByteArray());
    m_tabs->setCurrentIndex(settings->value(QStringLiteral("window/tab"), int(RunsTab)).toInt());

    openDatabase(databasePath.isEmpty() ? core::defaultDatabasePath() : databasePath);
    // The environment's checks start the trainer (`--version`: LibTorch's load, a second of a
    // core) and say nothing the first look needs: they wait for the first snapshot, instead of
    // taking a core from its read (bench_runs_scale: 100,000 runs shown 0.1-0.2 s sooner).
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = connect(this, &MainWindow::snapshotShown, this, [this, once, restored] {
        disconnect(*once);
        sizeDocksAtFirstLook(this, m_tree, restored);
        m_checks->refresh();
    });
}

void MainWindow::buildTabs()
{
    m_compare = new CompareView(m_reader, m_selection, m_runsModel, this);
    connect(m_compare, &CompareView::metricChoiceChanged, this,
            [this] { saveMetricChoice(m_compare, m_reader->path()); });
    m_tabs->addTab(m_compare, tr("Compare"));
    m_video = new VideoView(m_reader, m_selection, this);
    m_video->setRunsModel(m_runsModel);  // each run's sweep: its metric and swept params
    m_video->fetcher()->setConnectionSource(m_hub->namedConnectionSource());
    m_video->fetcher()->setWriter(m_writer);
    m_tabs->addTab(m_video, tr("Video"));
    m_clusterView = new ClusterView(m_hub, this);
    m_clusterView->setStoreWriter(m_writer);
    m_tabs->addTab(m_clusterView, tr("Cluster"));
    // The dialogs and the log windows the tabs and the docks open.
    m_launch = new LaunchDialogs(this, m_hub, m_prompter, m_reader, m_writer, m_tabs, m_clusterView);
    connect(m_launch, &LaunchDialogs::submitted, this, [this](qint64 sweep) {
        // Show it in the tree as soon as the next snapshot has it, and follow it at once.
        selectWhenShown(this, m_tree, m_treeModel, sweep);
        m_follower->wake();
        refresh();
    });
    m_logs = new LogWindows(this, m_reader, m_hub);
    connect(m_logs, &LogWindows::opened, this, &MainWindow::logsOpened);
    connect(m_logs, &LogWindows::failed, this, &MainWindow::logsFailed);
    connect(m_clusterView, &ClusterView::manageRequested, m_launch, &LaunchDialogs::openConnectionManager);
    connect(m_clusterView, &ClusterView::jobLogsRequested, m_logs, &LogWindows::openJobLogs);

    m_checks = new EnvironmentChecks(m_environment, m_environmentView, this);
    connect(m_checks, &EnvironmentChecks::refreshed, this, &MainWindow::environmentRefreshed);
    m_tabs->addTab(m_environmentView, tr("Environment"));
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto *a = new QAction(this);
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        connect(a, &QAction::triggered, this, [this, i] { m_tabs->setCurrentIndex(i); });
        addAction(a);
    }
}

void MainWindow::buildStatusBar()
{
    m_status = new StatusLine(this, m_hub);
    // What the rooms say while they work, and how it went.
    connect(m_launch, &LaunchDialogs::activity, m_status, &StatusLine::showActivity);
    connect(m_launch, &LaunchDialogs::message, m_status, &StatusLine::showMessage);
    connect(m_logs, &LogWindows::activity, m_status, &StatusLine::showActivity);
    connect(m_logs, &LogWindows::message, m_status, &StatusLine::showMessage);
    connect(m_sweepMenu, &SweepMenu::activity, m_status, &StatusLine::showActivity);
    connect(m_sweepMenu, &SweepMenu::message, m_status, &StatusLine::showMessage);
    connect(m_checks, &EnvironmentChecks::message, m_status, &StatusLine::showMessage);
    connect(m_actions, &SweepActions::started, this,
            [this](const QString &what) { m_status->showActivity(what, true); });
    connect(m_actions, &SweepActions::done, this, [this](const QString &message, bool ok) {
        m_status->showActivity(m_actions->inFlight() ? m_status->activity() : QString(),
                               m_actions->inFlight() > 0);
        statusBar()->showMessage(message, 10'000);
        if (!ok && isVisible() && !qEnvironmentVariableIsSet("ORRERY_TEST_SUITE"))
            QMessageBox::warning(this, tr("Orrery"), message);
        m_follower->wake();
        refresh();
    });
}

void MainWindow::wireRefreshes()
{
    connect(m_follower, &Follower::ticked, this, &MainWindow::followed);
    connect(m_follower, &Follower::unavailable, this,
            [this](const QString &why) { m_status->showNotFollowing(why); });
    connect(m_selection, &RunSelection::changed, this, [this](const QObject *) {
        m_details->showRun(m_selection->current());
        m_system->showRun(m_selection->current());
    });
    // Live refreshes: at most one snapshot read in flight, at most two a second.
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(500);
    connect(&m_refreshTimer, &QTimer::timeout, this, &MainWindow::refresh);
    // Another process (the CLI, a sweep watch) may write too: look again now and then.
    auto *poll = new QTimer(this);
    poll->setInterval(10'000);
    connect(poll, &QTimer::timeout, this, &MainWindow::refreshSoon);
    poll->start();
}

void MainWindow::wireStore()
{
    // The writer opens (creating or migrating the file) first, then the reader, read-only: one
    // writer connection per process (ARCHITECTURE.md).
    connect(m_writer, &StoreWriter::opened, this, [this](const QString &path, const QString &readOnly) {
        m_opening = false;
        m_writerProblem = readOnly;
        m_reader->open(path, core::TrackingStore::Mode::ReadOnly);
    });
    connect(m_writer, &StoreWriter::failed, this, [this](const QString &message) {
        if (!m_opening) {  // a job failed: said, and the next one may succeed
            statusBar()->showMessage(message, 10'000);
            return;
        }
        m_opening = false;  // the file cannot be written: read what can be read
        m_writerProblem = message;
        m_reader->open(m_writer->path(), core::TrackingStore::Mode::ReadOnly);
    });
    // Whether the file can be written is the writer's to say (a newer Orrery's file, a read-only
    // directory); the reader is read-only by choice.
    connect(m_reader, &StoreReader::opened, this, [this](const QString &path, const QString &) {
        const QString readOnly = m_writerProblem;
        setWindowTitle(tr("Orrery %1 — %2").arg(core::version(), QFileInfo(path).fileName()));
        if (readOnly.isEmpty()) {
            m_banner->hide();
        } else {
            m_banner->setText(tr("Read-only: %1").arg(readOnly));
            m_banner->show();
        }
        m_firstSnapshot = true;
        m_actions->setDatabase(path);
        m_runsPage->setDatabase(path);
        m_housekeeping->setReadOnly(!readOnly.isEmpty());
        m_sweepMenu->setReadOnly(!readOnly.isEmpty());
        refresh();
        if (m_wantFollow && readOnly.isEmpty())
            m_follower->start();
        else
            m_follower->stop();
        m_status->showFollowing(m_follower->isFollowing());
    });
    // The file cannot be opened: said once, in a dialog.
    connect(m_reader, &StoreReader::failed, this, [this](const QString &message) {
        m_snapshotInFlight = false;
        storeProblem(tr("The database cannot be read:\n\n%1\n\nOpen another one with File → Open "
                        "database, or move this file aside (Orrery never overwrites it).")
                         .arg(message),
                     message);
    });
    // A read asked for a row deleted since (a run deleted here, by the CLI, by another window):
    // the views are stale, the file is fine. The next snapshot drops the row from the selection.
    connect(m_reader, &StoreReader::stale, this, [this](const QString &message) {
        Q_EMIT staleRead(message);
        statusBar()->showMessage(tr("Refreshed: %1 (deleted meanwhile)").arg(message), 10'000);
        refreshSoon();
    });
    // Any other failed read (a corrupt chunk, an I/O error): in the status bar each time, in a
    // dialog once per message — a live refresh that fails again never opens another.
    connect(m_reader, &StoreReader::readFailed, this, [this](const QString &message) {
        m_snapshotInFlight = false;
        storeProblem(tr("A read of the database failed:\n\n%1\n\nThe views may be incomplete; "
                        "the file itself is left as it is.")
                         .arg(message),
                     message);
    });
}

MainWindow::~MainWindow()
{
    // A cluster connection's thread may be waiting on one of this window's dialogs (the
    // follower's, a poll's): answer them now, so those threads can end.
    m_prompter->cancelAll();
    // The checks may still be running (orrery-train loading): wait rather than leave a pool
    // thread writing into a destroyed watcher.
    m_checks->waitForChecks();
    // The follower gives its leases back through the writer, which then runs every job still
    // queued (nothing asked for is lost) before the connections it may use go.
    delete m_follower;
    m_follower = nullptr;
    // The reader's read-only connection first: the writer's, closing last, leaves the main file
    // whole (its WAL checkpointed: core::TrackingStore's destructor, SQLite's last close).
    m_reader->close();
    delete m_writer;
    m_writer = nullptr;
}

QTreeView *MainWindow::sweepTree() const
{
    return m_tree;
}

QLabel *MainWindow::clusterStatusLabel() const
{
    return m_status->clusterStatus();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    const auto settings = windowSettings();
    settings->setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings->setValue(QStringLiteral("window/state"), saveState());
    settings->setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
    // The docks' widths apart: restoreState() before the window has its size gave the tree
    // QTreeView's own 256 px back instead of the 380 it had, hiding Best, GPU-h and Step.
    if (auto *tree = findChild<QDockWidget *>(QStringLiteral("treeDock")))
        settings->setValue(QStringLiteral("window/treeWidth"), tree->width());
    if (auto *details = findChild<QDockWidget *>(QStringLiteral("detailsDock")))
        settings->setValue(QStringLiteral("window/detailsWidth"), details->width());
    if (!m_firstSnapshot)  // never shown: nothing the user left
        m_tree->saveExpansion(m_reader->path());
    QMainWindow::closeEvent(event);
}

void MainWindow::buildRunsPage()
{
    m_runsPage = new RunsPage(m_runsModel, m_selection, this);
    connect(m_runsPage, &RunsPage::queryChanged, this, &MainWindow::refresh);
    connect(m_runsPage, &RunsPage::goodputShown, this, &MainWindow::refresh);
    m_tabs->addTab(m_runsPage, tr("Runs"));
    auto *findFilter = new QAction(this);
    findFilter->setShortcut(QKeySequence::Find);
    connect(findFilter, &QAction::triggered, this, [this] {
        m_tabs->setCurrentWidget(m_runsPage);
        m_runsPage->focusFilter();
    });
    addAction(findFilter);
}

void MainWindow::wireRunHousekeeping()
{
    m_housekeeping = new RunHousekeeping(m_runsModel, m_reader, m_writer, m_selection, m_details, this);
    connect(m_runsPage, &RunsPage::runMenuRequested, this,
            [this](const QList<core::RunId> &runs, const QPoint &at) {
                QMenu *menu = m_housekeeping->runMenu(runs, this);
                menu->setAttribute(Qt::WA_DeleteOnClose);
                menu->popup(at);
            });
    connect(m_housekeeping, &RunHousekeeping::edited, this,
            [this](const QString &error, const QString &message) {
                statusBar()->showMessage(message, 10'000);
                if (error.isEmpty()) {
                    refresh();
                    if (m_selection->current())
                        m_details->showRun(m_selection->current());
                }
                Q_EMIT runsEdited(error);
            });
    // The tree's menu: a sweep's or a trial's actions, the trial's run menu among them.
    m_sweepMenu = new SweepMenu(this, m_tree, m_treeModel, m_actions, m_housekeeping, m_reader, m_hub);
    connect(m_sweepMenu, &SweepMenu::launcherRequested, m_launch, &LaunchDialogs::openSweepInLauncher);
    connect(m_sweepMenu, &SweepMenu::trialLogsRequested, this,
            [this](core::SweepId sweep, int trial) { m_logs->openTrialLogs(sweep, trial); });
    connect(m_sweepMenu, &SweepMenu::reportExported, this, &MainWindow::reportExported);
    for (QAction *menu : menuBar()->actions())
        if (menu->menu() && menu->text() == tr("&View"))
            menu->menu()->addAction(m_runsPage->showArchivedAction());
    connect(m_details, &DetailsView::logsRequested, m_logs, &LogWindows::openTrialLogs);
}

void MainWindow::buildDocks()
{
    auto *treeDock = new QDockWidget(tr("Experiments & sweeps"), this);
    treeDock->setObjectName(QStringLiteral("treeDock"));
    m_tree = new SweepTreeView(m_treeModel, m_selection, treeDock);
    // Opens wide enough for a sweep's state, best value and GPU-hours side by side (a QTreeView's
    // own size hint, 256 px, cut the GPU-hours off: kTreeWidth, below); narrower only when the
    // user drags it so, or the screen is small (the minimums are the window's minimum: 380 and
    // 340 px here beside the Video tab made it 1,632 px wide, wider than a 1,500 px screen).
    m_tree->setMinimumWidth(kDockMinimumWidth);
    treeDock->setWidget(m_tree);
    addDockWidget(Qt::LeftDockWidgetArea, treeDock);
    connect(m_tree, &SweepTreeView::trialLogsRequested, this,
            [this](core::SweepId sweep, int trial) { m_logs->openTrialLogs(sweep, trial); });
    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);  // the tree's menu: SweepMenu

    auto *detailsDock = new QDockWidget(tr("Details"), this);
    detailsDock->setObjectName(QStringLiteral("detailsDock"));
    m_details = new DetailsView(m_reader, detailsDock);
    m_details->setObjectName(QStringLiteral("detailsView"));
    m_details->setConnections(m_hub->connectionSource());  // a cluster run's stderr
    m_details->setMinimumWidth(kDockMinimumWidth);
    detailsDock->setWidget(m_details);
    addDockWidget(Qt::RightDockWidgetArea, detailsDock);

    // The current run's CPU, memory and GPU use (its `system` events), a tab beside Details.
    auto *systemDock = new QDockWidget(tr("System"), this);
    systemDock->setObjectName(QStringLiteral("systemDock"));
    m_system = new SystemPanel(m_reader, systemDock);
    systemDock->setWidget(m_system);
    addDockWidget(Qt::RightDockWidgetArea, systemDock);
    tabifyDockWidget(detailsDock, systemDock);

    detailsDock->raise();
}

void MainWindow::buildMenus()
{
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    QAction *open = fileMenu->addAction(tr("&Open database…"));
    open->setShortcut(QKeySequence::Open);
    connect(open, &QAction::triggered, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open an Orrery database"), m_reader->path(),
                                         tr("SQLite databases (*.sqlite *.db);;All files (*)"));
        if (!path.isEmpty())
            openDatabase(path);
    });
    QAction *import = fileMenu->addAction(tr("&Import run directories or an MLflow store…"));
    connect(import, &QAction::triggered, this, [this] {
        const QString root = QFileDialog::getExistingDirectory(this, tr("Import the run directories under"));
        if (root.isEmpty())
            return;
        bool ok = false;
        const QString experiment = QInputDialog::getText(this, tr("Import"), tr("Into experiment:"),
                                                         QLineEdit::Normal, QStringLiteral("Default"), &ok);
        if (ok && !experiment.trimmed().isEmpty())
            importRunDirectories(root, experiment.trimmed());
    });
    QAction *report = fileMenu->addAction(tr("&Export sweep report…"));
    report->setObjectName(QStringLiteral("exportReport"));
    report->setToolTip(tr("The sweep selected in the tree as one HTML page to share (orrery sweep report)"));
    connect(report, &QAction::triggered, this, [this] { m_sweepMenu->exportSelected(); });
    QAction *refreshEnv = fileMenu->addAction(tr("&Check environment again"));
    connect(refreshEnv, &QAction::triggered, m_checks, &EnvironmentChecks::refresh);
    QAction *reload = fileMenu->addAction(tr("&Reload"));
    reload->setShortcut(QKeySequence::Refresh);
    connect(reload, &QAction::triggered, this, &MainWindow::refresh);
    fileMenu->addSeparator();
    QAction *quit = fileMenu->addAction(tr("&Quit"));
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    QMenu *clusterMenu = menuBar()->addMenu(tr("&Sweeps"));
    QAction *launch = clusterMenu->addAction(tr("&Launch a sweep…"));
    launch->setObjectName(QStringLiteral("launchAction"));
    launch->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    connect(launch, &QAction::triggered, m_launch, &LaunchDialogs::openLauncher);
    QAction *manage = clusterMenu->addAction(tr("&Manage clusters…"));
    connect(manage, &QAction::triggered, m_launch, &LaunchDialogs::openConnectionManager);

    QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget *dock : findChildren<QDockWidget *>())
        viewMenu->addAction(dock->toggleViewAction());
    QAction *follow = viewMenu->addAction(tr("&Follow active sweeps"));
    follow->setCheckable(true);
    follow->setChecked(m_wantFollow);
    connect(follow, &QAction::toggled, this, &MainWindow::setFollowing);
}

void MainWindow::openDatabase(const QString &path)
{
    if (!m_reader->path().isEmpty() && !m_firstSnapshot)
        m_tree->saveExpansion(m_reader->path());  // the database before: its tree as it was left
    m_selection->select({}, this);
    m_writerProblem.clear();
    m_problemsShown.clear();  // another file: its problems are news
    m_opening = true;
    m_writer->open(path);
}

void MainWindow::setFollowing(bool on)
{
    m_wantFollow = on;
    if (on && !m_reader->path().isEmpty() && !m_banner->isVisible())
        m_follower->start();
    else if (!on)
        m_follower->stop();
    m_status->showFollowing(m_follower->isFollowing());
}

void MainWindow::storeProblem(const QString &text, const QString &key)
{
    statusBar()->showMessage(key);
    Q_EMIT databaseFailed(key);
    if (m_problemsShown.contains(key) || m_problemDialogOpen || !isVisible() ||
        qEnvironmentVariableIsSet("ORRERY_TEST_SUITE"))
        return;
    m_problemsShown.insert(key);
    m_problemDialogOpen = true;
    QMessageBox::critical(this, tr("Orrery"), text);
    m_problemDialogOpen = false;
}

void MainWindow::refreshSoon()
{
    if (m_refreshTimer.isActive())
        return;  // one is coming
    const qint64 since = m_sinceRefresh.isValid() ? m_sinceRefresh.elapsed() : 500;
    m_refreshTimer.start(int(std::max<qint64>(0, 500 - since)));
}

void MainWindow::refresh()
{
    if (m_snapshotInFlight) {
        m_snapshotDirty = true;
        return;
    }
    m_snapshotInFlight = true;
    m_sinceRefresh.start();
    const core::RunQuery query = m_runsPage->query();
    // The trackers live on the reader thread's side; reads are one at a time (m_snapshotInFlight).
    // Each trial's goodput reads every run's phase records: only while its column is shown (before
    // the first snapshot, whether this database's saved columns show it: the view's columns are
    // not chosen yet, and reading goodput for every run cost the open of 100,000 runs 170 ms).
    const bool goodput = m_runsPage->wantsGoodput(m_firstSnapshot);
    m_reader->read<Snapshot>(
        this,
        [query, trackers = m_progressTrackers, selected = m_selection->runs(),
         goodput](const core::TrackingStore &store) {
            return readSnapshot(store, query, trackers.get(), selected, goodput);
        },
        [this](Snapshot s) {
            m_snapshotInFlight = false;
            showSnapshot(s);
            if (m_snapshotDirty) {
                m_snapshotDirty = false;
                refreshSoon();
            }
        });
}

void MainWindow::showSnapshot(const Snapshot &s)
{
    if (m_firstSnapshot)
        loadMetricChoice(m_compare, m_reader->path());  // a database (re)opened: its own choices
    m_runsPage->showSnapshot(s, m_firstSnapshot);
    m_treeModel->setSnapshot(s);
    if (!s.gone.isEmpty()) {  // deleted elsewhere (the CLI, another window): out of every view
        QList<core::RunId> kept = m_selection->runs();
        kept.removeIf([&](core::RunId r) { return s.gone.contains(r); });
        m_selection->select(kept, this);
    }
    if (m_firstSnapshot) {
        m_tree->restoreExpansion(m_reader->path());
        for (int c = 0; c < SweepTreeModel::Columns; ++c)
            m_tree->resizeColumnToContents(c);
        m_firstSnapshot = false;
    }
    m_runsPage->syncSelection();
    m_compare->setMetricKeys(s.metricKeys);
    m_compare->refresh();
    if (m_tabs->currentWidget() == m_video)  // new samples of running trials appear live
        m_video->refresh();
    if (m_selection->current()) {
        m_details->showRun(m_selection->current());
        m_system->showRun(m_selection->current());  // a running trial's new samples
    }
    m_status->showRunCount(int(s.runs.size()));
    Q_EMIT snapshotShown();
}

void MainWindow::followed(const FollowSummary &s)
{
    m_status->showFollowed(s);
    for (const core::Notice &n : s.notices) {
        const QString title = core::noticeTitle(n);
        Q_EMIT desktopNotification(title, n.message);
        m_tray = showInTray(this, m_tray, title, n);
    }
    if (s.points || !s.events.isEmpty())
        refreshSoon();
}

void MainWindow::importRunDirectories(const QString &root, const QString &experiment)
{
    auto *progress =
        new QProgressDialog(tr("Looking for run directories under %1…").arg(root), tr("Cancel"), 0, 0, this);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(300);
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    connect(progress, &QProgressDialog::canceled, this, [cancel] { cancel->store(true); });
    QPointer<QProgressDialog> dialog(progress);
    // On the window's store writer, one run directory per transaction; the follower's ticks wait
    // their turn.
    m_writer->write<std::pair<int, qint64>>(
        this,
        [root, experiment, cancel, dialog](core::TrackingStore &store) -> std::pair<int, qint64> {
            int runs = 0;
            qint64 points = 0;
            try {
                const core::ImportSources sources = core::importSources(root);
                if (sources.mlflowStore) {  // an MLflow store's runs (core/mlflowstore.h)
                    const core::MlflowImport r =
                        core::importMlflowRuns(store, core::readMlflowStore(*sources.mlflowStore));
                    runs += r.runs;
                    points += r.points;
                }
                const QStringList &dirs = sources.runDirectories;
                postIfAlive(dialog, [n = dirs.size()](QProgressDialog *d) { d->setMaximum(int(n)); });
                for (const QString &dir : dirs) {
                    if (cancel->load())
                        break;
                    const auto r =
                        store.ingestRunDirectory(dir, experiment, [cancel] { return cancel->load(); });
                    ++runs;
                    points += r.events.points;
                    postIfAlive(dialog, [done = int(&dir - dirs.data()) + 1, dir](QProgressDialog *d) {
                        d->setValue(done);
                        d->setLabelText(QFileInfo(dir).fileName());
                    });
                }
            } catch (const std::exception &e) {
                qWarning("import: %s", e.what());
            }
            return {runs, points};
        },
        [this, dialog](const std::pair<int, qint64> &result) {
            const auto [runs, points] = result;
            if (dialog)
                dialog->deleteLater();
            statusBar()->showMessage(tr("Imported %n run(s), %1 points", nullptr, runs).arg(points), 10'000);
            refresh();
            Q_EMIT importFinished(runs, int(points));
        });
}

}  // namespace orrery::gui
