// SPDX-License-Identifier: GPL-3.0-or-later
//
// Brings the sample files of runs trained on a cluster to this machine for the Video tab: each
// file once (remote::ArtifactCache), over the window's connection to the cluster (ClusterHub:
// its own thread, so the window never waits on a silent cluster; its questions are the window's
// dialogs), and records the local copy in the store so every face sees it. Progress in bytes,
// one cancel for all transfers in flight. UI thread only; results come back as signals on it.
#pragma once

#include "orrery/core/store.h"
#include "orrery/remote/artifactcache.h"
#include "storewriter.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

namespace orrery::remote {
class Connection;
}

namespace orrery::gui {

class SampleFetcher : public QObject {
    Q_OBJECT
public:
    explicit SampleFetcher(QObject *parent = nullptr);
    ~SampleFetcher() override;

    // Where a cluster's connection comes from (the window's ClusterHub); unset: every fetch
    // fails with "no connection to the cluster".
    using ConnectionSource =
        std::function<std::shared_ptr<remote::Connection>(const QString &cluster, QString *error)>;
    void setConnectionSource(ConnectionSource source) { m_source = std::move(source); }
    // Where the local copies are recorded (the window's store writer); unset: nowhere (the cache
    // still finds them by path).
    void setWriter(StoreWriter *writer) { m_writer = writer; }
    const remote::ArtifactCache &cache() const { return m_cache; }

    // Starts fetching `artifact` of `run` from `cluster` unless it is already being fetched.
    void fetch(core::RunId run, const QString &cluster, const core::Artifact &artifact);
    bool isFetching(const QString &cluster, const QString &remotePath) const;
    int inFlight() const { return int(m_inFlight.size()); }
    // Transfers started so far (tests: a cached sample starts none).
    int started() const { return m_started; }
    // Stops every transfer in flight; each reports failed() with "cancelled".
    void cancel();

Q_SIGNALS:
    void fetched(core::RunId run, const QString &remotePath, const QString &localPath);
    void failed(core::RunId run, const QString &remotePath, const QString &message);
    // Bytes of the transfers in flight (total 0 while sizes are not known yet).
    void progress(qint64 done, qint64 total);

private:
    std::shared_ptr<remote::Connection> connection(const QString &cluster, QString *error);
    void report();

    remote::ArtifactCache m_cache;
    QPointer<StoreWriter> m_writer;
    ConnectionSource m_source;
    struct Transfer {
        qint64 done = 0, total = 0;
    };
    QHash<QString, std::shared_ptr<Transfer>> m_inFlight;  // by cluster + '\n' + remote path
    std::shared_ptr<std::atomic<bool>> m_cancel = std::make_shared<std::atomic<bool>>(false);
    int m_started = 0;
};

}  // namespace orrery::gui
