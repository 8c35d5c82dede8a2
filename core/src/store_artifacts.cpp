// SPDX-License-Identifier: GPL-3.0-or-later
//
// Run artifacts as the video view reads them: a run's samples by step, the one nearest a step,
// and the local copy of a cluster's file once it has been fetched.
#include "storeimpl.h"

#include <QHash>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace orrery::core {

using sql::Stmt;

namespace {

Artifact readArtifact(const Stmt &s)
{
    return {qstr(s.text(0)), qstr(s.text(1)), s.int64(2), qstr(s.text(3)), qstr(s.text(4)), s.int64(5)};
}

}  // namespace

const Artifact *nearestSample(const QList<Artifact> &samples, qint64 step)
{
    const Artifact *best = nullptr;
    for (const Artifact &a : samples) {
        if (a.step < 0)
            continue;
        // Strictly closer only: on a tie the earlier step (seen first in step order) stays.
        if (!best || std::llabs(a.step - step) < std::llabs(best->step - step))
            best = &a;
    }
    return best;
}

QList<qint64> sampleSteps(const QList<QList<Artifact>> &runs)
{
    QList<qint64> steps;
    for (const auto &samples : runs)
        for (const Artifact &a : samples)
            if (a.step >= 0)
                steps.append(a.step);
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    return steps;
}

const Artifact *sampleAt(const QList<Artifact> &samples, qint64 step)
{
    for (const Artifact &a : samples)
        if (a.step == step)
            return &a;
    return nullptr;
}

QString mediaKey(const Artifact &sample)
{
    // An image series is a key of its own beside the videos of the same name (the trainer's
    // contact sheets next to its clips).
    if (sample.kind == QLatin1String("image")) {
        Artifact video = sample;
        video.kind = QStringLiteral("video");
        return mediaKey(video) + QStringLiteral(" (image)");
    }
    QString path = sample.path;
    for (const char *prefix :
         {"files/media/videos/", "files/media/images/", "tensorboard/", "media/videos/", "media/images/"})
        if (path.startsWith(QLatin1String(prefix))) {
            path = path.mid(qsizetype(std::strlen(prefix)));
            break;
        }
    const qsizetype slash = path.lastIndexOf(QLatin1Char('/'));
    const QString dir = slash < 0 ? QString() : path.left(slash);
    QString name = path.mid(slash + 1);
    if (const qsizetype mlflow = name.indexOf(QLatin1String("%step%")); mlflow > 0)  // MLflow's log_image
        return (dir.isEmpty() || dir == QLatin1String("images") ? QString() : dir + QLatin1Char('/')) +
            name.left(mlflow);
    if (const qsizetype dot = name.lastIndexOf(QLatin1Char('.')); dot > 0)
        name.truncate(dot);
    const QString step = QString::number(sample.step);
    // W&B: <key>_<step>_<hash>.
    static const QRegularExpression wandb(QStringLiteral("^(.+)_(\\d+)_[0-9a-f]{6,}$"));
    if (const auto m = wandb.match(name); m.hasMatch() && m.captured(2) == step)
        return (dir.isEmpty() ? QString() : dir + QLatin1Char('/')) + m.captured(1);
    // The trainer's and TensorBoard's step-<step> (also step_<step>, <step>) in a folder of their own.
    static const QRegularExpression stepOnly(QStringLiteral("^(?:step[-_]?)?0*(\\d+)$"));
    if (const auto m = stepOnly.match(name); m.hasMatch() && !dir.isEmpty() && m.captured(1) == step)
        return dir;
    // Anything else: the step's digits (as a whole number, zero-padded or not) become "*".
    const QRegularExpression digits(QStringLiteral("(?<!\\d)0*%1(?!\\d)").arg(step));
    name.replace(digits, QStringLiteral("*"));
    return (dir.isEmpty() ? QString() : dir + QLatin1Char('/')) + name;
}

QStringList mediaKeys(const QList<QList<Artifact>> &runs)
{
    QHash<QString, int> runsWith;
    QHash<QString, bool> video;
    for (const auto &samples : runs) {
        QSet<QString> seen;
        for (const Artifact &a : samples) {
            const QString key = mediaKey(a);
            if (!seen.contains(key)) {
                seen.insert(key);
                ++runsWith[key];
            }
            video[key] = video.value(key) || a.kind == QLatin1String("video");
        }
    }
    QStringList keys = runsWith.keys();
    std::sort(keys.begin(), keys.end(), [&](const QString &a, const QString &b) {
        if (runsWith[a] != runsWith[b])
            return runsWith[a] > runsWith[b];
        if (video[a] != video[b])
            return video[a];
        return a < b;
    });
    return keys;
}

QList<Artifact> TrackingStore::samples(RunId run, const QString &kind) const
{
    return d->guarded("samples", [&] {
        Stmt &s = d->stmt("SELECT path, kind, step, remote_path, local_path, size FROM artifacts "
                          "WHERE run_id = ? AND kind = ? AND step >= 0 ORDER BY step, path");
        s.bind(1, run).bind(2, utf8(kind));
        QList<Artifact> out;
        while (s.step())
            out.append(readArtifact(s));
        s.reset();
        return out;
    });
}

std::optional<Artifact> TrackingStore::sampleNear(RunId run, qint64 step, const QString &kind) const
{
    return d->guarded("sampleNear", [&]() -> std::optional<Artifact> {
        Stmt &s =
            d->stmt("SELECT path, kind, step, remote_path, local_path, size FROM artifacts "
                    "WHERE run_id = ? AND kind = ? AND step >= 0 ORDER BY abs(step - ?), step, path LIMIT 1");
        s.bind(1, run).bind(2, utf8(kind)).bind(3, step);
        std::optional<Artifact> out;
        if (s.step())
            out = readArtifact(s);
        s.reset();
        return out;
    });
}

bool TrackingStore::setArtifactLocalCopy(RunId run, const QString &path, const QString &localPath,
                                         qint64 size)
{
    return d->guarded("setArtifactLocalCopy", [&] {
        Impl::Tx tx(*d);
        Stmt &s = d->stmt(
            "UPDATE artifacts SET local_path = ?, size = ? WHERE run_id = ? AND path = ? RETURNING 1");
        s.bind(1, utf8(localPath)).bind(2, size).bind(3, run).bind(4, utf8(path));
        const bool found = s.step();
        s.reset();
        tx.commit();
        return found;
    });
}

QString TrackingStore::clusterOf(RunId run) const
{
    return d->guarded("clusterOf", [&] {
        Stmt &s = d->stmt("SELECT w.cluster FROM trials t JOIN sweeps w ON w.sweep_id = t.sweep_id "
                          "WHERE t.run_id = ? ORDER BY t.attempt DESC LIMIT 1");
        s.bind(1, run);
        QString cluster;
        if (s.step())
            cluster = qstr(s.text(0));
        s.reset();
        return cluster;
    });
}

}  // namespace orrery::core
