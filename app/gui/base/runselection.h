// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one selection every view shares (UX.md): the runs the user picked in the table, the tree,
// or by brushing the parallel coordinates, and the current run the details dock shows. Views
// listen to changed() and ignore the echo of their own changes through `source`.
#pragma once

#include "orrery/core/store.h"

#include <QList>
#include <QObject>

namespace orrery::gui {

class RunSelection : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    const QList<core::RunId> &runs() const { return m_runs; }
    core::RunId current() const { return m_current; }
    bool contains(core::RunId run) const { return m_runs.contains(run); }

    // Replaces the selection; the current run becomes `current`, else the first selected.
    void select(const QList<core::RunId> &runs, const QObject *source, core::RunId current = 0);

Q_SIGNALS:
    void changed(const QObject *source);

private:
    QList<core::RunId> m_runs;
    core::RunId m_current = 0;
};

}  // namespace orrery::gui
