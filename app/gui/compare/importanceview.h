// SPDX-License-Identifier: GPL-3.0-or-later
//
// Compare's Importance tab (W&B's parameter importance panel): for the leading sweep of the
// selection, one row per param — a bar of its forest importance and the sign and size of its
// correlation with the sweep's metric — as core::sweepImportance computes it (and
// `orrery sweep importance` prints). Computed on the reader thread when the sweep changes; the
// UI thread only paints.
#pragma once

#include "orrery/core/importance.h"
#include "orrery/core/store.h"

#include <QWidget>

namespace orrery::gui {

class StoreReader;

class ImportanceView : public QWidget {
    Q_OBJECT
public:
    explicit ImportanceView(StoreReader *reader, QWidget *parent = nullptr);

    // The sweep to explain (0: none), and how many of its trials have ended: a different sweep,
    // or more ended trials of the same one (a live sweep), read again, the last answer shown
    // meanwhile; the same again does nothing.
    void setSweep(core::SweepId sweep, int endedTrials = 0);
    core::SweepId sweep() const { return m_sweep; }
    const core::ImportanceResult &result() const { return m_result; }
    // What the view says instead of bars (no sweep, reading, not enough runs).
    QString message() const { return m_message; }

Q_SIGNALS:
    void computed();  // a result for the current sweep arrived

protected:
    void paintEvent(QPaintEvent *) override;
    QSize sizeHint() const override { return {600, 260}; }

private:
    StoreReader *m_reader;
    core::SweepId m_sweep = 0;
    int m_ended = 0;
    core::ImportanceResult m_result;
    QString m_title, m_message;
    quint64 m_generation = 0;
};

}  // namespace orrery::gui
