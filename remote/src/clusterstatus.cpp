// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/clusterstatus.h"

#include "orrery/remote/error.h"
#include "orrery/remote/slurm.h"

#include <QElapsedTimer>

#include <stdexcept>

namespace orrery::remote {

LinkFailure linkFailure(const std::exception &e)
{
    const auto *remote = dynamic_cast<const RemoteError *>(&e);
    if (!remote)
        return LinkFailure::Lost;
    switch (remote->kind()) {
    case RemoteError::Kind::HostKeyChanged:
        return LinkFailure::HostKeyChanged;
    case RemoteError::Kind::HostKeyUnknown:
    case RemoteError::Kind::Auth:
        return LinkFailure::NeedsYou;
    case RemoteError::Kind::Connect:
    case RemoteError::Kind::Timeout:
    case RemoteError::Kind::Channel:
        return LinkFailure::Lost;
    case RemoteError::Kind::Sftp:
    case RemoteError::Kind::Cancelled:
    case RemoteError::Kind::Slurm:
        break;
    }
    return LinkFailure::Refused;
}

QString settleHint(LinkFailure failure, const QString &cluster)
{
    if (failure != LinkFailure::HostKeyChanged && failure != LinkFailure::NeedsYou)
        return {};
    return QStringLiteral(" (`orrery cluster test %1` settles it)").arg(cluster);
}

ClusterStatus pollCluster(Connection &connection, QueueScope queue)
{
    ClusterStatus status;
    status.mineOnly = queue != QueueScope::Everyone;
    QElapsedTimer clock;
    clock.start();
    try {
        SlurmClient client(connection);
        status.info = client.clusterInfo();
        if (queue != QueueScope::None)
            status.queue = client.queue(queue == QueueScope::Mine);
    } catch (const std::bad_alloc &) {
        throw;
    } catch (const std::exception &e) {
        status.error = QString::fromUtf8(e.what());
        status.failure = linkFailure(e);
        status.exception = std::current_exception();
    }
    status.tookMs = clock.elapsed();
    return status;
}

QStringList jobLogPaths(Connection &connection, const QString &jobId)
{
    const slurm::Record job = SlurmClient(connection).showJob(jobId);
    QStringList paths;
    for (const char *key : {"StdOut", "StdErr"}) {
        const QString path = job.value(QLatin1String(key));
        if (!path.isEmpty() && !paths.contains(path))
            paths << path;
    }
    if (paths.isEmpty())
        throw std::runtime_error(
            QStringLiteral("Slurm does not say where job %1 writes").arg(jobId).toStdString());
    return paths;
}

ClusterWatch::ClusterWatch(const ClusterProfile &profile, AuthCallbacks prompts, ConnectionOptions options)
    : m_connection(std::make_unique<Connection>(profile.endpoint(), std::move(prompts), options))
{ }

ClusterWatch::~ClusterWatch() = default;

ClusterStatus ClusterWatch::poll(QueueScope queue)
{
    return pollCluster(*m_connection, queue);
}

}  // namespace orrery::remote
