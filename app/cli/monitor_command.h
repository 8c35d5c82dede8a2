// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery monitor`: the full-screen terminal monitor (docs/monitor.md). The model and its feeds
// live in app/monitor/ (no curses there); this is the thin ncurses view and the key loop.
#pragma once

#include "runs_commands.h"

#include <QStringList>

namespace orrery::cli {

// `orrery monitor [--cluster NAME] [--refresh SECONDS] [--no-follow]`, declared for the command
// table (which parses its options and makes its help).
CommandInfo monitorCommand();

}  // namespace orrery::cli
