// SPDX-License-Identifier: GPL-3.0-or-later
#include "windowsettings.h"

#include "orrery/core/paths.h"

#include <QCryptographicHash>
#include <QFile>

namespace orrery::gui {

std::unique_ptr<QSettings> windowSettings()
{
    auto settings = std::make_unique<QSettings>(core::guiSettingsPath(), QSettings::IniFormat);
    if (settings->allKeys().isEmpty()) {
        const QSettings former;
        if (QFile::exists(former.fileName()))
            for (const QString &key : former.allKeys())
                settings->setValue(key, former.value(key));
    }
    return settings;
}

QString databaseSettingsGroup(const QString &databasePath)
{
    return QStringLiteral("runsColumns/") +
        QString::fromLatin1(
               QCryptographicHash::hash(databasePath.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
}

}  // namespace orrery::gui
