// SPDX-License-Identifier: GPL-3.0-or-later
//
// orrery-gui's start options (main.cpp), applied to the shown window through its public face:
// `--select` a sweep once the store is shown, `--screenshot` the window (after its charts have
// drawn), `--launch` the launcher with a spec. A screenshot prints what it shows and quits.
#pragma once

#include <QString>

namespace orrery::gui {

class MainWindow;

// Selects `selectSweep`'s runs (a sweep's name or id) at the first snapshot; with
// `screenshotPath`, saves the window as PNG once the shown tab has drawn, then quits.
void applyStartOptions(MainWindow &window, const QString &selectSweep, const QString &screenshotPath);
// The launcher at start, with `specFile` and `cluster` as its target; with `screenshotPath`, the
// launcher's preview is saved as PNG and the program quits.
void launchAtStart(MainWindow &window, const QString &specFile, const QString &cluster,
                   const QString &screenshotPath);

}  // namespace orrery::gui
