// SPDX-License-Identifier: GPL-3.0-or-later
//
// The right dock: the current run's details — where it ran, its params, latest metrics (last,
// min, max, points), its GPU-hours and cost and where its wall time went (goodput: the same
// figures as `orrery runs show` and `runs goodput`, each part with a bar of its share), artifacts,
// and its trial attempts with their exit reasons and Slurm ids.
// Read on the store reader; shown when the read comes back.
#pragma once

#include "orrery/core/goodput.h"
#include "orrery/core/store.h"
#include "orrery/core/usage.h"

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
        core::Usage usage;
        std::optional<core::Price> price;  // its sweep's cluster's
        core::RunGoodput goodput;
    };
    void fill(const Read &read);

    StoreReader *m_reader;
    core::RunId m_run = 0;
};

}  // namespace orrery::gui
