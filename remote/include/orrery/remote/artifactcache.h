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
#include "orrery/remote/session.h"

#include <QString>

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

private:
    QString m_root;
};

}  // namespace orrery::remote
