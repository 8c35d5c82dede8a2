// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/paths.h"

#include "orrery/core/version.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace orrery::core {

void applyApplicationIdentity()
{
    // No organization name: it would add a second path level (~/.local/share/orrery/orrery).
    QCoreApplication::setApplicationName(QStringLiteral("orrery"));
    QCoreApplication::setApplicationVersion(version());
}

QString defaultDatabasePath()
{
    QString fromEnv = qEnvironmentVariable("ORRERY_DB");
    if (!fromEnv.isEmpty())
        return fromEnv;
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("orrery.sqlite"));
}

QString configDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation);
}

namespace {
QString findProgram(const char *envVar, const QString &name)
{
    QString fromEnv = qEnvironmentVariable(envVar);
    if (!fromEnv.isEmpty())
        return fromEnv;
    if (QCoreApplication::instance()) {
        const QFileInfo beside(QDir(QCoreApplication::applicationDirPath()).filePath(name));
        if (beside.isExecutable())
            return beside.absoluteFilePath();
    }
    return QStandardPaths::findExecutable(name);
}
}  // namespace

QString trainerExecutable()
{
    return findProgram("ORRERY_TRAINER", QStringLiteral("orrery-train"));
}

QString cliExecutable()
{
    return findProgram("ORRERY_CLI", QStringLiteral("orrery"));
}

}  // namespace orrery::core
