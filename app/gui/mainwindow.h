// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFutureWatcher>
#include <QMainWindow>

#include "orrery/core/diagnostics.h"

class QTableView;
class QTabWidget;

namespace orrery::gui {

class EnvironmentModel;

// Orrery's one main window (UX.md). This first version has the Environment tab: the same checks
// as `orrery doctor`, computed on a pool thread (they start orrery-train) and shown when done.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    EnvironmentModel *environmentModel() const { return m_environment; }

public Q_SLOTS:
    // Runs the checks again; the model is replaced when they finish.
    void refreshEnvironment();

Q_SIGNALS:
    void environmentRefreshed();

private:
    QTabWidget *m_tabs = nullptr;
    EnvironmentModel *m_environment = nullptr;
    QTableView *m_environmentView = nullptr;
    QFutureWatcher<QList<core::Check>> m_checksWatcher;
};

}  // namespace orrery::gui
