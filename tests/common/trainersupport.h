// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// orrery-train as the trainer tests drive it: run it as a real process, read its run directory
// (events.jsonl, exit.json) and compare checkpoints through its own --inspect (tst_trainer and the
// tst_trainer_* tests).

#include "testsupport.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace orrery::test {

struct Result {
    int code = -1;
    QByteArray out, err;
};

inline QString trainer()
{
    return qEnvironmentVariable("ORRERY_TRAINER");
}

inline QString testConfig()
{
    return sourceFile(QStringLiteral("tests/trainer/test.yaml"));
}

// orrery-train's arguments for a run of the test model in `runDir` with `sets` (--set KEY=VALUE).
inline QStringList runArgs(const QString &runDir, const QStringList &sets = {})
{
    QStringList a{QStringLiteral("--config"), testConfig(), QStringLiteral("--run-dir"), runDir};
    for (const QString &s : sets)
        a << QStringLiteral("--set") << s;
    return a;
}

inline Result train(const QStringList &args, int timeoutMs = 300'000)
{
    QProcess p;
    p.start(trainer(), args);
    if (!p.waitForFinished(timeoutMs)) {  // ended with the test, never left behind
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

inline QList<QJsonObject> events(const QString &runDir)
{
    QFile f(runDir + QStringLiteral("/events.jsonl"));
    QList<QJsonObject> out;
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (!line.isEmpty())
            out.push_back(QJsonDocument::fromJson(line).object());
    return out;
}

// step → the metric `name` (train/loss, eval/loss, ...), from every metrics event that has it.
inline QMap<qint64, double> metric(const QString &runDir, const QString &name = QStringLiteral("train/loss"))
{
    QMap<qint64, double> out;
    for (const QJsonObject &e : events(runDir))
        if (e[QLatin1String("kind")].toString() == QLatin1String("metrics") &&
            e[QLatin1String("values")].toObject().contains(name))
            out[e[QLatin1String("step")].toInteger()] = e[QLatin1String("values")][name].toDouble();
    return out;
}
// The run's tag `key` as its last `tags` event set it (the trainer names the kernels it ran:
// orrery.train.attention, orrery.train.fused_modulation); empty if none did.
inline QString runTag(const QString &runDir, const QString &key)
{
    QString value;
    for (const QJsonObject &e : events(runDir))
        if (e[QLatin1String("kind")].toString() == QLatin1String("tags") &&
            e[QLatin1String("tags")].toObject().contains(key))
            value = e[QLatin1String("tags")][key].toString();
    return value;
}

inline QMap<qint64, double> losses(const QString &runDir)
{
    return metric(runDir);
}

inline QJsonObject exitJson(const QString &runDir)
{
    QFile f(runDir + QStringLiteral("/exit.json"));
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}

// A checkpoint's tensors as --inspect shows them (name → sum, norm, ...).
inline QJsonObject inspect(const QString &ckpt)
{
    const Result r = train({QStringLiteral("--inspect"), ckpt});
    return QJsonDocument::fromJson(r.out).object()[QLatin1String("tensors")].toObject();
}

// The tensors of two checkpoints' --inspect under `prefix`: (key, a's, b's), b's empty where b
// lacks it.
struct TensorPair {
    QString key;
    QJsonObject a, b;
};
inline QList<TensorPair> tensorPairs(const QJsonObject &a, const QJsonObject &b, const QString &prefix)
{
    QList<TensorPair> out;
    for (auto it = a.begin(); it != a.end(); ++it)
        if (it.key().startsWith(prefix))
            out.push_back({it.key(), it.value().toObject(), b[it.key()].toObject()});
    return out;
}

// Largest relative difference of the tensors' norms and sums (or only `fields`; those named from
// `prefix`) between two checkpoints; infinity when b lacks one of a's tensors or none was compared.
inline double maxDifference(const QJsonObject &a, const QJsonObject &b, const QString &prefix,
                            std::initializer_list<const char *> fields = {"norm", "sum"})
{
    double worst = 0;
    const QList<TensorPair> pairs = tensorPairs(a, b, prefix);
    for (const TensorPair &t : pairs) {
        if (t.b.isEmpty())
            return INFINITY;
        for (const char *field : fields) {
            const double u = t.a[QLatin1String(field)].toDouble(), v = t.b[QLatin1String(field)].toDouble();
            worst = std::max(worst, std::abs(u - v) / std::max(1e-3, std::abs(u)));
        }
    }
    return pairs.isEmpty() ? INFINITY : worst;
}

}  // namespace orrery::test
