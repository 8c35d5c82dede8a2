// SPDX-License-Identifier: GPL-3.0-or-later
#include "runstableview.h"

#include "runstablemodel.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QStyleOptionHeader>

#include <algorithm>

namespace orrery::gui {

namespace {

// A header that elides a label too wide for its section in the middle (optim.warm…steps). Qt
// 6.4's own textElideMode leaves a label a little wider than its section whole and clips it at
// both ends ("im.warmup_ste"); the model's tooltip has the name whole.
class ElidingHeader final : public QHeaderView {
public:
    explicit ElidingHeader(QWidget *parent) : QHeaderView(Qt::Horizontal, parent)
    {
        setSectionsClickable(true);  // as QTableView's own header
        // No bold label for a selected row's sections (rows are selected whole, so that is
        // every section): the text is elided for the font it is drawn in.
        setHighlightSections(false);
        setTextElideMode(Qt::ElideMiddle);
    }

protected:
    void initStyleOptionForIndex(QStyleOptionHeader *option, int logicalIndex) const override
    {
        QHeaderView::initStyleOptionForIndex(option, logicalIndex);
        // The style's own label rect: its margins, and the sort arrow's room where it draws it beside.
        option->rect = QRect(0, 0, sectionSize(logicalIndex), height());
        const int room = style()->subElementRect(QStyle::SE_HeaderLabel, option, this).width();
        option->text = option->fontMetrics.elidedText(option->text, Qt::ElideMiddle, std::max(room, 0));
    }
};

}  // namespace

RunsTableView::RunsTableView(RunsTableModel *model, QWidget *parent)
    : QTableView(parent), m_model(model), m_pinned(new QTableView(this))
{
    setHorizontalHeader(new ElidingHeader(this));
    m_pinned->setHorizontalHeader(new ElidingHeader(m_pinned));
    setModel(model);
    setHorizontalScrollMode(ScrollPerPixel);
    // The pinned columns keep their place at the left: the user moves the others only.
    horizontalHeader()->setFirstSectionMovable(false);

    m_pinned->setObjectName(QStringLiteral("pinnedRunsView"));
    m_pinned->setModel(model);
    m_pinned->setSelectionModel(selectionModel());
    // Both halves select whole rows: a click on a pinned cell that selected that cell alone would
    // leave no full row selected in the shared selection model, and the window's selection empty.
    for (QTableView *v : {static_cast<QTableView *>(this), m_pinned}) {
        v->setSelectionBehavior(QAbstractItemView::SelectRows);
        v->setSelectionMode(QAbstractItemView::ExtendedSelection);
    }
    m_pinned->setFocusPolicy(Qt::NoFocus);
    m_pinned->verticalHeader()->hide();
    m_pinned->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_pinned->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_pinned->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_pinned->setHorizontalScrollMode(ScrollPerPixel);
    m_pinned->setVerticalScrollMode(verticalScrollMode());
    m_pinned->setWordWrap(false);
    m_pinned->setStyleSheet(
        QStringLiteral("QTableView { border: none; border-right: 1px solid palette(mid); }"));
    viewport()->stackUnder(m_pinned);
    showOnlyPinned();
    m_pinned->show();

    connect(horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int size) {
        if (section < RunsTableModel::kPinnedColumns) {
            m_pinned->setColumnWidth(section, size);
            updatePinnedGeometry();
        }
    });
    connect(verticalHeader(), &QHeaderView::sectionResized, this,
            [this](int section, int, int size) { m_pinned->setRowHeight(section, size); });
    connect(m_pinned->verticalScrollBar(), &QAbstractSlider::valueChanged, verticalScrollBar(),
            &QAbstractSlider::setValue);
    connect(verticalScrollBar(), &QAbstractSlider::valueChanged, m_pinned->verticalScrollBar(),
            &QAbstractSlider::setValue);
    // A click on a pinned header sorts the table as a click on the main header would.
    connect(m_pinned->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int section) {
        const bool again = horizontalHeader()->sortIndicatorSection() == section &&
            horizontalHeader()->sortIndicatorOrder() == Qt::AscendingOrder;
        sortByColumn(section, again ? Qt::DescendingOrder : Qt::AscendingOrder);
    });
    connect(horizontalHeader(), &QHeaderView::sortIndicatorChanged, m_pinned->horizontalHeader(),
            &QHeaderView::setSortIndicator);
    m_pinned->horizontalHeader()->setSortIndicatorShown(true);
    // New columns (a new param) arrive hidden in the pinned view.
    connect(model, &QAbstractItemModel::modelReset, this, &RunsTableView::showOnlyPinned);
    connect(model, &QAbstractItemModel::columnsInserted, this, &RunsTableView::showOnlyPinned);
    connect(model, &QAbstractItemModel::headerDataChanged, this, &RunsTableView::updatePinnedGeometry);
}

void RunsTableView::showOnlyPinned()
{
    for (int c = 0; c < m_model->columnCount(); ++c) {
        m_pinned->setColumnHidden(c, c >= RunsTableModel::kPinnedColumns);
        if (c < RunsTableModel::kPinnedColumns)
            m_pinned->setColumnWidth(c, columnWidth(c));
    }
    updatePinnedGeometry();
}

int RunsTableView::pinnedWidth() const
{
    int w = 0;
    for (int c = 0; c < RunsTableModel::kPinnedColumns; ++c)
        if (!isColumnHidden(c))
            w += columnWidth(c);
    return w;
}

void RunsTableView::updatePinnedGeometry()
{
    // Rows line up only at the same height (the window sets the main view's after construction).
    if (m_pinned->verticalHeader()->defaultSectionSize() != verticalHeader()->defaultSectionSize())
        m_pinned->verticalHeader()->setDefaultSectionSize(verticalHeader()->defaultSectionSize());
    m_pinned->setGeometry(verticalHeader()->width() + frameWidth(), frameWidth(), pinnedWidth() + 1,
                          viewport()->height() + horizontalHeader()->height());
    m_pinned->horizontalHeader()->setFixedHeight(horizontalHeader()->height());
}

void RunsTableView::resizeEvent(QResizeEvent *event)
{
    QTableView::resizeEvent(event);
    updatePinnedGeometry();
}

void RunsTableView::updateGeometries()
{
    QTableView::updateGeometries();
    updatePinnedGeometry();
}

QModelIndex RunsTableView::moveCursor(CursorAction cursorAction, Qt::KeyboardModifiers modifiers)
{
    // Moving left into a cell under the pinned columns scrolls it out from under them.
    const QModelIndex current = QTableView::moveCursor(cursorAction, modifiers);
    if (cursorAction == MoveLeft && current.column() >= RunsTableModel::kPinnedColumns &&
        visualRect(current).topLeft().x() < pinnedWidth()) {
        const int newValue =
            horizontalScrollBar()->value() + visualRect(current).topLeft().x() - pinnedWidth();
        horizontalScrollBar()->setValue(newValue);
    }
    return current;
}

void RunsTableView::scrollTo(const QModelIndex &index, ScrollHint hint)
{
    // Pinned cells are always in view: a scroll to one would only move the other columns away.
    if (index.column() >= RunsTableModel::kPinnedColumns)
        QTableView::scrollTo(index, hint);
}

}  // namespace orrery::gui
