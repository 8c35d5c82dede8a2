// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/paths.h"

#include "orrery/core/sweepspec.h"
#include "orrery/core/version.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
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

QString cacheDirectory()
{
    return qEnvironmentVariableIsSet("ORRERY_CACHE_DIR")
        ? qEnvironmentVariable("ORRERY_CACHE_DIR")
        : QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
}

QString trainerExecutable()
{
    return findProgram("ORRERY_TRAINER", QStringLiteral("orrery-train"));
}

namespace {

// The local trainer's schema, asked once per build of it: every `orrery sweep plan` and `submit`,
// each launcher check and each supervisor needs it, and each ask loads LibTorch (0.45 CPU-seconds;
// 74 of the test command's 504 trainer launches were this question). The cache file starts with
// the trainer's path, size and modification time; a rebuilt or replaced trainer differs in one and
// is asked again. A cache that cannot be read or written costs only the ask.
Parsed<TrainerSchema> loadCached(const QString &trainer)
{
    const QFileInfo program(trainer);
    if (!program.isFile())
        return TrainerSchema::fromTrainer(trainer);  // says what is wrong with it
    const QString path = program.canonicalFilePath();
    const QByteArray stamp = path.toUtf8() + '\n' + QByteArray::number(program.size()) + '\n' +
        QByteArray::number(program.lastModified().toMSecsSinceEpoch()) + '\n';
    const QString file =
        QDir(cacheDirectory())
            .filePath(QStringLiteral("trainer-schema/") +
                      QString::fromLatin1(
                          QCryptographicHash::hash(path.toUtf8(), QCryptographicHash::Sha1).toHex()) +
                      QStringLiteral(".json"));
    QFile cached(file);
    if (cached.open(QIODevice::ReadOnly)) {
        const QByteArray bytes = cached.readAll();
        if (bytes.startsWith(stamp)) {
            auto schema = TrainerSchema::fromJson(bytes.mid(stamp.size()));
            if (schema)
                return schema;
        }
    }
    const Parsed<QByteArray> printed = TrainerSchema::printedBy(trainer);
    if (!printed)
        return Problem{printed.problem()};
    auto schema = TrainerSchema::fromJson(*printed);
    if (!schema)
        return Problem{QStringLiteral("%1: %2").arg(trainer, schema.problem())};
    QSaveFile out(file);  // whole or not at all, whoever else writes it at the same moment
    if (QDir().mkpath(QFileInfo(file).absolutePath()) && out.open(QIODevice::WriteOnly) &&
        out.write(stamp + *printed) == stamp.size() + printed->size())
        out.commit();
    return schema;
}

}  // namespace

// Here, not in trainerschema.cpp, because it is about where the schema comes from; the sweep
// spec fuzzer links trainerschema.cpp without the rest of core.
Parsed<TrainerSchema> TrainerSchema::load()
{
    const QString trainer = trainerExecutable();
    if (!trainer.isEmpty())
        return loadCached(trainer);
    if (!QCoreApplication::instance())
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
