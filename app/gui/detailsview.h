// SPDX-License-Identifier: GPL-3.0-or-later
//
// The right dock: the current run's details — where it ran, its params, latest metrics (last,
// min, max, points), artifacts, and its trial attempts with their exit reasons and Slurm ids.
// Read on the store reader; shown when the read comes back.
#pragma once

#include "orrery/core/store.h"

#include <QTreeWidget>

namespace orrery::gui {

class StoreReader;

class DetailsView : public QTreeWidget {
    Q_OBJECT
public:
    explicit DetailsView(StoreReader *reader, QWidget *parent = nullptr);

    void showRun(core::RunId run);  // 0: nothing
    core::RunId run() const { return m_run; }

Q_SIGNALS:
    void shown(core::RunId run);

private:
    struct Read {
        core::RunDetails details;
        QList<core::Trial> attempts;
    };
    void fill(const Read &read);

    StoreReader *m_reader;
    core::RunId m_run = 0;
};

}  // namespace orrery::gui
