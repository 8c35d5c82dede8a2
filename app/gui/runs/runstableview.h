// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Runs table's view: a QTableView whose first columns (RunsTableModel::kPinnedColumns: the
// run's name, its status and the sweep metric) stay in place while the rest scrolls sideways —
// Qt's "frozen column" pattern: a second table view over the same model and selection model, laid
// over the left edge, showing only the pinned columns, its widths and vertical scrolling kept in
// step with the main view's. Headers elide long names in the middle (the tooltip has them whole).
#pragma once

#include <QTableView>

namespace orrery::gui {

class RunsTableModel;

class RunsTableView : public QTableView {
    Q_OBJECT
public:
    explicit RunsTableView(RunsTableModel *model, QWidget *parent = nullptr);

    QTableView *pinnedView() const { return m_pinned; }
    int pinnedWidth() const;  // of the pinned columns, in pixels

protected:
    void resizeEvent(QResizeEvent *event) override;
    QModelIndex moveCursor(CursorAction cursorAction, Qt::KeyboardModifiers modifiers) override;
    void scrollTo(const QModelIndex &index, ScrollHint hint = EnsureVisible) override;
    void updateGeometries() override;

private:
    void updatePinnedGeometry();
    void showOnlyPinned();

    RunsTableModel *m_model;
    QTableView *m_pinned;
};

}  // namespace orrery::gui
