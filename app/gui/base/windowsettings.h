// SPDX-License-Identifier: GPL-3.0-or-later
//
// The window's settings (geometry, the tabs' choices per database), in Orrery's config directory
// (core::guiSettingsPath). The shell and the rooms that remember a choice read and write them here.
#pragma once

#include <QSettings>
#include <QString>

#include <memory>

namespace orrery::gui {

// The settings file. They used to go to QSettings' default place, ~/.config/Unknown
// Organization/orrery.conf (Orrery sets no organization: it would add a level to the data
// directory's path); what is there is taken over once, and the old file is left as it was.
std::unique_ptr<QSettings> windowSettings();

// The settings group of one database's choices (the Runs table's columns, Compare's metrics, the
// tree's expansion): one per database path, a hash of it (a path's slashes would nest groups).
QString databaseSettingsGroup(const QString &databasePath);

}  // namespace orrery::gui
