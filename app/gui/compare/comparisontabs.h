// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tabs below the Compare tab's charts, built around the selection's sweep (UX.md "Views built
// around the sweep"; nothing selected: the table's runs): parallel coordinates of its swept params
// and its metric (brushing selects runs everywhere), a swept-param-vs-metric scatter, the params
// that differ between the selected runs (all of them with "Show all params"), and each param's
// importance for the metric. CompareView owns it and tells it what the charts show (update); its
// widgets are the view's children. UI thread only.
#pragma once

#include "orrery/core/store.h"

#include <QObject>
#include <QStringList>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QWidget;

namespace orrery::gui {

class ImportanceView;
class ParallelCoordinates;
struct ParallelPlan;
class RunSelection;
class RunsTableModel;
class StoreReader;

class ComparisonTabs : public QObject {
    Q_OBJECT
public:
    ComparisonTabs(StoreReader *reader, RunSelection *selection, RunsTableModel *runs, QWidget *view);

    // Parallel coordinates, scatter, differing params, importance: a tab widget in the view.
    QWidget *build();
    // Everything again for the runs, the selection and `metrics` (what the charts show: the
    // differences' columns, and the first is the metric where the sweep names none).
    void update(const QStringList &metrics);
    // The scatter's choice of param: every param of the table's runs (the current one kept).
    void updateParamChoices();
    void setShowAllParams(bool on);

    ParallelCoordinates *parallelCoordinates() const { return m_parallel; }
    ImportanceView *importanceView() const { return m_importance; }
    QComboBox *scatterParam() const { return m_scatterParam; }
    QCustomPlot *scatter() const { return m_scatter; }
    QStandardItemModel *diffModel() const { return m_diff; }

private:
    QWidget *buildScatterPage();
    QWidget *buildDiffPage();
    void updateScatter(const QList<core::RunRow> &all, const ParallelPlan &plan);
    void plotScatter(const QList<core::RunRow> &all, const QString &param, const QString &metric, bool logX);
    void updateDiff();

    StoreReader *m_reader;
    RunSelection *m_selection;
    RunsTableModel *m_runs;
    QWidget *m_view;  // the widgets' parent
    QStringList m_metrics;  // what the charts show, as of the last update
    bool m_showAll = false;

    QTabWidget *m_tabs = nullptr;
    ParallelCoordinates *m_parallel = nullptr;
    QComboBox *m_scatterParam = nullptr;
    QCustomPlot *m_scatter = nullptr;
    ImportanceView *m_importance = nullptr;
    QStandardItemModel *m_diff = nullptr;
    QTableView *m_diffView = nullptr;
    QCheckBox *m_showAllBox = nullptr;
};

}  // namespace orrery::gui
