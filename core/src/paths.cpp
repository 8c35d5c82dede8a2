// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/paths.h"

#include "orrery/core/sweepspec.h"
#include "orrery/core/version.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
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

QString guiSettingsPath()
{
    return QDir(configDirectory()).filePath(QStringLiteral("orrery.conf"));
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

// Here, not in trainerschema.cpp, because it is about where the schema comes from; the sweep
// spec fuzzer links trainerschema.cpp without the rest of core.
Parsed<TrainerSchema> TrainerSchema::load()
{
    const QString trainer = trainerExecutable();
    if (!trainer.isEmpty() || !QCoreApplication::instance())
        return fromTrainer(trainer);
    QFile installed(QDir(QCoreApplication::applicationDirPath())
                        .absoluteFilePath(QStringLiteral("../share/orrery/trainer-schema.json")));
    if (!installed.open(QIODevice::ReadOnly))
        return fromTrainer(trainer);  // says that no trainer was found
    auto schema = fromJson(installed.readAll());
    if (!schema)
        return Problem{QStringLiteral("%1: %2").arg(installed.fileName(), schema.problem())};
    return schema;
}

QString cliExecutable()
{
    return findProgram("ORRERY_CLI", QStringLiteral("orrery"));
}

}  // namespace orrery::core
