// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Compare tab's legend: one entry per charted run (its colour, its name), the baseline run
// first and marked ★, wrapped into a few lines above the charts. Hovering an entry asks the view
// to emphasise that run in every chart (hovered()); the view tells it which run is emphasised
// (setHighlighted), whether the hover came from here or from a curve.
#pragma once

#include "orrery/core/store.h"

#include <QListWidget>

namespace orrery::gui {

class ChartLegend : public QListWidget {
    Q_OBJECT
public:
    struct Entry {
        core::RunId run = 0;
        QString name;
        bool baseline = false;
        bool operator==(const Entry &) const = default;
    };

    explicit ChartLegend(QWidget *parent = nullptr);

    // In the order given (the caller puts the baseline first); the same entries again (a live
    // refresh) change nothing.
    void setEntries(const QList<Entry> &entries);
    QList<Entry> entries() const { return m_entries; }
    // The entry of `run` in bold (0: none).
    void setHighlighted(core::RunId run);
    // The text an entry shows (tests): "★ name" for the baseline.
    static QString textOf(const Entry &e);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;  // its lines, not a scroll area's 68 px

Q_SIGNALS:
    void hovered(core::RunId run);  // 0: the pointer left the entries

protected:
    bool viewportEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;  // wider or narrower: as many lines as needed

private:
    QList<Entry> m_entries;
    core::RunId m_highlighted = 0;
};

}  // namespace orrery::gui
