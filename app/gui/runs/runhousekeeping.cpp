// SPDX-License-Identifier: GPL-3.0-or-later
#include "runhousekeeping.h"

#include "detailsview.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "storereader.h"
#include "storewriter.h"

#include <QAction>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>

namespace orrery::gui {

RunHousekeeping::RunHousekeeping(RunsTableModel *runs, StoreReader *reader, StoreWriter *writer,
                                 RunSelection *selection, DetailsView *details, QWidget *window)
    : QObject(window), m_runs(runs), m_reader(reader), m_writer(writer), m_selection(selection),
      m_details(details), m_window(window)
{ }

void RunHousekeeping::editTagsDialog(core::RunId run, const QString &name)
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
            QInputDialog dialog(m_window);
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
                const QString message = tr("Tags not saved: %1").arg(changes.error);
                Q_EMIT edited(changes.error, message);  // nothing changed: the status bar says why
                QMessageBox::warning(m_window, tr("Tags"), message);
                return;
            }
            if (!changes.set.isEmpty() || !changes.remove.isEmpty())
                editRunTags(run, changes.set, changes.remove);
        });
}

QMenu *RunHousekeeping::runMenu(const QList<core::RunId> &runs, QWidget *parent)
{
    auto *menu = new QMenu(parent);
    menu->setObjectName(QStringLiteral("runMenu"));
    menu->setProperty("runs", QVariant::fromValue(runs));  // what it acts on (tests)
    if (runs.isEmpty())
        return menu;
    const core::RunId run = runs.front();
    const core::RunRow *row = m_runs->findRun(run);
    const QString name = row ? row->run.name : QString::number(run);
    const bool readOnly = m_readOnly;
    auto add = [&](const char *id, const QString &text, auto &&f) {
        QAction *a = menu->addAction(text, this, std::forward<decltype(f)>(f));
        a->setObjectName(QString::fromLatin1(id));
        a->setEnabled(!readOnly);
        return a;
    };
    add("rename", tr("Rename…"), [this, run, name] {
        bool ok = false;
        const QString text = QInputDialog::getText(
            m_window, tr("Rename run"), tr("New name of run %1:").arg(run), QLineEdit::Normal, name, &ok);
        if (ok && !text.trimmed().isEmpty())
            renameRun(run, text);
    });
    add("note", tr("Note…"), [this, run, name] {
        // The note is read fresh: the table's row does not carry it.
        const core::RunId id = run;
        bool ok = false;
        const QString text = QInputDialog::getMultiLineText(
            m_window, tr("Note"),
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
        if (QMessageBox::question(m_window, tr("Delete runs"),
                                  tr("Delete %1 for good? Its metrics, params, tags and artifact records go "
                                     "(its run directory stays; its sweep keeps the trial's history). "
                                     "Archive hides a run and keeps it.")
                                      .arg(what),
                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes)
            deleteRuns(runs);
    });
    return menu;
}

void RunHousekeeping::editRuns(const QString &done, std::function<void(core::TrackingStore &)> job,
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
            if (error.isEmpty() && after)
                after();
            Q_EMIT edited(error, error.isEmpty() ? done : tr("Nothing changed: %1").arg(error));
        });
}

void RunHousekeeping::renameRun(core::RunId run, const QString &name)
{
    editRuns(tr("Run %1 renamed to %2").arg(run).arg(name.trimmed()),
             [run, name](core::TrackingStore &s) { s.renameRun(run, name); });
}

void RunHousekeeping::setRunNote(core::RunId run, const QString &text)
{
    editRuns(text.trimmed().isEmpty() ? tr("Note of run %1 removed").arg(run)
                                      : tr("Note of run %1 saved").arg(run),
             [run, text](core::TrackingStore &s) { s.setRunNote(run, text); });
}

void RunHousekeeping::editRunTags(core::RunId run, const QList<std::pair<QString, QString>> &set,
                                  const QStringList &remove)
{
    editRuns(tr("Tags of run %1 saved").arg(run), [run, set, remove](core::TrackingStore &s) {
        s.writeTransaction([&] {
            s.removeTags(run, remove);
            s.setTags(run, set);
        });
    });
}

void RunHousekeeping::setBaselineRun(core::RunId run, bool baseline)
{
    editRuns(baseline ? tr("Run %1 is its experiment's baseline").arg(run) : tr("Run %1 unstarred").arg(run),
             [run, baseline](core::TrackingStore &s) { s.setBaseline(run, baseline); });
}

void RunHousekeeping::archiveRuns(const QList<core::RunId> &runs, bool archived)
{
    editRuns(archived
                 ? tr("%n run(s) archived: View → Show archived runs lists them", nullptr, int(runs.size()))
                 : tr("%n run(s) unarchived", nullptr, int(runs.size())),
             [runs, archived](core::TrackingStore &s) { s.archiveRuns(runs, archived); });
}

void RunHousekeeping::deleteRuns(const QList<core::RunId> &runs)
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
