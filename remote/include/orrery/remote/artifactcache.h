// SPDX-License-Identifier: GPL-3.0-or-later
//
// The local cache of files that runs on a cluster wrote (sample videos, contact sheets): each
// fetched once over SFTP, kept under the user's cache directory, and found again without any
// network. The store records the copy (TrackingStore::setArtifactLocalCopy) so every face sees it.
//
// Layout: <root>/<16 hex of SHA-256 over cluster and remote path>/<file name>, so two clusters'
// run directories never collide and nothing read from a cluster chooses a local path. Cheap to
// construct; thread-safe (it holds only the root).
#pragma once

#include "orrery/core/store.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/session.h"

#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace orrery::remote {

class ArtifactCache {
public:
    explicit ArtifactCache(QString root = defaultRoot());
    // <QStandardPaths::CacheLocation>/artifacts (~/.cache/orrery/artifacts); $ORRERY_CACHE_DIR
    // replaces the cache location.
    static QString defaultRoot();
    const QString &root() const { return m_root; }

    QString localPathFor(const QString &cluster, const QString &remotePath) const;
    // A complete local file for `artifact`, without touching the network: the copy the store
    // recorded, the file itself when the run was local, or this cache's copy. nullopt: fetch it.
    std::optional<QString> local(const QString &cluster, const core::Artifact &artifact) const;
    // Downloads the artifact into the cache (written aside, renamed when complete: a cancelled
    // or dropped transfer leaves nothing) and returns the local path. Throws RemoteError.
    QString fetch(Session &session, const QString &cluster, const core::Artifact &artifact,
                  const Transfer &transfer = {}) const;
    // The same on `connection`'s thread (the window's connection to the cluster): the future
    // brings the local path, or the RemoteError. `progress` runs on the connection's thread;
    // setting `*cancel` stops the transfer at its next chunk (kept alive by the transfer).
    QFuture<QString> fetchOver(Connection &connection, const QString &cluster, const core::Artifact &artifact,
                               std::function<void(qint64 done, qint64 total)> progress,
                               std::shared_ptr<const std::atomic<bool>> cancel) const;

private:
    QString m_root;
};

}  // namespace orrery::remote
