// SPDX-License-Identifier: GPL-3.0-or-later
//
// WrapLayout: items side by side while the width allows, the ones that do not fit on the next
// row. A bar of controls laid out by it is only as wide at least as its widest item, so it never
// sets the window's least width (Compare's bar did: 1,327 px with both docks); on a narrow window
// it takes a second row instead of squeezing the docks. Each item gets its size hint, the items
// that grow share what a row leaves over; heights follow the width (heightForWidth), so a
// vertical box layout above gives the bar its second row.
#pragma once

#include <QLayout>
#include <QList>

namespace orrery::gui {

class WrapLayout final : public QLayout {
public:
    explicit WrapLayout(QWidget *parent = nullptr);
    ~WrapLayout() override;

    void addItem(QLayoutItem *item) override;
    int count() const override { return int(m_items.size()); }
    QLayoutItem *itemAt(int index) const override { return m_items.value(index); }
    QLayoutItem *takeAt(int index) override;

    Qt::Orientations expandingDirections() const override { return Qt::Horizontal; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override { return place(QRect(0, 0, width, 0), false); }
    QSize sizeHint() const override;  // every item on one row
    QSize minimumSize() const override;  // the widest item
    void setGeometry(const QRect &rect) override;

    int rowCount() const { return m_rows; }  // as last laid out

private:
    // Lays the items out in `rect` (when `apply`) and returns the height they take.
    int place(const QRect &rect, bool apply) const;

    QList<QLayoutItem *> m_items;
    mutable int m_rows = 1;  // written by a placing pass only
};

}  // namespace orrery::gui
