// SPDX-License-Identifier: GPL-3.0-or-later
//
// The W&B capture module (docs/sweeps.md "W&B calls, captured"): Python files that, on a command
// trial's PYTHONPATH, record what a script logs through `wandb` into its run's events.jsonl while
// W&B keeps working as configured. Compiled in from resources/python/ and shipped by the executor
// into the sweep directory with each batch, so a cluster needs no Orrery installation for it.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <utility>

namespace orrery::core {

// The module's files: (name relative to the capture directory, bytes).
QList<std::pair<QString, QByteArray>> captureModuleFiles();
// Where a batch's executor puts them, relative to the sweep directory.
QString captureDirName();

}  // namespace orrery::core
