// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Environment tab's checks: `orrery doctor`'s checks (remote::environmentChecks, which starts the
// trainer) run on the blocking pool and shown in a table through an EnvironmentModel. Results
// arrive on the UI thread through a watcher; the pool thread never touches the model. Owned by
// the window.
#pragma once

#include "orrery/core/diagnostics.h"

#include <QFutureWatcher>
#include <QObject>

class QTableView;

namespace orrery::gui {

class EnvironmentModel;

class EnvironmentChecks : public QObject {
    Q_OBJECT
public:
    // Sets `view` up as the tab's table over `model`.
    EnvironmentChecks(EnvironmentModel *model, QTableView *view, QObject *parent);

    // The checks may still be running (orrery-train loading): waits for them rather than leave a
    // pool thread writing into a destroyed watcher.
    void waitForChecks();

public Q_SLOTS:
    void refresh();  // runs the checks again, unless they are running

Q_SIGNALS:
    void refreshed();
    void message(const QString &text, int timeoutMs);  // for the status bar

private:
    void showChecks();

    EnvironmentModel *m_model;
    QTableView *m_view;
    QFutureWatcher<QList<core::Check>> m_watcher;
};

}  // namespace orrery::gui
