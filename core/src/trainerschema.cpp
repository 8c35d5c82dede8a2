// SPDX-License-Identifier: GPL-3.0-or-later
//
// The trainer's config schema, as `orrery-train --print-schema --json` prints it.
#include "orrery/core/sweepspec.h"

#include "textutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <memory>
#include <vector>

namespace orrery::core {

QString toString(ConfigKey::Type type)
{
    switch (type) {
    case ConfigKey::Type::Int:
        return QStringLiteral("int");
    case ConfigKey::Type::Float:
        return QStringLiteral("float");
    case ConfigKey::Type::Bool:
        return QStringLiteral("bool");
    case ConfigKey::Type::String:
        return QStringLiteral("string");
    }
    return {};
}

Parsed<TrainerSchema> TrainerSchema::fromJson(const QByteArray &json)
{
    QJsonParseError pe{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isArray())
        return Problem{QStringLiteral("the trainer's schema is not a JSON array: %1").arg(pe.errorString())};
    TrainerSchema schema;
    for (const QJsonValue &v : doc.array()) {
        const QJsonObject o = v.toObject();
        ConfigKey k;
        k.key = o.value(QLatin1String("key")).toString();
        const QString type = o.value(QLatin1String("type")).toString();
        if (type == QLatin1String("int"))
            k.type = ConfigKey::Type::Int;
        else if (type == QLatin1String("float"))
            k.type = ConfigKey::Type::Float;
        else if (type == QLatin1String("bool"))
            k.type = ConfigKey::Type::Bool;
        else if (type == QLatin1String("string"))
            k.type = ConfigKey::Type::String;
        else
            return Problem{QStringLiteral("the trainer's schema has key %1 of unknown type %2")
                               .arg(quoted(k.key), quoted(type))};
        if (k.key.isEmpty())
            return Problem{QStringLiteral("the trainer's schema has an entry without a key")};
        k.defaultValue = o.value(QLatin1String("default")).toVariant();
        if (o.contains(QLatin1String("min")))
            k.min = o.value(QLatin1String("min")).toDouble();
        if (o.contains(QLatin1String("max")))
            k.max = o.value(QLatin1String("max")).toDouble();
        for (const QJsonValue &c : o.value(QLatin1String("choices")).toArray())
            k.choices << c.toString();
        k.meaning = o.value(QLatin1String("meaning")).toString();
        schema.m_keys.append(k);
    }
    if (schema.m_keys.isEmpty())
        return Problem{QStringLiteral("the trainer's schema lists no keys")};
    return schema;
}

Parsed<TrainerSchema> TrainerSchema::fromTrainer(const QString &trainer)
{
    const Parsed<QByteArray> printed = printedBy(trainer);
    if (!printed)
        return Problem{printed.problem()};
    auto schema = fromJson(*printed);
    if (!schema)
        return Problem{QStringLiteral("%1: %2").arg(trainer, schema.problem())};
    return schema;
}

Parsed<QByteArray> TrainerSchema::printedBy(const QString &trainer)
{
    if (trainer.isEmpty())
        return Problem{QStringLiteral("orrery-train was not found (set ORRERY_TRAINER or put it on PATH)")};
    QProcess p;
    p.start(trainer, {QStringLiteral("--print-schema"), QStringLiteral("--json")});
    // The trainer prints a static table: seconds are plenty even on a loaded machine. Asked once
    // more after a timeout: this process may have been stopped meanwhile (a laptop's lid closed,
    // bench/chaos.py's follower-stop), and the wait counted the time it slept.
    if (!p.waitForFinished(60000) && p.error() == QProcess::Timedout) {
        p.kill();
        p.waitForFinished(1000);
        p.start(trainer, {QStringLiteral("--print-schema"), QStringLiteral("--json")});
        p.waitForFinished(60000);
    }
    if (p.state() != QProcess::NotRunning || p.error() == QProcess::FailedToStart ||
        p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const QString failed =
            QStringLiteral("`%1 --print-schema --json` failed: %2%3")
                .arg(trainer, p.errorString(), QString::fromUtf8(p.readAllStandardError()).trimmed());
        p.kill();
        p.waitForFinished(1000);
        return Problem{failed};
    }
    return p.readAllStandardOutput();
}

namespace {

// The trainer's verdict on the config at `path`: waits for `p`, its check, to end.
QString verdictOf(QProcess &p, const QString &trainer, const QString &path)
{
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit) {
        p.kill();
        p.waitForFinished(1000);
        return QStringLiteral("`%1 --check-config` did not finish: %2").arg(trainer, p.errorString());
    }
    if (p.exitCode() == 0)
        return {};
    // The trainer names the temporary file; the caller names the trial.
    QString message = QString::fromUtf8(p.readAll()).trimmed();
    message.remove(QStringLiteral("orrery-train: "));
    message.replace(path, QStringLiteral("trial.yaml"));
    return escapeControl(message.isEmpty() ? QStringLiteral("rejected (status %1)").arg(p.exitCode())
                                           : message);
}

}  // namespace

QStringList checkTrialConfigs(const QString &trainer, const QList<QByteArray> &configs)
{
    QStringList verdicts;
    QTemporaryDir dir;
    if (!dir.isValid()) {
        for (qsizetype i = 0; i < configs.size(); ++i)
            verdicts << QStringLiteral("cannot create a temporary directory to check the config");
        return verdicts;
    }
    // As many checks at once as there are cores, not one process per config: each loads LibTorch
    // and builds the model (about 0.5 GB for the tiny configs, 4 GB for dit-large), and a submit
    // checks up to kTrainerChecked trials.
    const qsizetype window = std::max(1, QThread::idealThreadCount());
    for (qsizetype first = 0; first < configs.size(); first += window) {
        const qsizetype last = std::min(configs.size(), first + window);
        std::vector<std::unique_ptr<QProcess>> processes;
        for (qsizetype i = first; i < last; ++i) {
            QFile f(dir.filePath(QStringLiteral("trial-%1.yaml").arg(i)));
            if (!f.open(QIODevice::WriteOnly) || f.write(configs[i]) != configs[i].size()) {
                processes.push_back(nullptr);
                continue;
            }
            f.close();
            auto p = std::make_unique<QProcess>();
            p->setProcessChannelMode(QProcess::MergedChannels);
            p->start(trainer, {QStringLiteral("--check-config"), QStringLiteral("--config"), f.fileName()});
            processes.push_back(std::move(p));
        }
        for (qsizetype i = first; i < last; ++i) {
            QProcess *p = processes[std::size_t(i - first)].get();
            verdicts << (p ? verdictOf(*p, trainer, dir.filePath(QStringLiteral("trial-%1.yaml").arg(i)))
                           : QStringLiteral("cannot write the trial config to check it"));
        }
    }
    return verdicts;
}

const ConfigKey *TrainerSchema::find(const QString &key) const
{
    for (const ConfigKey &k : m_keys)
        if (k.key == key)
            return &k;
    return nullptr;
}

QString TrainerSchema::closest(const QString &key) const
{
    QStringList names;
    for (const ConfigKey &k : m_keys)
        names << k.key;
    return closestWord(key, names);
}

}  // namespace orrery::core
