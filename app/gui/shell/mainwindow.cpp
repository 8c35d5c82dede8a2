// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "blockingpool.h"
#include "clusterhub.h"
#include "clusterview.h"
#include "compareview.h"
#include "connectionmanager.h"
#include "detailsview.h"
#include "environmentmodel.h"
#include "launcher.h"
#include "logview.h"
#include "runhousekeeping.h"
#include "runselection.h"
#include "runspage.h"
#include "runstablemodel.h"
#include "runstableview.h"
#include "samplefetcher.h"
#include "sshprompts.h"
#include "storereader.h"
#include "storewriter.h"
#include "sweepactions.h"
#include "sweeptreemodel.h"
#include "sweeptreeview.h"
#include "systempanel.h"
#include "videoview.h"
#include "windowsettings.h"

#include "orrery/core/mlflowstore.h"
#include "orrery/core/params.h"
#include "orrery/core/paths.h"
#include "orrery/core/version.h"
#include "orrery/remote/clusterstatus.h"
#include "orrery/remote/diagnostics.h"
#include "orrery/remote/logreader.h"
#include "orrery/remote/sweepoperations.h"

#include <QAction>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QProgressDialog>
#include <QSaveFile>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <atomic>
#include <cstdio>
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
    wireRefreshes();
    wireStore();

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
        refreshEnvironment();
    });
}

void MainWindow::buildTabs()
{
    m_compare = new CompareView(m_reader, m_selection, m_runsModel, this);
    connect(m_compare, &CompareView::metricChoiceChanged, this, &MainWindow::saveMetricChoice);
    m_tabs->addTab(m_compare, tr("Compare"));
    m_video = new VideoView(m_reader, m_selection, this);
    m_video->setRunsModel(m_runsModel);  // each run's sweep: its metric and swept params
    m_video->fetcher()->setConnectionSource(m_hub->namedConnectionSource());
    m_video->fetcher()->setWriter(m_writer);
    m_tabs->addTab(m_video, tr("Video"));
    m_clusterView = new ClusterView(m_hub, this);
    m_clusterView->setStoreWriter(m_writer);
    m_tabs->addTab(m_clusterView, tr("Cluster"));
    connect(m_clusterView, &ClusterView::manageRequested, this, &MainWindow::openConnectionManager);
    connect(m_clusterView, &ClusterView::jobLogsRequested, this, &MainWindow::openJobLogs);

    m_environmentView->setModel(m_environment);
    m_environmentView->setObjectName(QStringLiteral("environmentView"));
    m_environmentView->verticalHeader()->hide();
    m_environmentView->horizontalHeader()->setStretchLastSection(true);
    m_environmentView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_environmentView->setWordWrap(false);
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
    m_followLabel = new QLabel(this);
    m_ingestLabel = new QLabel(this);
    m_clusterStatus = new QLabel(this);
    m_clusterStatus->setObjectName(QStringLiteral("clusterStatus"));
    m_activityLabel = new QLabel(this);
    m_activityLabel->setObjectName(QStringLiteral("activity"));
    auto *busy = new QProgressBar(this);
    busy->setRange(0, 0);
    busy->setMaximumSize(80, 12);
    busy->setTextVisible(false);
    busy->hide();
    m_activityBusy = busy;
    statusBar()->addPermanentWidget(m_activityLabel);
    statusBar()->addPermanentWidget(m_activityBusy);
    statusBar()->addPermanentWidget(m_clusterStatus);
    statusBar()->addPermanentWidget(m_ingestLabel);
    statusBar()->addPermanentWidget(m_followLabel);
    connect(m_hub, &ClusterHub::statusChanged, this, &MainWindow::showClusterStatus);
    connect(m_actions, &SweepActions::started, this,
            [this](const QString &what) { showActivity(what, true); });
    connect(m_actions, &SweepActions::done, this, [this](const QString &message, bool ok) {
        showActivity(m_actions->inFlight() ? m_activityLabel->text() : QString(), m_actions->inFlight() > 0);
        statusBar()->showMessage(message, 10'000);
        if (!ok && isVisible() && !qEnvironmentVariableIsSet("ORRERY_TEST_SUITE"))
            QMessageBox::warning(this, tr("Orrery"), message);
        m_follower->wake();
        refresh();
    });
}

void MainWindow::wireRefreshes()
{
    // Results arrive on the UI thread through the watcher; the pool thread never touches a model.
    connect(&m_checksWatcher, &QFutureWatcher<QList<core::Check>>::finished, this, [this] {
        const QList<core::Check> checks = m_checksWatcher.result();
        m_environment->setChecks(checks);
        m_environmentView->resizeColumnToContents(EnvironmentModel::StatusColumn);
        m_environmentView->resizeColumnToContents(EnvironmentModel::NameColumn);
        const auto failed = std::count_if(checks.cbegin(), checks.cend(), [](const core::Check &c) {
            return c.status == core::Check::Status::Failed;
        });
        if (failed)
            statusBar()->showMessage(
                tr("%n environment check(s) failed (Environment tab)", nullptr, int(failed)));
        Q_EMIT environmentRefreshed();
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
        refresh();
        if (m_wantFollow && readOnly.isEmpty())
            m_follower->start();
        else
            m_follower->stop();
        m_followLabel->setText(m_follower->isFollowing() ? tr("following sweeps…") : tr("not following"));
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
    connect(m_follower, &Follower::ticked, this, &MainWindow::followed);
    connect(m_follower, &Follower::unavailable, this, [this](const QString &why) {
        m_followLabel->setText(tr("not following"));
        m_followLabel->setToolTip(why);
    });
    connect(m_selection, &RunSelection::changed, this, [this](const QObject *) {
        m_details->showRun(m_selection->current());
        m_system->showRun(m_selection->current());
    });
}

MainWindow::~MainWindow()
{
    // A cluster connection's thread may be waiting on one of this window's dialogs (the
    // follower's, a poll's): answer them now, so those threads can end.
    m_prompter->cancelAll();
    // The checks may still be running (orrery-train loading): wait rather than leave a pool
    // thread writing into a destroyed watcher.
    m_checksWatcher.waitForFinished();
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
    for (QAction *menu : menuBar()->actions())
        if (menu->menu() && menu->text() == tr("&View"))
            menu->menu()->addAction(m_runsPage->showArchivedAction());
    connect(m_details, &DetailsView::logsRequested, this, &MainWindow::openTrialLogs);
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
            [this](core::SweepId sweep, int trial) { openTrialLogs(sweep, trial); });
    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_tree, &QTreeView::customContextMenuRequested, this, &MainWindow::treeContextMenu);

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
    connect(report, &QAction::triggered, this, [this] {
        const QModelIndex current = m_tree->currentIndex().siblingAtColumn(SweepTreeModel::NameColumn);
        const core::SweepId sweep = current.data(SweepTreeModel::SweepRole).toLongLong();
        if (!sweep) {
            QMessageBox::information(this, tr("Export sweep report"),
                                     tr("Select a sweep (or one of its trials) in the tree first."));
            return;
        }
        chooseReportFile(sweep);
    });
    QAction *refreshEnv = fileMenu->addAction(tr("&Check environment again"));
    connect(refreshEnv, &QAction::triggered, this, &MainWindow::refreshEnvironment);
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
    connect(launch, &QAction::triggered, this, &MainWindow::openLauncher);
    QAction *manage = clusterMenu->addAction(tr("&Manage clusters…"));
    connect(manage, &QAction::triggered, this, &MainWindow::openConnectionManager);

    QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget *dock : findChildren<QDockWidget *>())
        viewMenu->addAction(dock->toggleViewAction());
    QAction *follow = viewMenu->addAction(tr("&Follow active sweeps"));
    follow->setCheckable(true);
    follow->setChecked(m_wantFollow);
    connect(follow, &QAction::toggled, this, &MainWindow::setFollowing);
}

void MainWindow::applyStartOptions(const QString &selectSweep, const QString &screenshotPath)
{
    if (selectSweep.isEmpty() && screenshotPath.isEmpty())
        return;
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = connect(this, &MainWindow::snapshotShown, this, [this, once, selectSweep, screenshotPath] {
        disconnect(*once);
        if (!selectSweep.isEmpty()) {
            const QModelIndexList found =
                m_treeModel->match(m_treeModel->index(0, 0), Qt::DisplayRole, selectSweep, -1,
                                   Qt::MatchRecursive | Qt::MatchExactly);
            QModelIndex sweep;
            for (const QModelIndex &i : found)
                if (i.data(SweepTreeModel::KindRole).toInt() == SweepTreeModel::SweepItem)
                    sweep = i;
            bool isId = false;
            const qint64 id = selectSweep.toLongLong(&isId);
            if (!sweep.isValid() && isId)
                sweep = m_treeModel->sweepIndex(id);
            if (sweep.isValid()) {
                m_tree->expand(sweep);
                m_tree->selectionModel()->select(
                    sweep, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            }
        }
        if (screenshotPath.isEmpty())
            return;
        // The charts re-query on the reader after the selection: shoot once that has drawn
        // (or after 5 s, whatever the charts are doing).
        auto shoot = std::make_shared<bool>(false);
        auto save = [this, screenshotPath, shoot] {
            if (*shoot)
                return;
            *shoot = true;
            // The Video tab decodes its first frames on the sources' threads after the read.
            QTimer::singleShot(m_tabs->currentWidget() == m_video ? 1500 : 300, this, [this, screenshotPath] {
                const bool ok = grab().save(screenshotPath);
                std::fprintf(
                    stdout, "orrery-gui: %d runs, %d selected, %d sweeps shown; screenshot %s %s\n",
                    m_runsModel->totalRuns(), int(m_selection->runs().size()),
                    [this] {
                        int n = 0;
                        for (int e = 0; e < m_treeModel->rowCount(); ++e)
                            n += m_treeModel->item(e)->rowCount();
                        return n;
                    }(),
                    ok ? "saved to" : "FAILED:", qPrintable(screenshotPath));
                std::fflush(stdout);
                QCoreApplication::exit(ok ? 0 : 1);
            });
        };
        if (m_tabs->currentWidget() == m_video)
            connect(m_video, &VideoView::samplesShown, this, save);
        else if (m_tabs->currentWidget() == m_clusterView)
            connect(m_clusterView, &ClusterView::pollShown, this, save);
        else
            connect(m_compare, &CompareView::queried, this, save);
        const bool waitsForCluster =
            m_tabs->currentWidget() == m_clusterView && !m_clusterView->cluster().isEmpty();
        QTimer::singleShot(waitsForCluster ? 30'000 : m_selection->runs().isEmpty() ? 500 : 5000, this, save);
    });
}

void MainWindow::launchAtStart(const QString &specFile, const QString &cluster, const QString &screenshotPath)
{
    Launcher *launcher = openLauncher();
    if (!specFile.isEmpty())
        launcher->loadFile(specFile);
    if (!cluster.isEmpty())
        launcher->setTarget(cluster);
    if (screenshotPath.isEmpty())
        return;
    // Once the schema is loaded and the spec checked: the preview filled, then the dialog saved.
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = connect(launcher, &Launcher::validated, this, [launcher, once, screenshotPath] {
        disconnect(*once);
        if (launcher->isValid())
            launcher->preview();
        QTimer::singleShot(300, launcher, [launcher, screenshotPath] {
            const bool ok = launcher->grab().save(screenshotPath);
            std::fprintf(stdout, "orrery-gui: launcher %s; screenshot %s %s\n",
                         launcher->isValid() ? "valid" : "with problems",
                         ok ? "saved to" : "FAILED:", qPrintable(screenshotPath));
            std::fflush(stdout);
            QCoreApplication::exit(ok ? 0 : 1);
        });
    });
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
    m_followLabel->setText(m_follower->isFollowing() ? tr("following sweeps…") : tr("not following"));
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
        loadMetricChoice();  // a database (re)opened: its own choices
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
    m_ingestLabel->setText(tr("%n run(s)", nullptr, int(s.runs.size())));
    Q_EMIT snapshotShown();
}

void MainWindow::loadMetricChoice()
{
    // Compare's metrics as they were left for this database (none saved: the default ones).
    const auto settings = windowSettings();
    const QString group = databaseSettingsGroup(m_reader->path());
    const QSignalBlocker block(m_compare);  // restoring is not a change to save
    m_compare->setMetricChoice({settings->value(group + QLatin1String("/compareMetrics")).toStringList(),
                                settings->value(group + QLatin1String("/compareSearch")).toString()});
}

void MainWindow::saveMetricChoice()
{
    const CompareView::MetricChoiceState state = m_compare->metricChoice();
    const auto settings = windowSettings();
    const QString group = databaseSettingsGroup(m_reader->path());
    settings->setValue(group + QLatin1String("/database"), m_reader->path());
    settings->setValue(group + QLatin1String("/compareMetrics"), state.chosen);
    settings->setValue(group + QLatin1String("/compareSearch"), state.filter);
}

void MainWindow::followed(const FollowSummary &s)
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
        statusBar()->showMessage(e, 8000);
    for (const core::Notice &n : s.notices)
        notifyDesktop(n);
    if (s.points || !s.events.isEmpty())
        refreshSoon();
}

void MainWindow::notifyDesktop(const core::Notice &notice)
{
    const QString title = core::noticeTitle(notice);
    Q_EMIT desktopNotification(title, notice.message);
    if (!QSystemTrayIcon::isSystemTrayAvailable())
        return;  // no tray (offscreen, a bare X session): the status bar has the event
    if (!m_tray) {
        m_tray = new QSystemTrayIcon(windowIcon(), this);
        m_tray->setToolTip(tr("Orrery"));
        m_tray->show();
    }
    const bool bad =
        notice.kind != core::Notice::Kind::SweepEnded || notice.state != QLatin1String("finished");
    m_tray->showMessage(title, notice.message, bad ? QSystemTrayIcon::Warning : QSystemTrayIcon::Information,
                        10000);
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
                QMetaObject::invokeMethod(qApp, [dialog, n = dirs.size()] {
                    if (dialog)
                        dialog->setMaximum(int(n));
                });
                for (const QString &dir : dirs) {
                    if (cancel->load())
                        break;
                    const auto r =
                        store.ingestRunDirectory(dir, experiment, [cancel] { return cancel->load(); });
                    ++runs;
                    points += r.events.points;
                    QMetaObject::invokeMethod(qApp, [dialog, done = int(&dir - dirs.data()) + 1, dir] {
                        if (dialog) {
                            dialog->setValue(done);
                            dialog->setLabelText(QFileInfo(dir).fileName());
                        }
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

void MainWindow::refreshEnvironment()
{
    if (m_checksWatcher.isRunning())
        return;
    statusBar()->showMessage(tr("Checking the environment…"), 3000);
    m_checksWatcher.setFuture(QtConcurrent::run(blockingPool(), &remote::environmentChecks));
}

Launcher *MainWindow::openLauncher()
{
    if (auto *open = findChild<Launcher *>(); open && open->isVisible()) {
        open->raise();
        open->activateWindow();
        return open;
    }
    auto *launcher = new Launcher(m_hub, m_writer, this);
    launcher->setAttribute(Qt::WA_DeleteOnClose);
    // The spec last edited (kept across restarts), not the template again: what was just
    // submitted, or half-written, is where the user left it.
    {
        const auto settings = windowSettings();
        const QString text = settings->value(QStringLiteral("launcher/spec")).toString();
        if (!text.trimmed().isEmpty())
            launcher->setSpec(text, settings->value(QStringLiteral("launcher/path")).toString(),
                              settings->value(QStringLiteral("launcher/target")).toString());
    }
    auto remember = [launcher] {
        const auto settings = windowSettings();
        settings->setValue(QStringLiteral("launcher/spec"), launcher->editor()->toPlainText());
        settings->setValue(QStringLiteral("launcher/path"), launcher->specPath());
        settings->setValue(QStringLiteral("launcher/target"), launcher->target());
    };
    connect(launcher, &QDialog::finished, this, remember);
    connect(launcher, &Launcher::submitted, this, remember);
    if (!m_clusterView->cluster().isEmpty() && m_tabs->currentWidget() == m_clusterView)
        launcher->setTarget(m_clusterView->cluster());
    connect(launcher, &Launcher::progress, this, [this](const QString &text) { showActivity(text, true); });
    connect(launcher, &Launcher::submitFailed, this, [this](const QString &) { showActivity({}, false); });
    connect(launcher, &Launcher::submitted, this, [this](qint64 sweep, const QString &name) {
        showActivity({}, false);
        statusBar()->showMessage(tr("Sweep %1 (%2) submitted; following it.").arg(sweep).arg(name), 10'000);
        // Show it in the tree as soon as the next snapshot has it, and follow it at once.
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = connect(this, &MainWindow::snapshotShown, this, [this, once, sweep] {
            const QModelIndex i = m_treeModel->sweepIndex(sweep);
            if (!i.isValid())
                return;
            disconnect(*once);
            m_tree->expand(i.parent());
            m_tree->expand(i);
            m_tree->selectionModel()->select(i,
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_tree->scrollTo(i);
        });
        m_follower->wake();
        refresh();
    });
    launcher->show();
    return launcher;
}

void MainWindow::openConnectionManager()
{
    auto *manager = new ConnectionManager(m_hub, m_prompter, this);
    manager->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_clusterView->cluster().isEmpty())
        manager->select(m_clusterView->cluster());
    connect(manager, &ConnectionManager::profilesChanged, m_clusterView, &ClusterView::reloadProfiles);
    manager->show();
}

void MainWindow::showActivity(const QString &text, bool busy)
{
    m_activityLabel->setText(text);
    m_activityBusy->setVisible(busy);
}

void MainWindow::showClusterStatus()
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

void MainWindow::treeContextMenu(const QPoint &pos)
{
    const QModelIndex index = m_tree->indexAt(pos).siblingAtColumn(SweepTreeModel::NameColumn);
    const int kind = index.data(SweepTreeModel::KindRole).toInt();
    if (kind != SweepTreeModel::SweepItem && kind != SweepTreeModel::TrialItem)
        return;
    const core::SweepId sweep = index.data(SweepTreeModel::SweepRole).toLongLong();
    const QString cluster = index.data(SweepTreeModel::ClusterRole).toString();
    const QString state = index.data(SweepTreeModel::StateRole).toString();
    const QString dir = index.data(SweepTreeModel::DirRole).toString();
    const QString name = index.data(Qt::DisplayRole).toString();
    const bool readOnly = m_banner->isVisible();
    QMenu menu;
    QMenu *copy = nullptr;
    auto copyCommand = [this, &copy, &menu](SweepActions::Action action, core::SweepId s, int trial,
                                            const QString &label) {
        if (!copy)
            copy = new QMenu(tr("Copy as CLI command"), &menu);
        const QString line = m_actions->commandLine(action, s, trial);
        copy->addAction(label, this, [line] { QGuiApplication::clipboard()->setText(line); })
            ->setToolTip(line);
    };
    if (kind == SweepTreeModel::SweepItem) {
        const bool active = core::isActive(core::sweepStateFromText(state));
        QAction *cancel = menu.addAction(tr("Cancel sweep…"), this, [this, sweep, name] {
            if (QMessageBox::question(
                    this, tr("Cancel %1").arg(name),
                    tr("Cancel every queued and running trial of sweep %1 (%2)? Finished trials "
                       "and their runs stay.")
                        .arg(sweep)
                        .arg(name)) == QMessageBox::Yes)
                m_actions->run(SweepActions::Action::CancelSweep, sweep);
        });
        cancel->setEnabled(active && !readOnly);
        copyCommand(SweepActions::Action::CancelSweep, sweep, -1, tr("cancel"));
        menu.addSeparator();
        // Its spec as it was submitted: to edit into a new sweep, or to run again as it is.
        menu.addAction(tr("Open in launcher"), this, [this, sweep] { openSweepInLauncher(sweep, false); })
            ->setObjectName(QStringLiteral("openInLauncher"));
        QAction *again = menu.addAction(tr("Launch again…"), this, [this, sweep, name] {
            if (QMessageBox::question(
                    this, tr("Launch again"),
                    tr("Submit a new sweep of %1's spec, as it was submitted?").arg(name)) ==
                QMessageBox::Yes)
                openSweepInLauncher(sweep, true);
        });
        again->setObjectName(QStringLiteral("launchAgain"));
        again->setEnabled(!readOnly);
        menu.addAction(tr("Export report…"), this, [this, sweep] { chooseReportFile(sweep); });
        copy = copy ? copy : new QMenu(tr("Copy as CLI command"), &menu);
        const QString relaunch = QStringLiteral("orrery sweep relaunch %1").arg(sweep);
        copy->addAction(tr("relaunch"), this, [relaunch] { QGuiApplication::clipboard()->setText(relaunch); })
            ->setToolTip(relaunch);
    } else {
        const int trial = index.data(SweepTreeModel::TrialRole).toInt();
        const core::TrialState ts = core::trialStateFromText(state);
        QAction *stop = menu.addAction(tr("Stop trial %1 early…").arg(trial), this, [this, sweep, trial] {
            if (QMessageBox::question(
                    this, tr("Stop trial %1").arg(trial),
                    tr("Stop trial %1 now? It ends as stopped, keeping its checkpoint; Retry "
                       "runs it again.")
                        .arg(trial)) == QMessageBox::Yes)
                m_actions->run(SweepActions::Action::StopTrial, sweep, trial);
        });
        stop->setEnabled(core::isActive(ts) && !readOnly);
        QAction *retry = menu.addAction(tr("Retry trial %1").arg(trial), this, [this, sweep, trial] {
            m_actions->run(SweepActions::Action::RetryTrial, sweep, trial);
        });
        const core::Phase phase = core::phaseOf(ts);
        retry->setEnabled((phase == core::Phase::Failed || phase == core::Phase::Stopped) &&
                          !core::isActive(ts) && !readOnly);
        copyCommand(SweepActions::Action::StopTrial, sweep, trial, tr("stop"));
        copyCommand(SweepActions::Action::RetryTrial, sweep, trial, tr("retry"));
    }
    if (kind == SweepTreeModel::TrialItem) {
        const int trial = index.data(SweepTreeModel::TrialRole).toInt();
        menu.addAction(tr("Show logs"), this, [this, sweep, trial] { openTrialLogs(sweep, trial); });
        // The trial's run: the Runs table's run menu (runhousekeeping.cpp).
        if (const QList<core::RunId> runs = m_treeModel->runsOf(index); runs.size() == 1)
            menu.addMenu(m_housekeeping->runMenu(runs, &menu))->setText(tr("Run"));
    }
    menu.addSeparator();
    QAction *openDir = menu.addAction(
        cluster.isEmpty() ? tr("Open the directory") : tr("Copy the directory's path"), this, [cluster, dir] {
            if (cluster.isEmpty())
                QDesktopServices::openUrl(QUrl::fromLocalFile(dir));
            else
                QGuiApplication::clipboard()->setText(dir);
        });
    openDir->setEnabled(!dir.isEmpty());
    if (!cluster.isEmpty())
        openDir->setToolTip(tr("%1 is on cluster %2").arg(dir, cluster));
    if (copy)
        menu.addMenu(copy);
    menu.exec(m_tree->viewport()->mapToGlobal(pos));
}

void MainWindow::chooseReportFile(core::SweepId sweep)
{
    const QString name = m_treeModel->sweepIndex(sweep).data().toString();
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the report of %1").arg(name),
        QDir::home().filePath(
            QStringLiteral("%1-report.html").arg(name.isEmpty() ? QStringLiteral("sweep") : name)),
        tr("HTML pages (*.html)"));
    if (!path.isEmpty())
        exportReport(sweep, path);
}

void MainWindow::exportReport(core::SweepId sweep, const QString &path)
{
    // `orrery sweep report`'s operation, on a pool thread with a read-only connection of its own:
    // a cluster's samples are read over SSH, and the window's reader stays free meanwhile.
    const QString database = m_reader->path();
    const auto connections = m_hub->connectionSource();
    showActivity(tr("Writing the report of sweep %1…").arg(sweep), true);
    QPointer<MainWindow> self(this);
    QtConcurrent::run(blockingPool(), [=]() -> QString {
        try {
            auto store = core::TrackingStore::open(database, core::TrackingStore::Mode::ReadOnly);
            remote::SweepOperations::Options options;
            options.connections = connections;
            remote::SweepOperations ops(*store, options);
            remote::OperationProgress progress;
            progress.say = [self](const QString &line) {
                QMetaObject::invokeMethod(qApp, [self, line] {
                    if (self)
                        self->showActivity(line + QStringLiteral("…"), true);
                });
            };
            const QByteArray html = ops.report(ops.sweep(sweep), {}, progress);
            QSaveFile file(path);
            if (!file.open(QIODevice::WriteOnly) || file.write(html) != html.size() || !file.commit())
                return tr("cannot write %1: %2").arg(path, file.errorString());
            return {};
        } catch (const std::exception &e) {
            return QString::fromUtf8(e.what());
        }
    }).then(this, [this, path](const QString &error) {
        showActivity({}, false);
        statusBar()->showMessage(
            error.isEmpty() ? tr("Report written: %1").arg(path) : tr("No report: %1").arg(error), 10'000);
        Q_EMIT reportExported(path, error);
    });
}

Launcher *MainWindow::openSweepInLauncher(core::SweepId sweep, bool submit)
{
    Launcher *launcher = openLauncher();
    m_reader->read<std::optional<core::Sweep>>(
        launcher, [sweep](const core::TrackingStore &s) { return s.sweep(sweep); },
        [launcher, submit](const std::optional<core::Sweep> &sw) {
            if (!sw)
                return;
            // Its spec file's path (relative paths in it resolve as they did), else its directory.
            launcher->setSpec(sw->spec,
                              sw->specFile.isEmpty()
                                  ? QDir(sw->rootDir).filePath(QStringLiteral("sweep.yaml"))
                                  : sw->specFile,
                              sw->cluster);
            if (submit)
                launcher->submitWhenValid();
        });
    return launcher;
}

LogView *MainWindow::showLogs(const QString &title, const QString &cluster,
                              const QList<QPair<QString, QString>> &paths, const QString &emptyHint)
{
    // Read through the executor's batched read (this machine's files, or the cluster's on the
    // window's connection), connecting at the first read on a pool thread.
    auto reader = std::make_shared<remote::LogReader>(cluster, m_hub->connectionSource());
    const LogSource source = [reader](const QList<core::LogReadJob> &jobs) { return reader->read(jobs); };
    QList<LogView::File> files;
    for (const auto &[label, path] : paths)
        files.append({label, path, emptyHint});
    auto *view = new LogView(title, source, files, this);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->setWindowTitle(title);
    view->resize(900, 600);
    view->show();
    return view;
}

namespace {

// The executor's log paths as the view's tabs: stdout, stderr, then any other by its file name.
QList<QPair<QString, QString>> logTabs(const QStringList &paths)
{
    QList<QPair<QString, QString>> files;
    for (int i = 0; i < paths.size(); ++i)
        files.append({i == 0       ? MainWindow::tr("stdout")
                          : i == 1 ? MainWindow::tr("stderr")
                                   : QFileInfo(paths[i]).fileName(),
                      paths[i]});
    return files;
}

// Where a trial's attempt's logs are (SweepOperations::logs, the CLI's `sweep logs` too) and
// its attempts for the chooser. On a pool thread: a cluster's executor connects.
struct TrialLogsFound {
    QString title, cluster, error;
    QStringList paths;
    bool failed = false;  // the attempt failed: its error is in stderr
    QList<int> attempts;  // attempt numbers, oldest first
    QStringList labels;  // "attempt 1 · failed: exit 3 · node2"
    int shown = 0;  // index into attempts
};

TrialLogsFound findTrialLogs(const QString &database, const remote::Executors::ConnectionSource &connections,
                             core::SweepId sweep, int trial, int attempt)
{
    try {
        auto store = core::TrackingStore::open(database, core::TrackingStore::Mode::ReadOnly);
        remote::SweepOperations::Options options;
        options.connections = connections;
        remote::SweepOperations ops(*store, options);
        const remote::TrialLogs logs = ops.logs(sweep, trial, attempt);
        TrialLogsFound f{logs.title, logs.sweep.cluster, {}, logs.paths, false, {}, {}, 0};
        f.failed = core::phaseOf(logs.attempt.trialState()) == core::Phase::Failed;
        for (const core::Trial &t : store->trials(sweep)) {
            if (t.index != trial)
                continue;
            if (t.attempt == logs.attempt.attempt)
                f.shown = int(f.attempts.size());
            f.attempts.append(t.attempt);
            QString label = MainWindow::tr("attempt %1 · %2").arg(t.attempt).arg(t.state);
            if (!t.exitReason.isEmpty())
                label += QStringLiteral(": ") + t.exitReason;
            if (!t.nodes.isEmpty())
                label += QStringLiteral(" · ") + t.nodes;
            f.labels.append(label);
        }
        return f;
    } catch (const std::exception &e) {
        TrialLogsFound f;
        f.error = QString::fromUtf8(e.what());
        return f;
    }
}

}  // namespace

void MainWindow::openTrialLogs(core::SweepId sweep, int trial, int attempt)
{
    // Where the logs are is the executor's to say (a local run directory, or the sweep's logs/
    // on the cluster): found on a pool thread, since a cluster's executor connects.
    const QString database = m_reader->path();
    const auto connections = m_hub->connectionSource();
    showActivity(tr("Finding the logs of trial %1…").arg(trial), true);
    // The bundled trainer logs to events.jsonl, so its stdout and stderr are often empty: say
    // where its progress is instead of a blank page.
    const QString emptyHint =
        tr("Orrery's trainer writes its metrics and progress to events.jsonl, not here:\n"
           "select the run and open the Compare tab (Ctrl+2).\n"
           "A command sweep's program shows here what it prints.");
    QtConcurrent::run(blockingPool(), [=] {
        return findTrialLogs(database, connections, sweep, trial, attempt);
    }).then(this, [this, database, connections, sweep, trial, emptyHint](const TrialLogsFound &f) {
        showActivity({}, false);
        if (!f.error.isEmpty()) {
            statusBar()->showMessage(f.error, 10'000);
            Q_EMIT logsFailed(f.error);
            return;
        }
        LogView *view = showLogs(f.title, f.cluster, logTabs(f.paths), emptyHint);
        if (!view)
            return;
        // A failed attempt's error is in stderr: open there.
        view->setCurrentFile(f.failed && f.paths.size() > 1 ? 1 : 0);
        view->setAttempts(f.labels, f.shown);
        QPointer<LogView> target(view);
        connect(view, &LogView::attemptChosen, this,
                [this, target, database, connections, sweep, trial, attempts = f.attempts](int index) {
                    const int chosen = attempts.value(index, -1);
                    QtConcurrent::run(blockingPool(), [=] {
                        return findTrialLogs(database, connections, sweep, trial, chosen);
                    }).then(this, [this, target](const TrialLogsFound &g) {
                        if (!target)
                            return;
                        if (!g.error.isEmpty()) {
                            statusBar()->showMessage(g.error, 10'000);
                            return;
                        }
                        QList<LogView::File> files;
                        for (const auto &[label, path] : logTabs(g.paths))
                            files.append({label, path, target->file(0).emptyHint});
                        target->setWindowTitle(g.title);
                        target->setFiles(files, g.failed && files.size() > 1 ? 1 : 0);
                        target->setAttempts(g.labels, g.shown);
                    });
                });
        Q_EMIT logsOpened(view);
    });
}

void MainWindow::openJobLogs(const QString &cluster, const QString &jobId)
{
    QString problem;
    const auto connection = m_hub->connection(cluster, &problem);
    if (!connection) {
        statusBar()->showMessage(problem, 10'000);
        Q_EMIT logsFailed(problem);
        return;
    }
    showActivity(tr("Asking %1 where job %2 writes…").arg(cluster, jobId), true);
    struct Found {
        QStringList paths;
        QString error;
    };
    QtConcurrent::run(blockingPool(), [connection, jobId]() -> Found {
        try {
            return {remote::jobLogPaths(*connection, jobId), {}};
        } catch (const std::exception &e) {
            return {{}, QString::fromUtf8(e.what())};
        }
    }).then(this, [this, cluster, jobId](const Found &f) {
        showActivity({}, false);
        if (!f.error.isEmpty()) {
            statusBar()->showMessage(f.error, 10'000);
            Q_EMIT logsFailed(f.error);
            return;
        }
        if (LogView *view = showLogs(tr("job %1 on %2").arg(jobId, cluster), cluster, logTabs(f.paths)))
            Q_EMIT logsOpened(view);
    });
}

}  // namespace orrery::gui
