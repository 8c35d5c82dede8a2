// SPDX-License-Identifier: GPL-3.0-or-later
//
// A stable colour per run, the same in every view (table swatch, curves, parallel coordinates,
// video tile borders) and in every session: a function of the run's id alone.
#pragma once

#include "orrery/core/store.h"

#include <QColor>

namespace orrery::gui {

// Tableau's 10 categorical colours, then golden-angle hues: neighbouring ids differ clearly.
QColor runColor(core::RunId run);

}  // namespace orrery::gui
