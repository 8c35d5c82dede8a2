// SPDX-License-Identifier: GPL-3.0-or-later
#include "runselection.h"

#include <QSet>

namespace orrery::gui {

void RunSelection::select(const QList<core::RunId> &runs, const QObject *source, core::RunId current)
{
    QList<core::RunId> unique;
    unique.reserve(runs.size());
    QSet<core::RunId> seen;
    for (core::RunId r : runs)
        if (!seen.contains(r)) {
            seen.insert(r);
            unique.push_back(r);
        }
    const core::RunId cur = current && unique.contains(current) ? current : unique.value(0);
    if (unique == m_runs && cur == m_current)
        return;
    m_runs = std::move(unique);
    m_current = cur;
    Q_EMIT changed(source);
}

}  // namespace orrery::gui
