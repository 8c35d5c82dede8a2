// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartlegend.h"

#include "runcolors.h"

#include <QEvent>
#include <QPainter>
#include <QPixmap>

#include <algorithm>

namespace orrery::gui {

namespace {
constexpr int kMaxLines = 3;  // more runs than fit scroll: the charts keep their height

QIcon swatch(core::RunId run)
{
    QPixmap p(12, 12);
    p.fill(Qt::transparent);
    QPainter painter(&p);
    painter.fillRect(QRect(0, 3, 12, 6), runColor(run));
    return QIcon(p);
}
}  // namespace

ChartLegend::ChartLegend(QWidget *parent) : QListWidget(parent)
{
    setObjectName(QStringLiteral("chartLegend"));
    setFlow(QListView::LeftToRight);
    setWrapping(true);
    setResizeMode(QListView::Adjust);
    setSelectionMode(QAbstractItemView::NoSelection);
    setFocusPolicy(Qt::NoFocus);
    setFrameShape(QFrame::NoFrame);
    setMouseTracking(true);  // itemEntered without a button held
    setSpacing(1);
    setSizePolicy(QSizePolicy::Preferred,
                  QSizePolicy::Fixed);  // sizeHint(): its lines, not a scroll area's 70 px
    viewport()->setAutoFillBackground(false);
    connect(this, &QListWidget::itemEntered, this,
            [this](QListWidgetItem *item) { Q_EMIT hovered(item->data(Qt::UserRole).toLongLong()); });
    connect(this, &QListWidget::viewportEntered, this, [this] { Q_EMIT hovered(0); });
}

QString ChartLegend::textOf(const Entry &e)
{
    return e.baseline ? QStringLiteral("★ ") + e.name : e.name;
}

void ChartLegend::setEntries(const QList<Entry> &entries)
{
    if (entries == m_entries)
        return;
    m_entries = entries;
    clear();
    for (const Entry &e : entries) {
        auto *item = new QListWidgetItem(swatch(e.run), textOf(e), this);
        item->setData(Qt::UserRole, e.run);
        item->setToolTip(e.baseline ? tr("%1 — the baseline run of its experiment").arg(e.name) : e.name);
    }
    m_highlighted = -1;
    setHighlighted(0);
    updateGeometry();
}

void ChartLegend::setHighlighted(core::RunId run)
{
    if (run == m_highlighted)
        return;
    m_highlighted = run;
    for (int i = 0; i < count(); ++i) {
        QListWidgetItem *it = item(i);
        QFont f = font();
        f.setBold(run && it->data(Qt::UserRole).toLongLong() == run);
        it->setFont(f);
    }
}

QSize ChartLegend::sizeHint() const
{
    // As many lines as the entries need at this width, up to kMaxLines.
    int lines = 1, x = 0;
    const int w = std::max(1, viewport()->width());
    for (int i = 0; i < count(); ++i) {
        // The item's own size, not its laid-out rect: the view lays out later than it resizes.
        const int iw = sizeHintForIndex(indexFromItem(item(i))).width() + 2 * spacing();
        if (x > 0 && x + iw > w) {
            ++lines;
            x = 0;
        }
        x += iw;
    }
    const int lineHeight = count() ? sizeHintForRow(0) + 2 * spacing() : fontMetrics().height();
    return {QListWidget::sizeHint().width(), std::min(lines, kMaxLines) * lineHeight + 2 * frameWidth()};
}

QSize ChartLegend::minimumSizeHint() const
{
    return {0, sizeHint().height()};
}

void ChartLegend::resizeEvent(QResizeEvent *event)
{
    QListWidget::resizeEvent(event);
    updateGeometry();
}

bool ChartLegend::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::Leave)
        Q_EMIT hovered(0);
    return QListWidget::viewportEvent(event);
}

}  // namespace orrery::gui
