// SPDX-License-Identifier: GPL-3.0-or-later
//
// The window's run housekeeping (docs/gui.md "Run housekeeping"): the context menu of the Runs
// table's rows and of the tree's trials — Rename…, Note…, Tags…, Star as baseline / Unstar,
// Archive / Unarchive, Delete… — and the "Show archived" toggle. The menu only asks (dialogs);
// each write is core::TrackingStore's housekeeping call (the same as `orrery runs ...`) made on
// the window's StoreWriter, followed by a refresh.
#include "mainwindow.h"

#include "detailsview.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "runstableview.h"
#include "storereader.h"
#include "storewriter.h"
#include "sweeptreemodel.h"

#include <QAction>
#include <QBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>

namespace orrery::gui {

void MainWindow::wireRunHousekeeping()
{
    m_showArchived = new QAction(tr("Show &archived runs"), this);
    m_showArchived->setObjectName(QStringLiteral("showArchived"));
    m_showArchived->setCheckable(true);
    m_showArchived->setToolTip(tr("List archived runs too (hidden by default; the run menu archives)"));
    connect(m_showArchived, &QAction::toggled, this, &MainWindow::setShowArchived);
    // On the Runs tab, beside the filter (the bar that holds it), and in the View menu.
    if (QWidget *page = m_filterEdit->parentWidget())
        for (QBoxLayout *bar : page->findChildren<QBoxLayout *>())
            if (bar->indexOf(m_filterEdit) >= 0) {
                auto *button = new QToolButton(page);
                button->setDefaultAction(m_showArchived);
                button->setToolButtonStyle(Qt::ToolButtonTextOnly);
                bar->addWidget(button);
                break;
            }
    for (QAction *menu : menuBar()->actions())
        if (menu->menu() && menu->text() == tr("&View"))
            menu->menu()->addAction(m_showArchived);

    // Both halves of the table: the pinned columns (name, status, the sweep's metric) are a view
    // of their own over the main one, and a right-click there is theirs.
    QTableView *pinned = static_cast<RunsTableView *>(m_runsView)->pinnedView();
    for (QTableView *view : {m_runsView, pinned}) {
        view->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(view, &QTableView::customContextMenuRequested, this,
                [this, view](const QPoint &pos) { runsContextMenu(view, pos); });
    }
    connect(m_details, &DetailsView::logsRequested, this, &MainWindow::openTrialLogs);
}

void MainWindow::setShowArchived(bool on)
{
    if (m_showArchived->isChecked() != on)
        m_showArchived->setChecked(on);  // toggled() comes back here
    if (m_query.includeArchived == on)
        return;
    m_query.includeArchived = on;
    refresh();
}

void MainWindow::runsContextMenu(QTableView *view, const QPoint &pos)
{
    const QModelIndex at = view->indexAt(pos);
    if (!at.isValid())
        return;
    // The selection when the click is on it, else the row clicked.
    const core::RunId clicked = at.data(RunsTableModel::RunIdRole).toLongLong();
    QList<core::RunId> runs;
    for (const QModelIndex &i : m_runsView->selectionModel()->selectedRows())
        runs.push_back(i.data(RunsTableModel::RunIdRole).toLongLong());
    if (!runs.contains(clicked))
        runs = {clicked};
    else
        runs.move(runs.indexOf(clicked), 0);
    QMenu *menu = runMenu(runs, this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(view->viewport()->mapToGlobal(pos));
}

void MainWindow::editTagsDialog(core::RunId run, const QString &name)
{
    // The run's tags read fresh (the table's row carries only the chosen ones), then the dialog
    // shows its own tags to edit and the system's beside, read-only.
    m_reader->read<QMap<QString, QString>>(
        this, [run](const core::TrackingStore &s) { return s.details(run).tags; },
        [this, run, name](const QMap<QString, QString> &tags) {
            QStringList system;
            for (auto it = tags.cbegin(); it != tags.cend(); ++it)
                if (!core::isUserTag(it.key()))
                    system.append(it.key() + QLatin1String(" = ") + it.value().left(80));
            QInputDialog dialog(this);
            dialog.setObjectName(QStringLiteral("tagsDialog"));
            dialog.setWindowTitle(tr("Tags of %1").arg(name));
            dialog.setOption(QInputDialog::UsePlainTextEditForTextInput);
            dialog.setLabelText(tr("One KEY=VALUE a line; delete a line to remove its tag.%1")
                                    .arg(system.isEmpty()
                                             ? QString()
                                             : tr("\nSet by Orrery and MLflow (not edited here): %1")
                                                   .arg(system.join(QLatin1String(", ")).left(400))));
            dialog.setTextValue(core::tagText(tags));
            if (dialog.exec() != QDialog::Accepted)
                return;
            const core::TagChanges changes = core::tagChanges(tags, dialog.textValue());
            if (!changes.error.isEmpty()) {
                statusBar()->showMessage(tr("Tags not saved: %1").arg(changes.error), 10'000);
                QMessageBox::warning(this, tr("Tags"), tr("Tags not saved: %1").arg(changes.error));
                return;
            }
            if (!changes.set.isEmpty() || !changes.remove.isEmpty())
                editRunTags(run, changes.set, changes.remove);
        });
}

QMenu *MainWindow::runMenu(const QList<core::RunId> &runs, QWidget *parent)
{
    auto *menu = new QMenu(parent);
    menu->setObjectName(QStringLiteral("runMenu"));
    menu->setProperty("runs", QVariant::fromValue(runs));  // what it acts on (tests)
    if (runs.isEmpty())
        return menu;
    const core::RunId run = runs.front();
    const core::RunRow *row = m_runsModel->findRun(run);
    const QString name = row ? row->run.name : QString::number(run);
    const bool readOnly = m_banner->isVisible() || !m_writerProblem.isEmpty();
    auto add = [&](const char *id, const QString &text, auto &&f) {
        QAction *a = menu->addAction(text, this, std::forward<decltype(f)>(f));
        a->setObjectName(QString::fromLatin1(id));
        a->setEnabled(!readOnly);
        return a;
    };
    add("rename", tr("Rename…"), [this, run, name] {
        bool ok = false;
        const QString text = QInputDialog::getText(this, tr("Rename run"), tr("New name of run %1:").arg(run),
                                                   QLineEdit::Normal, name, &ok);
        if (ok && !text.trimmed().isEmpty())
            renameRun(run, text);
    });
    add("note", tr("Note…"), [this, run, name] {
        // The note is read fresh: the table's row does not carry it.
        const core::RunId id = run;
        bool ok = false;
        const QString text = QInputDialog::getMultiLineText(
            this, tr("Note"),
            tr("Note on %1 (empty removes it; MLflow shows it as the run's note):").arg(name),
            m_details->run() == id ? m_details->noteShown() : QString(), &ok);
        if (ok)
            setRunNote(id, text);
    });
    add("tags", tr("Tags…"), [this, run, name] { editTagsDialog(run, name); });
    menu->addSeparator();
    const bool starred = row && row->isBaseline();
    add("baseline", starred ? tr("Unstar baseline") : tr("\u2605 Star as baseline"), [this, run, starred] {
        setBaselineRun(run, !starred);
    })->setToolTip(tr("The baseline of its experiment: every chart, table and the video grid show it first"));
    const bool archived = row && row->run.archived;
    add("archive",
        archived ? tr("Unarchive %n run(s)", nullptr, int(runs.size()))
                 : tr("Archive %n run(s)", nullptr, int(runs.size())),
        [this, runs, archived] { archiveRuns(runs, !archived); });
    menu->addSeparator();
    add("delete", tr("Delete %n run(s)…", nullptr, int(runs.size())), [this, runs, name] {
        const QString what = runs.size() == 1 ? tr("run %1 (%2)").arg(runs.front()).arg(name)
                                              : tr("%n runs", nullptr, int(runs.size()));
        if (QMessageBox::question(this, tr("Delete runs"),
                                  tr("Delete %1 for good? Its metrics, params, tags and artifact records go "
                                     "(its run directory stays; its sweep keeps the trial's history). "
                                     "Archive hides a run and keeps it.")
                                      .arg(what),
                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes)
            deleteRuns(runs);
    });
    return menu;
}

void MainWindow::editRuns(const QString &done, std::function<void(core::TrackingStore &)> job,
                          std::function<void()> after)
{
    m_writer->write<QString>(
        this,
        [job = std::move(job)](core::TrackingStore &store) -> QString {
            try {
                job(store);
                return {};
            } catch (const std::exception &e) {
                return QString::fromUtf8(e.what());
            }
        },
        [this, done, after = std::move(after)](QString error) {
            statusBar()->showMessage(error.isEmpty() ? done : tr("Nothing changed: %1").arg(error), 10'000);
            if (error.isEmpty()) {
                if (after)
                    after();
                refresh();
                if (m_selection->current())
                    m_details->showRun(m_selection->current());
            }
            Q_EMIT runsEdited(error);
        });
}

void MainWindow::renameRun(core::RunId run, const QString &name)
{
    editRuns(tr("Run %1 renamed to %2").arg(run).arg(name.trimmed()),
             [run, name](core::TrackingStore &s) { s.renameRun(run, name); });
}

void MainWindow::setRunNote(core::RunId run, const QString &text)
{
    editRuns(text.trimmed().isEmpty() ? tr("Note of run %1 removed").arg(run)
                                      : tr("Note of run %1 saved").arg(run),
             [run, text](core::TrackingStore &s) { s.setRunNote(run, text); });
}

void MainWindow::editRunTags(core::RunId run, const QList<std::pair<QString, QString>> &set,
                             const QStringList &remove)
{
    editRuns(tr("Tags of run %1 saved").arg(run), [run, set, remove](core::TrackingStore &s) {
        s.writeTransaction([&] {
            s.removeTags(run, remove);
            s.setTags(run, set);
        });
    });
}

void MainWindow::setBaselineRun(core::RunId run, bool baseline)
{
    editRuns(baseline ? tr("Run %1 is its experiment's baseline").arg(run) : tr("Run %1 unstarred").arg(run),
             [run, baseline](core::TrackingStore &s) { s.setBaseline(run, baseline); });
}

void MainWindow::archiveRuns(const QList<core::RunId> &runs, bool archived)
{
    editRuns(archived
                 ? tr("%n run(s) archived: View → Show archived runs lists them", nullptr, int(runs.size()))
                 : tr("%n run(s) unarchived", nullptr, int(runs.size())),
             [runs, archived](core::TrackingStore &s) { s.archiveRuns(runs, archived); });
}

void MainWindow::deleteRuns(const QList<core::RunId> &runs)
{
    // A deleted run leaves every view: the selection drops it before the refresh shows it gone.
    editRuns(
        tr("%n run(s) deleted", nullptr, int(runs.size())),
        [runs](core::TrackingStore &s) { s.deleteRuns(runs); },
        [this, runs] {
            QList<core::RunId> kept;
            for (core::RunId r : m_selection->runs())
                if (!runs.contains(r))
                    kept.push_back(r);
            if (kept.size() != m_selection->runs().size())
                m_selection->select(kept, this);
        });
}

}  // namespace orrery::gui
