// SPDX-License-Identifier: GPL-3.0-or-later
//
// The deep health check's results as Orrery keeps and shows them (docs/sweeps.md "Health
// check"): `orrery-train --health-check` writes each node's <run_dir>/health/<node>.json and, on
// its first rank, all of them as one object by node name in <run_dir>/health.json, which the
// runner stores per attempt in Trial::health; the CLI, the GUI's details dock and the monitor
// show it through healthLines, one line per node.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::core {

// <run_dir>/health.json (every node's verdict by node name, written by the check's rank 0) as
// Trial::health: the object in compact form; "" when the text is not a JSON object (a torn or
// foreign file is not stored; the next read tries again).
QString healthFromFile(const QByteArray &bytes);

struct HealthNodeLine {
    QString node;
    bool pass = false;
    QString figures;  // "matmul 12.3 GFLOP/s · memory 3.4 GB/s · all-reduce 0.52 GB/s · 812 ms"
    QString reason;  // why it failed (empty when it passed)
};
// Trial::health's nodes, in name order; empty for "" or text that is not a JSON object.
QList<HealthNodeLine> healthNodes(const QString &health);
// A table cell (the monitor's trials): "-" (no check), "ok ×2" (every node passed), or the
// failing nodes, "failed: node2".
QString healthCell(const QString &health);
// One line per node: "node2  failed  matmul ... · 812 ms — <reason>".
QStringList healthLines(const QString &health);

}  // namespace orrery::core
