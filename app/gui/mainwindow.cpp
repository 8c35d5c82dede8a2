// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "environmentmodel.h"

#include "orrery/core/version.h"
#include "orrery/remote/diagnostics.h"

#include <QAction>
#include <QHeaderView>
#include <QKeySequence>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QtConcurrent>

namespace orrery::gui {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_tabs(new QTabWidget(this)), m_environment(new EnvironmentModel(this)),
      m_environmentView(new QTableView(this))
{
    setWindowTitle(tr("Orrery %1").arg(core::version()));
    resize(1100, 700);

    m_environmentView->setModel(m_environment);
    m_environmentView->setObjectName(QStringLiteral("environmentView"));
    m_environmentView->verticalHeader()->hide();
    m_environmentView->horizontalHeader()->setStretchLastSection(true);
    m_environmentView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_environmentView->setWordWrap(false);
    m_tabs->addTab(m_environmentView, tr("Environment"));
    setCentralWidget(m_tabs);

    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    QAction *refresh = fileMenu->addAction(tr("&Check environment again"));
    refresh->setShortcut(QKeySequence::Refresh);
    connect(refresh, &QAction::triggered, this, &MainWindow::refreshEnvironment);
    fileMenu->addSeparator();
    QAction *quit = fileMenu->addAction(tr("&Quit"));
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    // Results arrive on the UI thread through the watcher; the pool thread never touches a model.
    connect(&m_checksWatcher, &QFutureWatcher<QList<core::Check>>::finished, this, [this] {
        const QList<core::Check> checks = m_checksWatcher.result();
        m_environment->setChecks(checks);
        m_environmentView->resizeColumnToContents(EnvironmentModel::StatusColumn);
        m_environmentView->resizeColumnToContents(EnvironmentModel::NameColumn);
        const auto failed = std::count_if(checks.cbegin(), checks.cend(), [](const core::Check &c) {
            return c.status == core::Check::Status::Failed;
        });
        statusBar()->showMessage(failed ? tr("%n environment check(s) failed", nullptr, int(failed))
                                        : tr("Environment OK"));
        Q_EMIT environmentRefreshed();
    });
    refreshEnvironment();
}

MainWindow::~MainWindow()
{
    // The checks may still be running (orrery-train loading): wait rather than leave a pool
    // thread writing into a destroyed watcher.
    m_checksWatcher.waitForFinished();
}

void MainWindow::refreshEnvironment()
{
    if (m_checksWatcher.isRunning())
        return;
    statusBar()->showMessage(tr("Checking the environment…"));
    m_checksWatcher.setFuture(QtConcurrent::run(&remote::environmentChecks));
}

}  // namespace orrery::gui
