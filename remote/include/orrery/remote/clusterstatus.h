// SPDX-License-Identifier: GPL-3.0-or-later
//
// A cluster at a glance, polled the one way every face polls it (ARCHITECTURE.md "Operations:
// written once, called by every face"): one `sinfo` (partitions, nodes, GPUs) and, where asked,
// one `squeue` (the user's jobs or everyone's), with what a failure means for the link. The
// Cluster tab (through the window's ClusterHub, on its shared connection), the terminal monitor
// and `orrery cluster nodes` call it and differ only in how they show the result. The node rule
// (which of Slurm's states take work) is nodes.h's nodeCondition.
#pragma once

#include "orrery/remote/connection.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/slurmparse.h"

#include <QList>
#include <QString>

#include <exception>
#include <memory>

namespace orrery::remote {

// What a failed call means for the link to the cluster.
enum class LinkFailure {
    None,
    HostKeyChanged,  // known_hosts holds another key: refused until a person looks (a warning)
    NeedsYou,  // a person must act: an unknown host key, no key or password accepted
    Lost,  // the link failed (refused, reset, timed out, a channel lost): the next call tries again
    Refused,  // a command was refused (Slurm, SFTP): the link itself is fine
};
// Of any exception a remote call threw (one that is not a RemoteError: Lost).
LinkFailure linkFailure(const std::exception &e);
// What a terminal face adds to a failure a person must settle: " (`orrery cluster test NAME`
// settles it)"; empty for the others.
QString settleHint(LinkFailure failure, const QString &cluster);

// Which queue a poll reads.
enum class QueueScope { None, Mine, Everyone };

struct ClusterStatus {
    slurm::ClusterInfo info;
    QList<slurm::Job> queue;
    bool mineOnly = true;  // the queue is the user's jobs only
    qint64 tookMs = 0;  // the poll's round trips together
    QString error;  // empty: info and queue are fresh
    LinkFailure failure = LinkFailure::None;
    std::exception_ptr exception;  // what the poll threw (a face that shows dialogs reads it)

    bool ok() const { return error.isEmpty(); }
};

// One poll through `connection` (connecting first where it is not connected). Never throws but
// std::bad_alloc: a failure is in `error` and `failure`.
ClusterStatus pollCluster(Connection &connection, QueueScope queue);

// Where a job of the queue writes its standard output and error (`scontrol show job`: StdOut,
// StdErr; one path when both go to one file): the Cluster tab's "Show logs" of a job. Throws
// RemoteError; std::runtime_error when Slurm names neither.
QStringList jobLogPaths(Connection &connection, const QString &jobId);

// A cluster's status polled over a connection of its own, kept between polls (the monitor's
// worker, a CLI command). Use from one thread.
class ClusterWatch {
public:
    explicit ClusterWatch(const ClusterProfile &profile, AuthCallbacks prompts = {},
                          ConnectionOptions options = {});
    ~ClusterWatch();
    ClusterWatch(const ClusterWatch &) = delete;
    ClusterWatch &operator=(const ClusterWatch &) = delete;

    ClusterStatus poll(QueueScope queue);

private:
    std::unique_ptr<Connection> m_connection;
};

}  // namespace orrery::remote
