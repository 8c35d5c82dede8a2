// SPDX-License-Identifier: GPL-3.0-or-later
//
// Run housekeeping (docs/gui.md "Run housekeeping"): the run menu of the Runs table's rows and of
// the tree's trials — Rename…, Note…, Tags…, Star as baseline / Unstar, Archive / Unarchive,
// Delete… The menu only asks (dialogs, parented to the window); each write is
// core::TrackingStore's housekeeping call (the same as `orrery runs ...`) made on the window's
// StoreWriter. After a write the window reads again (edited).
#pragma once

#include "orrery/core/store.h"

#include <QObject>

#include <functional>
#include <utility>

class QMenu;
class QWidget;

namespace orrery::gui {

class DetailsView;
class RunSelection;
class RunsTableModel;
class StoreReader;
class StoreWriter;

class RunHousekeeping : public QObject {
    Q_OBJECT
public:
    RunHousekeeping(RunsTableModel *runs, StoreReader *reader, StoreWriter *writer, RunSelection *selection,
                    DetailsView *details, QWidget *window);

    // A file the window cannot write: the menu's actions are there, disabled.
    void setReadOnly(bool readOnly) { m_readOnly = readOnly; }
    // The run menu for `runs` (the first is the one acted on where an action takes one run).
    QMenu *runMenu(const QList<core::RunId> &runs, QWidget *parent);

public Q_SLOTS:
    // The writes; the menu's dialogs ask, then call these. Each ends with edited().
    void renameRun(core::RunId run, const QString &name);
    void setRunNote(core::RunId run, const QString &text);
    void editRunTags(core::RunId run, const QList<std::pair<QString, QString>> &set,
                     const QStringList &remove);
    void setBaselineRun(core::RunId run, bool baseline);
    void archiveRuns(const QList<core::RunId> &runs, bool archived);
    void deleteRuns(const QList<core::RunId> &runs);

Q_SIGNALS:
    // A write finished, or the Tags dialog's text was refused: `error` empty when it was done (the
    // window then reads again), else why nothing was changed. `message` says either for the
    // status bar.
    void edited(const QString &error, const QString &message);

private:
    // The run's Tags…: its own tags to edit (KEY=VALUE lines), the system's shown.
    void editTagsDialog(core::RunId run, const QString &name);
    // Runs `job` on the writer; on success `after` first.
    void editRuns(const QString &done, std::function<void(core::TrackingStore &)> job,
                  std::function<void()> after = {});

    RunsTableModel *m_runs;
    StoreReader *m_reader;
    StoreWriter *m_writer;
    RunSelection *m_selection;
    DetailsView *m_details;
    QWidget *m_window;
    bool m_readOnly = false;
};

}  // namespace orrery::gui
