// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the sweep tree's context menu does to a sweep or a trial: cancel a sweep, stop a trial
// early, retry a trial — remote::SweepOperations' cancel / stopTrial / retryTrial, the calls of
// `orrery sweep cancel|stop|retry` — on a pool thread, over the window's shared connections
// (ClusterHub), as jobs on the window's store writer. The window's follower settles what they end
// (Settle::Return). Each action's CLI command
// line (quoted for a POSIX shell) is what "Copy as CLI command" puts on the clipboard.
#pragma once

#include "orrery/core/store.h"

#include <QObject>
#include <QString>
#include <QStringList>

namespace orrery::gui {

class ClusterHub;
class StoreWriter;

class SweepActions : public QObject {
    Q_OBJECT
public:
    enum class Action { CancelSweep, StopTrial, RetryTrial };

    SweepActions(ClusterHub *hub, StoreWriter *writer, QObject *parent = nullptr);
    void setDatabase(const QString &path) { m_database = path; }

    // Starts the action; `done` comes back on the UI thread. `trial` is ignored for CancelSweep.
    void run(Action action, core::SweepId sweep, int trial = -1);
    int inFlight() const { return m_inFlight; }

    // `orrery --db DB sweep cancel 12`, each argument quoted when it needs to be.
    QString commandLine(Action action, core::SweepId sweep, int trial = -1) const;

Q_SIGNALS:
    void started(const QString &what);
    void done(const QString &message, bool ok);

private:
    ClusterHub *m_hub;
    StoreWriter *m_writer;
    QString m_database;
    int m_inFlight = 0;
};

}  // namespace orrery::gui
