// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Runs tab's page (UX.md): a bar with the filter (`Ctrl+F`; a bad filter says why under it and the
// table keeps the last good one's runs), Group by, Columns… and Show archived runs, over the runs
// table (RunsTableView: its pinned Run, Status and sweep-metric columns and the rest). An empty
// database shows what fills it instead. The columns are the user's choices for this database
// (the window's settings, windowsettings.h) over the defaults (RunsTableModel::varyingParams);
// the table's selection is the window's RunSelection, kept in step both ways.
//
// The tab owns the query's filter and archived switch; the window reads query() for each snapshot
// and hands the snapshot back through showSnapshot(). A right-click on a row asks for the run
// menu (runMenuRequested): its actions are RunHousekeeping's.
#pragma once

#include "snapshot.h"

#include "orrery/core/store.h"

#include <QWidget>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;
class QToolButton;

namespace orrery::gui {

class ColumnChooser;
class RunSelection;
class RunsTableModel;
class RunsTableView;

class RunsPage : public QWidget {
    Q_OBJECT
public:
    RunsPage(RunsTableModel *model, RunSelection *selection, QWidget *parent = nullptr);

    QTableView *view() const;
    ColumnChooser *columnChooser() const { return m_columnChooser; }
    QAction *showArchivedAction() const { return m_showArchived; }
    // What the filter bar asks for: its conditions and whether archived runs are listed.
    const core::RunQuery &query() const { return m_query; }
    QString filterError() const;  // empty: the filter shown is the one applied

    // Another database: its own column choices, read from the window's settings at its first
    // snapshot (showSnapshot with `first`).
    void setDatabase(const QString &path) { m_database = path; }
    // Whether the next snapshot should read each run's goodput (its column is shown; before the
    // first snapshot of a database, whether its saved choices show it).
    bool wantsGoodput(bool beforeFirstSnapshot) const;
    // The snapshot's runs in the table; columns laid out again when its shape changed (or `first`).
    void showSnapshot(const Snapshot &snapshot, bool first);
    void syncSelection();  // the table's selection from the window's
    void focusFilter();

public Q_SLOTS:
    void setFilter(const QString &text);
    void setShowArchived(bool on);

Q_SIGNALS:
    void queryChanged();  // the filter or the archived switch changed: read again
    void goodputShown();  // its column was just shown: read again, with goodput
    // A right-click on `runs`' rows (the one clicked first) at `global`.
    void runMenuRequested(const QList<orrery::core::RunId> &runs, const QPoint &global);

private:
    QWidget *buildBar();
    void wireSelection();
    void contextMenu(QTableView *view, const QPoint &pos);
    void chooseColumn(const QString &key, bool shown);
    void applyColumns();
    // This database's saved column choice: the "shown" or "hidden" column keys.
    QStringList savedColumns(const QString &which) const;

    RunsTableModel *m_model;
    RunSelection *m_selection;
    core::RunQuery m_query;
    QString m_database;
    QLineEdit *m_filterEdit = nullptr;
    QLabel *m_filterError = nullptr;
    QComboBox *m_groupBox = nullptr;
    QToolButton *m_columnsButton = nullptr;
    QAction *m_showArchived = nullptr;
    ColumnChooser *m_columnChooser = nullptr;
    QLabel *m_empty = nullptr;  // an empty database's word
    RunsTableView *m_view = nullptr;
    QStringList m_shownColumns, m_hiddenColumns;  // the user's choices (columnKey), this database's
    QString m_columnsFor;  // the table shape the columns were laid out for
    bool m_syncing = false;
};

}  // namespace orrery::gui
