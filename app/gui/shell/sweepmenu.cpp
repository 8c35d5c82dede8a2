// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweepmenu.h"

#include "blockingpool.h"
#include "clusterhub.h"
#include "postifalive.h"
#include "runhousekeeping.h"
#include "storereader.h"
#include "sweeptreemodel.h"
#include "sweeptreeview.h"

#include "orrery/remote/sweepoperations.h"

#include <QAction>
#include <QClipboard>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QGuiApplication>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QSaveFile>
#include <QUrl>
#include <QtConcurrent>

namespace orrery::gui {

SweepMenu::SweepMenu(QWidget *window, SweepTreeView *tree, SweepTreeModel *model, SweepActions *actions,
                     RunHousekeeping *housekeeping, StoreReader *reader, ClusterHub *hub)
    : QObject(window), m_window(window), m_tree(tree), m_model(model), m_actions(actions),
      m_housekeeping(housekeeping), m_reader(reader), m_hub(hub)
{
    connect(m_tree, &QTreeView::customContextMenuRequested, this, &SweepMenu::popup);
}

void SweepMenu::addCommand(QMenu *copy, SweepActions::Action action, core::SweepId sweep, int trial,
                           const QString &label)
{
    const QString line = m_actions->commandLine(action, sweep, trial);
    copy->addAction(label, this, [line] { QGuiApplication::clipboard()->setText(line); })->setToolTip(line);
}

QMenu *SweepMenu::addSweepActions(QMenu &menu, const QModelIndex &index)
{
    const core::SweepId sweep = index.data(SweepTreeModel::SweepRole).toLongLong();
    const QString name = index.data(Qt::DisplayRole).toString();
    const bool active =
        core::isActive(core::sweepStateFromText(index.data(SweepTreeModel::StateRole).toString()));
    QAction *cancel = menu.addAction(tr("Cancel sweep…"), this, [this, sweep, name] {
        if (QMessageBox::question(m_window, tr("Cancel %1").arg(name),
                                  tr("Cancel every queued and running trial of sweep %1 (%2)? Finished "
                                     "trials and their runs stay.")
                                      .arg(sweep)
                                      .arg(name)) == QMessageBox::Yes)
            m_actions->run(SweepActions::Action::CancelSweep, sweep);
    });
    cancel->setEnabled(active && !m_readOnly);
    auto *copy = new QMenu(tr("Copy as CLI command"), &menu);
    addCommand(copy, SweepActions::Action::CancelSweep, sweep, -1, tr("cancel"));
    menu.addSeparator();
    // Its spec as it was submitted: to edit into a new sweep, or to run again as it is.
    menu.addAction(tr("Open in launcher"), this, [this, sweep] { Q_EMIT launcherRequested(sweep, false); })
        ->setObjectName(QStringLiteral("openInLauncher"));
    QAction *again = menu.addAction(tr("Launch again…"), this, [this, sweep, name] {
        if (QMessageBox::question(m_window, tr("Launch again"),
                                  tr("Submit a new sweep of %1's spec, as it was submitted?").arg(name)) ==
            QMessageBox::Yes)
            Q_EMIT launcherRequested(sweep, true);
    });
    again->setObjectName(QStringLiteral("launchAgain"));
    again->setEnabled(!m_readOnly);
    menu.addAction(tr("Export report…"), this, [this, sweep] { chooseReportFile(sweep); });
    const QString relaunch = QStringLiteral("orrery sweep relaunch %1").arg(sweep);
    copy->addAction(tr("relaunch"), this, [relaunch] { QGuiApplication::clipboard()->setText(relaunch); })
        ->setToolTip(relaunch);
    return copy;
}

QMenu *SweepMenu::addTrialActions(QMenu &menu, const QModelIndex &index)
{
    const core::SweepId sweep = index.data(SweepTreeModel::SweepRole).toLongLong();
    const int trial = index.data(SweepTreeModel::TrialRole).toInt();
    const core::TrialState ts = core::trialStateFromText(index.data(SweepTreeModel::StateRole).toString());
    QAction *stop = menu.addAction(tr("Stop trial %1 early…").arg(trial), this, [this, sweep, trial] {
        if (QMessageBox::question(m_window, tr("Stop trial %1").arg(trial),
                                  tr("Stop trial %1 now? It ends as stopped, keeping its checkpoint; Retry "
                                     "runs it again.")
                                      .arg(trial)) == QMessageBox::Yes)
            m_actions->run(SweepActions::Action::StopTrial, sweep, trial);
    });
    stop->setEnabled(core::isActive(ts) && !m_readOnly);
    QAction *retry = menu.addAction(tr("Retry trial %1").arg(trial), this, [this, sweep, trial] {
        m_actions->run(SweepActions::Action::RetryTrial, sweep, trial);
    });
    const core::Phase phase = core::phaseOf(ts);
    retry->setEnabled((phase == core::Phase::Failed || phase == core::Phase::Stopped) &&
                      !core::isActive(ts) && !m_readOnly);
    auto *copy = new QMenu(tr("Copy as CLI command"), &menu);
    addCommand(copy, SweepActions::Action::StopTrial, sweep, trial, tr("stop"));
    addCommand(copy, SweepActions::Action::RetryTrial, sweep, trial, tr("retry"));
    menu.addAction(tr("Show logs"), this, [this, sweep, trial] { Q_EMIT trialLogsRequested(sweep, trial); });
    // The trial's run: the Runs table's run menu (runhousekeeping.cpp).
    if (const QList<core::RunId> runs = m_model->runsOf(index); runs.size() == 1)
        menu.addMenu(m_housekeeping->runMenu(runs, &menu))->setText(tr("Run"));
    return copy;
}

void SweepMenu::popup(const QPoint &pos)
{
    const QModelIndex index = m_tree->indexAt(pos).siblingAtColumn(SweepTreeModel::NameColumn);
    const int kind = index.data(SweepTreeModel::KindRole).toInt();
    if (kind != SweepTreeModel::SweepItem && kind != SweepTreeModel::TrialItem)
        return;
    const QString cluster = index.data(SweepTreeModel::ClusterRole).toString();
    const QString dir = index.data(SweepTreeModel::DirRole).toString();
    QMenu menu;
    QMenu *copy =
        kind == SweepTreeModel::SweepItem ? addSweepActions(menu, index) : addTrialActions(menu, index);
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
    menu.addMenu(copy);
    menu.exec(m_tree->viewport()->mapToGlobal(pos));
}

void SweepMenu::exportSelected()
{
    const QModelIndex current = m_tree->currentIndex().siblingAtColumn(SweepTreeModel::NameColumn);
    const core::SweepId sweep = current.data(SweepTreeModel::SweepRole).toLongLong();
    if (!sweep) {
        QMessageBox::information(m_window, tr("Export sweep report"),
                                 tr("Select a sweep (or one of its trials) in the tree first."));
        return;
    }
    chooseReportFile(sweep);
}

void SweepMenu::chooseReportFile(core::SweepId sweep)
{
    const QString name = m_model->sweepIndex(sweep).data().toString();
    const QString path = QFileDialog::getSaveFileName(
        m_window, tr("Export the report of %1").arg(name),
        QDir::home().filePath(
            QStringLiteral("%1-report.html").arg(name.isEmpty() ? QStringLiteral("sweep") : name)),
        tr("HTML pages (*.html)"));
    if (!path.isEmpty())
        exportReport(sweep, path);
}

void SweepMenu::exportReport(core::SweepId sweep, const QString &path)
{
    // `orrery sweep report`'s operation, on a pool thread with a read-only connection of its own:
    // a cluster's samples are read over SSH, and the window's reader stays free meanwhile.
    const QString database = m_reader->path();
    const auto connections = m_hub->connectionSource();
    Q_EMIT activity(tr("Writing the report of sweep %1…").arg(sweep), true);
    QPointer<SweepMenu> self(this);
    const QFuture<QString> written = QtConcurrent::run(blockingPool(), [=]() -> QString {
        try {
            auto store = core::TrackingStore::open(database, core::TrackingStore::Mode::ReadOnly);
            remote::SweepOperations::Options options;
            options.connections = connections;
            remote::SweepOperations ops(*store, options);
            remote::OperationProgress progress;
            progress.say = [self](const QString &line) {
                postIfAlive(self, [line](SweepMenu *menu) {
                    Q_EMIT menu->activity(line + QStringLiteral("…"), true);
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
    });
    thenIfAlive(written, this, [this, path](const QString &error) {
        Q_EMIT activity({}, false);
        Q_EMIT message(error.isEmpty() ? tr("Report written: %1").arg(path) : tr("No report: %1").arg(error),
                       10'000);
        Q_EMIT reportExported(path, error);
    });
}

}  // namespace orrery::gui
