// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/artifactcache.h"

#include "orrery/remote/error.h"

#include "orrery/core/paths.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>

namespace orrery::remote {

namespace {

// The remote file's name, kept readable but made safe: a name read from a cluster never
// escapes the cache directory or carries control characters.
QString safeFileName(const QString &remotePath)
{
    QString name = QFileInfo(remotePath).fileName();
    for (QChar &c : name)
        if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != QLatin1Char('.') && c != QLatin1Char('-') &&
            c != QLatin1Char('_'))
            c = QLatin1Char('_');
    if (name.isEmpty() || name.startsWith(QLatin1Char('.')))
        name.prepend(QStringLiteral("file"));
    return name.left(120);
}

bool complete(const QString &path, qint64 size)
{
    const QFileInfo info(path);
    return info.isFile() && (size < 0 || info.size() == size);
}

}  // namespace

ArtifactCache::ArtifactCache(QString root) : m_root(std::move(root))
{ }

QString ArtifactCache::defaultRoot()
{
    return QDir(core::cacheDirectory()).filePath(QStringLiteral("artifacts"));
}

QString ArtifactCache::localPathFor(const QString &cluster, const QString &remotePath) const
{
    const QByteArray key = QCryptographicHash::hash((cluster + QLatin1Char('\n') + remotePath).toUtf8(),
                                                    QCryptographicHash::Sha256)
                               .toHex()
                               .left(16);
    return QDir(m_root).filePath(QString::fromLatin1(key) + QLatin1Char('/') + safeFileName(remotePath));
}

std::optional<QString> ArtifactCache::local(const QString &cluster, const core::Artifact &a) const
{
    if (!a.localPath.isEmpty() && complete(a.localPath, a.size))
        return a.localPath;
    if (cluster.isEmpty())  // a run on this machine: its file is where the trainer wrote it
        return complete(a.remotePath, -1) ? std::optional(a.remotePath) : std::nullopt;
    const QString cached = localPathFor(cluster, a.remotePath);
    if (complete(cached, a.size))
        return cached;
    return std::nullopt;
}

QString ArtifactCache::fetch(Session &session, const QString &cluster, const core::Artifact &a,
                             const Transfer &transfer) const
{
    if (a.remotePath.isEmpty())
        throw RemoteError(RemoteError::Kind::Sftp,
                          QStringLiteral("the artifact '%1' has no path on the cluster").arg(a.path));
    const QString target = localPathFor(cluster, a.remotePath);
    if (!QDir().mkpath(QFileInfo(target).path()))
        throw RemoteError(
            RemoteError::Kind::Sftp,
            QStringLiteral("cannot create the cache directory %1").arg(QFileInfo(target).path()));
    session.download(a.remotePath, target, transfer);
    return target;
}

QFuture<QString> ArtifactCache::fetchOver(Connection &connection, const QString &cluster,
                                          const core::Artifact &artifact,
                                          std::function<void(qint64 done, qint64 total)> progress,
                                          std::shared_ptr<const std::atomic<bool>> cancel) const
{
    return connection.run([cache = *this, cluster, artifact, progress = std::move(progress),
                           cancel = std::move(cancel)](Session &session) {
        return cache.fetch(session, cluster, artifact, Transfer{progress, cancel.get()});
    });
}

}  // namespace orrery::remote
