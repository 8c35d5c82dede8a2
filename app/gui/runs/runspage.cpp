// SPDX-License-Identifier: GPL-3.0-or-later
#include "runspage.h"

#include "columnchooser.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "runstableview.h"
#include "windowsettings.h"

#include "orrery/core/store.h"

#include <QAction>
#include <QBoxLayout>
#include <QComboBox>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace orrery::gui {

RunsPage::RunsPage(RunsTableModel *model, RunSelection *selection, QWidget *parent)
    : QWidget(parent), m_model(model), m_selection(selection)
{
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(buildBar());

    // An empty database says what fills it (UX.md: an empty view says what to do).
    m_empty = new QLabel(
        tr("<p><b>No runs yet.</b></p><p>Launch a sweep: <b>Sweeps → Launch a sweep…</b> (Ctrl+L), or "
           "<code>orrery sweep submit FILE</code> in a terminal.<br>Or bring in runs that already "
           "exist: <b>File → Import run directories or an MLflow store…</b></p>"),
        this);
    m_empty->setObjectName(QStringLiteral("runsEmpty"));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->hide();
    layout->addWidget(m_empty, 1);

    m_view = new RunsTableView(m_model, this);
    m_view->setObjectName(QStringLiteral("runsView"));
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(22);
    m_view->setWordWrap(false);
    m_view->horizontalHeader()->setSectionsMovable(true);
    layout->addWidget(m_view, 1);

    // The chooser is a popup of the table's headers (both halves) and of the Columns button.
    m_columnChooser = new ColumnChooser(this);
    m_columnChooser->setWindowFlag(Qt::Popup);
    connect(m_columnChooser, &ColumnChooser::columnToggled, this, &RunsPage::chooseColumn);
    auto popUpChooser = [this](const QPoint &global) {
        m_columnChooser->move(global);
        m_columnChooser->show();
        m_columnChooser->searchEdit()->setFocus();
    };
    connect(m_columnsButton, &QToolButton::clicked, this, [this, popUpChooser] {
        popUpChooser(m_columnsButton->mapToGlobal(QPoint(0, m_columnsButton->height())));
    });
    // Both halves of the table: the pinned columns are a view of their own over the main one, and
    // a right-click there (on a header: the chooser; on a row: the run menu) is theirs.
    for (QTableView *view : {static_cast<QTableView *>(m_view), m_view->pinnedView()}) {
        QHeaderView *header = view->horizontalHeader();
        header->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(header, &QHeaderView::customContextMenuRequested, this,
                [header, popUpChooser](const QPoint &pos) { popUpChooser(header->mapToGlobal(pos)); });
        view->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(view, &QTableView::customContextMenuRequested, this,
                [this, view](const QPoint &pos) { contextMenu(view, pos); });
    }
    wireSelection();
}

QWidget *RunsPage::buildBar()
{
    auto *holder = new QWidget(this);
    auto *rows = new QVBoxLayout(holder);
    rows->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    m_filterEdit = new QLineEdit(holder);
    m_filterEdit->setObjectName(QStringLiteral("filterEdit"));
    m_filterEdit->setPlaceholderText(tr("Filter, e.g.  params.optim.lr >= 3e-4 and metrics.eval/loss < 0.2 "
                                        "and attributes.status = FINISHED"));
    m_filterEdit->setClearButtonEnabled(true);
    bar->addWidget(m_filterEdit, 1);
    bar->addWidget(new QLabel(tr("Group by:"), holder));
    m_groupBox = new QComboBox(holder);
    m_groupBox->setObjectName(QStringLiteral("groupBox"));
    m_groupBox->addItem(tr("(none)"));
    bar->addWidget(m_groupBox);
    m_columnsButton = new QToolButton(holder);
    m_columnsButton->setObjectName(QStringLiteral("columnsButton"));
    m_columnsButton->setText(tr("Columns…"));
    bar->addWidget(m_columnsButton);
    m_showArchived = new QAction(tr("Show &archived runs"), this);
    m_showArchived->setObjectName(QStringLiteral("showArchived"));
    m_showArchived->setCheckable(true);
    m_showArchived->setToolTip(tr("List archived runs too (hidden by default; the run menu archives)"));
    connect(m_showArchived, &QAction::toggled, this, &RunsPage::setShowArchived);
    auto *archived = new QToolButton(holder);
    archived->setDefaultAction(m_showArchived);
    archived->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addWidget(archived);
    rows->addLayout(bar);
    m_filterError = new QLabel(holder);
    m_filterError->setObjectName(QStringLiteral("filterError"));
    m_filterError->setStyleSheet(QStringLiteral("QLabel { color: #c62828; }"));
    m_filterError->setWordWrap(true);
    m_filterError->hide();
    rows->addWidget(m_filterError);

    auto *debounce = new QTimer(this);
    debounce->setSingleShot(true);
    debounce->setInterval(300);
    connect(m_filterEdit, &QLineEdit::textChanged, debounce, qOverload<>(&QTimer::start));
    connect(debounce, &QTimer::timeout, this, [this] { setFilter(m_filterEdit->text()); });
    connect(m_groupBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_model->setGroupBy(i <= 0 ? QString() : m_groupBox->itemText(i));
        // Each group's band is captioned in the vertical header: its value and run count.
        m_view->verticalHeader()->setVisible(i > 0);
        syncSelection();
    });
    return holder;
}

void RunsPage::wireSelection()
{
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        if (m_syncing)
            return;
        QList<core::RunId> runs;
        for (const QModelIndex &i : m_view->selectionModel()->selectedRows())
            runs.push_back(i.data(RunsTableModel::RunIdRole).toLongLong());
        const QModelIndex current = m_view->currentIndex();
        m_selection->select(runs, m_view,
                            current.isValid() ? current.data(RunsTableModel::RunIdRole).toLongLong() : 0);
    });
    connect(m_selection, &RunSelection::changed, this, [this](const QObject *source) {
        if (source != m_view)
            syncSelection();
    });
}

QTableView *RunsPage::view() const
{
    return m_view;
}

QString RunsPage::filterError() const
{
    return m_filterError->isVisible() ? m_filterError->text() : QString();
}

void RunsPage::focusFilter()
{
    m_filterEdit->setFocus();
    m_filterEdit->selectAll();
}

void RunsPage::setFilter(const QString &text)
{
    if (m_filterEdit->text() != text) {
        const QSignalBlocker block(m_filterEdit);
        m_filterEdit->setText(text);
    }
    const auto conditions = core::parseRunFilter(text);
    if (!conditions) {
        m_filterError->setText(conditions.problem());
        m_filterError->show();
        return;  // the table keeps the last good filter's runs
    }
    m_filterError->hide();
    m_query.conditions = *conditions;
    Q_EMIT queryChanged();
}

void RunsPage::setShowArchived(bool on)
{
    if (m_showArchived->isChecked() != on)
        m_showArchived->setChecked(on);  // toggled() comes back here
    if (m_query.includeArchived == on)
        return;
    m_query.includeArchived = on;
    Q_EMIT queryChanged();
}

void RunsPage::contextMenu(QTableView *view, const QPoint &pos)
{
    const QModelIndex at = view->indexAt(pos);
    if (!at.isValid())
        return;
    // The selection when the click is on it, else the row clicked.
    const core::RunId clicked = at.data(RunsTableModel::RunIdRole).toLongLong();
    QList<core::RunId> runs;
    for (const QModelIndex &i : m_view->selectionModel()->selectedRows())
        runs.push_back(i.data(RunsTableModel::RunIdRole).toLongLong());
    if (!runs.contains(clicked))
        runs = {clicked};
    else
        runs.move(runs.indexOf(clicked), 0);
    Q_EMIT runMenuRequested(runs, view->viewport()->mapToGlobal(pos));
}

bool RunsPage::wantsGoodput(bool beforeFirstSnapshot) const
{
    // Reading goodput for every run cost the open of 100,000 runs 170 ms: only while it is shown.
    return beforeFirstSnapshot
        ? savedColumns(QStringLiteral("shown")).contains(m_model->columnKey(RunsTableModel::GoodputColumn))
        : !m_view->isColumnHidden(RunsTableModel::GoodputColumn);
}

void RunsPage::showSnapshot(const Snapshot &s, bool first)
{
    const bool firstShape = m_model->paramKeys() != s.paramKeys || m_model->metricKeys() != s.metricKeys;
    if (first) {  // a database (re)opened: its own column choices
        m_shownColumns = savedColumns(QStringLiteral("shown"));
        m_hiddenColumns = savedColumns(QStringLiteral("hidden"));
        m_columnsFor.clear();
    }
    m_model->setSweeps(s.index());
    m_model->setRuns(s.runs, s.paramKeys, s.metricKeys);
    // The columns follow what is shown (its keys, its runs, its sweep), never what was shown
    // before: a live refresh of the same runs keeps them as they are.
    const QString shape = QStringLiteral("%1|%2|%3|%4")
                              .arg(s.paramKeys.join(QLatin1Char('\n')), s.metricKeys.join(QLatin1Char('\n')),
                                   m_model->sweepMetric())
                              .arg(s.runs.size());
    if (shape != m_columnsFor || first) {
        m_columnsFor = shape;
        applyColumns();
    }
    const bool empty = s.runs.isEmpty() && m_query.conditions.isEmpty();
    m_empty->setVisible(empty);
    m_view->setVisible(!empty);
    if (firstShape) {
        const QString group = m_model->groupBy();
        const QSignalBlocker block(m_groupBox);
        m_groupBox->clear();
        m_groupBox->addItem(tr("(none)"));
        m_groupBox->addItems(s.paramKeys);
        m_groupBox->setCurrentIndex(std::max(0, m_groupBox->findText(group)));
    }
}

QStringList RunsPage::savedColumns(const QString &which) const
{
    return windowSettings()
        ->value(databaseSettingsGroup(m_database) + QLatin1Char('/') + which)
        .toStringList();
}

void RunsPage::chooseColumn(const QString &key, bool shown)
{
    m_shownColumns.removeAll(key);
    m_hiddenColumns.removeAll(key);
    (shown ? m_shownColumns : m_hiddenColumns).push_back(key);
    const int column = m_model->columnOfKey(key);
    if (column >= 0)
        m_view->setColumnHidden(column, !shown);
    if (column == RunsTableModel::GoodputColumn && shown)
        Q_EMIT goodputShown();  // its values are read only while it is shown
    // Saved at once, per database (keyed by its path; the path itself beside, for a reader).
    const auto settings = windowSettings();
    const QString group = databaseSettingsGroup(m_database);
    settings->setValue(group + QLatin1String("/database"), m_database);
    settings->setValue(group + QLatin1String("/shown"), m_shownColumns);
    settings->setValue(group + QLatin1String("/hidden"), m_hiddenColumns);
}

void RunsPage::applyColumns()
{
    // Shown by default: the pinned three, the params that vary within what is shown (the sweeps'
    // swept params first) and the metrics; Experiment, Started, Duration, Progress, GPU-h and
    // Goodput when chosen.
    const QStringList varying = m_model->varyingParams();
    QHeaderView *header = m_view->horizontalHeader();
    QList<ColumnChooser::Column> choices;
    QList<int> order;  // the visual order after the pinned columns
    QList<int> params, metrics;
    for (int c = 0; c < m_model->columnCount(); ++c) {
        const QString key = m_model->columnKey(c);
        bool shown = c < RunsTableModel::kPinnedColumns;
        if (key.startsWith(QLatin1String("param:")))
            shown = varying.contains(key.mid(6));
        else if (key.startsWith(QLatin1String("metric:")))
            shown = true;
        if (m_shownColumns.contains(key))
            shown = true;
        else if (m_hiddenColumns.contains(key))
            shown = false;
        if (c < RunsTableModel::kPinnedColumns)
            shown = true;  // always there: they say which run a row is
        m_view->setColumnHidden(c, !shown);
        if (c >= RunsTableModel::kPinnedColumns)
            choices.push_back({key, m_model->headerData(c, Qt::Horizontal).toString(), shown});
        if (c < RunsTableModel::FixedColumns)
            order.push_back(c);
        else if (key.startsWith(QLatin1String("param:")))
            params.push_back(c);
        else
            metrics.push_back(c);
    }
    for (const QString &k : varying)
        order.push_back(m_model->paramColumn(k));
    for (int c : std::as_const(params))
        if (!order.contains(c))
            order.push_back(c);
    order += metrics;
    for (int v = 0; v < order.size(); ++v)
        if (header->visualIndex(order[v]) != v)
            header->moveSection(header->visualIndex(order[v]), v);
    m_columnChooser->setColumns(choices);
    for (int c = 0; c < RunsTableModel::kPinnedColumns; ++c)
        m_view->resizeColumnToContents(c);
}

void RunsPage::syncSelection()
{
    m_syncing = true;
    QItemSelection selection;
    for (core::RunId run : m_selection->runs()) {
        const int row = m_model->rowOfRun(run);
        if (row >= 0)
            selection.select(m_model->index(row, 0), m_model->index(row, m_model->columnCount() - 1));
    }
    m_view->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
    const int current = m_model->rowOfRun(m_selection->current());
    if (current >= 0)
        m_view->selectionModel()->setCurrentIndex(m_model->index(current, 0), QItemSelectionModel::NoUpdate);
    m_syncing = false;
}

}  // namespace orrery::gui
