// SPDX-License-Identifier: GPL-3.0-or-later
#include "importanceview.h"

#include "storereader.h"

#include "orrery/core/metricgoal.h"

#include <QPainter>

#include <cmath>

namespace orrery::gui {

namespace {
struct Answer {
    core::ImportanceResult result;
    QString title;
};
}  // namespace

ImportanceView::ImportanceView(StoreReader *reader, QWidget *parent) : QWidget(parent), m_reader(reader)
{
    m_message = tr("Select runs of a sweep to see which params explain its metric");
}

void ImportanceView::setSweep(core::SweepId sweep, int endedTrials)
{
    if (sweep == m_sweep && endedTrials == m_ended)
        return;
    const bool sameSweep = sweep == m_sweep;
    m_sweep = sweep;
    m_ended = endedTrials;
    const quint64 generation = ++m_generation;
    if (!sameSweep) {
        m_result = {};
        m_title.clear();
    }
    if (!sweep) {
        m_message = tr("Select runs of a sweep to see which params explain its metric");
        update();
        return;
    }
    if (!sameSweep) {
        m_message = tr("Computing…");
        update();
    }
    m_reader->read<Answer>(
        this,
        [sweep](const core::TrackingStore &store) {
            Answer a;
            const std::optional<core::Sweep> sw = store.sweep(sweep);
            if (!sw) {
                a.result.problem = QStringLiteral("the sweep is gone");
                return a;
            }
            a.result = core::sweepImportance(store, *sw);
            a.title = QStringLiteral("%1: what explains %2 (%3)")
                          .arg(sw->name, sw->metricName, core::toString(sw->metricGoal));
            return a;
        },
        [this, generation](Answer a) {
            if (generation != m_generation)
                return;  // the sweep changed while this one was computed
            m_result = std::move(a.result);
            m_title = a.title;
            m_message = m_result.ok() ? QString() : m_result.problem;
            update();
            Q_EMIT computed();
        });
}

void ImportanceView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const QColor fg = palette().color(QPalette::Text);
    if (!m_message.isEmpty() || m_result.params.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_title + QLatin1Char('\n') + m_message);
        return;
    }
    const QFontMetrics fm(font());
    const int row = fm.height() + 6, nameWidth = std::min(width() / 3, 220), corrWidth = 150;
    p.setPen(fg);
    p.drawText(QRect(8, 4, width() - 16, row), Qt::AlignLeft | Qt::AlignVCenter,
               m_title + tr(" — %1 runs").arg(m_result.runsUsed));
    p.setPen(palette().color(QPalette::PlaceholderText));
    const int barX = 8 + nameWidth, barWidth = std::max(40, width() - barX - corrWidth - 16);
    p.drawText(QRect(barX, 4 + row, barWidth, row), Qt::AlignLeft | Qt::AlignVCenter, tr("importance"));
    p.drawText(QRect(barX + barWidth + 8, 4 + row, corrWidth, row), Qt::AlignLeft | Qt::AlignVCenter,
               tr("correlation"));
    const QColor bar = palette().color(QPalette::Highlight);
    const QColor positive(46, 139, 87), negative(200, 60, 60);
    int y = 4 + 2 * row;
    for (const core::ParamImportance &param : m_result.params) {
        if (y + row > height())
            break;
        p.setPen(fg);
        p.drawText(QRect(8, y, nameWidth - 8, row), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(param.key + (param.log ? tr(" (log)") : QString()), Qt::ElideMiddle,
                                 nameWidth - 8));
        p.fillRect(QRect(barX, y + 3, int(std::lround(param.importance * barWidth)), row - 6), bar);
        p.drawText(QRect(barX + 4, y, barWidth, row), Qt::AlignLeft | Qt::AlignVCenter,
                   QString::number(param.importance, 'f', 2));
        // The correlation: its sign in colour, its size as a small bar either side of a centre.
        const int cx = barX + barWidth + 8 + 50;
        if (param.correlation) {
            const double c = *param.correlation;
            p.fillRect(c >= 0
                           ? QRect(cx, y + 3, int(std::lround(c * 45)), row - 6)
                           : QRect(cx + int(std::lround(c * 45)), y + 3, int(std::lround(-c * 45)), row - 6),
                       c >= 0 ? positive : negative);
            p.setPen(c >= 0 ? positive : negative);
            p.drawText(QRect(cx + 50, y, 60, row), Qt::AlignLeft | Qt::AlignVCenter,
                       QString::asprintf("%+.2f", c));
        } else {
            p.setPen(palette().color(QPalette::PlaceholderText));
            p.drawText(QRect(cx + 50, y, 60, row), Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("–"));
        }
        p.setPen(palette().color(QPalette::Mid));
        p.drawLine(cx, y + 2, cx, y + row - 2);
        y += row;
    }
}

}  // namespace orrery::gui
