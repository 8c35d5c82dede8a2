// SPDX-License-Identifier: GPL-3.0-or-later
//
// The left dock's tree (UX.md): experiments → sweeps → trials (SweepTreeModel). Its selection is the
// window's RunSelection both ways: what is chosen here selects the runs, and wherever runs are
// chosen the tree highlights a sweep all of whose trials are selected, else the selected trials.
// Which experiments and sweeps are expanded is kept per database in the window's settings.
#pragma once

#include "orrery/core/store.h"

#include <QTreeView>

namespace orrery::gui {

class RunSelection;
class SweepTreeModel;

class SweepTreeView : public QTreeView {
    Q_OBJECT
public:
    SweepTreeView(SweepTreeModel *model, RunSelection *selection, QWidget *parent = nullptr);

    // The experiments ("e<id>") and sweeps ("s<id>") expanded, saved for `databasePath`.
    void saveExpansion(const QString &databasePath) const;
    // As saved for `databasePath`; never saved: each experiment's sweeps.
    void restoreExpansion(const QString &databasePath);
    void syncSelection();  // the highlight from the window's selection

Q_SIGNALS:
    void trialLogsRequested(orrery::core::SweepId sweep, int trial);  // a trial double-clicked

private:
    SweepTreeModel *m_model;
    RunSelection *m_selection;
    bool m_syncing = false;
};

}  // namespace orrery::gui
