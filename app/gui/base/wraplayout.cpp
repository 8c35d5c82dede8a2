// SPDX-License-Identifier: GPL-3.0-or-later
#include "wraplayout.h"

#include <QWidget>

#include <algorithm>

namespace orrery::gui {

WrapLayout::WrapLayout(QWidget *parent) : QLayout(parent)
{ }

WrapLayout::~WrapLayout()
{
    while (QLayoutItem *item = takeAt(0))
        delete item;
}

void WrapLayout::addItem(QLayoutItem *item)
{
    m_items.append(item);
}

QLayoutItem *WrapLayout::takeAt(int index)
{
    return index >= 0 && index < m_items.size() ? m_items.takeAt(index) : nullptr;
}

QSize WrapLayout::sizeHint() const
{
    int width = 0, height = 0, shown = 0;
    for (const QLayoutItem *item : m_items)
        if (!item->isEmpty()) {
            width += item->sizeHint().width();
            height = std::max(height, item->sizeHint().height());
            ++shown;
        }
    const QMargins m = contentsMargins();
    return {width + std::max(0, shown - 1) * spacing() + m.left() + m.right(), height + m.top() + m.bottom()};
}

QSize WrapLayout::minimumSize() const
{
    QSize least;
    for (const QLayoutItem *item : m_items)
        if (!item->isEmpty())
            least = least.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return least.grownBy(m);
}

void WrapLayout::setGeometry(const QRect &rect)
{
    QLayout::setGeometry(rect);
    place(rect, true);
}

int WrapLayout::place(const QRect &rect, bool apply) const
{
    const QRect area = rect.marginsRemoved(contentsMargins());
    // Rows first: an item starts a new row where the hints of the row so far and it do not fit.
    QList<QList<QLayoutItem *>> rows(1);
    int used = 0;
    for (QLayoutItem *item : m_items) {
        if (item->isEmpty())
            continue;
        const int w = item->sizeHint().width();
        if (!rows.last().isEmpty() && used + spacing() + w > area.width()) {
            rows.append(QList<QLayoutItem *>());
            used = 0;
        }
        used += (rows.last().isEmpty() ? 0 : spacing()) + w;
        rows.last().append(item);
    }
    int y = area.y();
    for (const QList<QLayoutItem *> &row : std::as_const(rows)) {
        int hinted = 0, height = 0, growing = 0;
        for (const QLayoutItem *item : row) {
            hinted += item->sizeHint().width();
            height = std::max(height, item->sizeHint().height());
            growing += (item->expandingDirections() & Qt::Horizontal) ? 1 : 0;
        }
        hinted += std::max(0, int(row.size()) - 1) * spacing();
        // What the row leaves over goes to its items that grow, in equal shares (to the first item
        // where none does); what it lacks is taken from the first.
        const int spare = area.width() - hinted;
        int x = area.x();
        for (int i = 0; i < row.size(); ++i) {
            QLayoutItem *item = row[i];
            int w = item->sizeHint().width();
            if (spare > 0 && growing > 0 && (item->expandingDirections() & Qt::Horizontal))
                w += spare / growing;
            else if (i == 0 && (spare < 0 || growing == 0))
                w += spare;
            w = std::clamp(w, item->minimumSize().width(),
                           std::max(item->minimumSize().width(), item->maximumSize().width()));
            w = std::min(w, area.right() + 1 - x);
            if (apply)
                item->setGeometry(QRect(x, y, w, height));
            x += w + spacing();
        }
        y += height + spacing();
    }
    if (apply)
        m_rows = int(rows.size());
    const QMargins m = contentsMargins();
    return y - spacing() - area.y() + m.top() + m.bottom();
}

}  // namespace orrery::gui
