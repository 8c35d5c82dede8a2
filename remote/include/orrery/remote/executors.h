// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where a sweep runs, by its cluster name: this machine (core::LocalExecutor, with the `orrery`
// CLI as the supervisor, whichever face asks) or a cluster of the user's profiles
// (SlurmExecutor over one SSH connection, kept open while the Executors object lives, so follow
// ticks reuse it). The CLI, the monitor and the GUI all map names to executors here.
#pragma once

#include "orrery/core/executor.h"
#include "orrery/remote/deploy.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/session.h"

#include <QString>

#include <functional>
#include <map>
#include <memory>

namespace orrery::remote {

class Executors {
public:
    // `callbacks` answer the SSH prompts (the terminal's for CLI commands, dialogs in the GUI,
    // none in the monitor). They run on the thread that calls get().
    explicit Executors(AuthCallbacks callbacks = {});
    // The connections come from the caller (the GUI's ClusterHub: one connection per cluster,
    // shared by every part of the window, with its prompts); nullptr with *problem set when there
    // is none. Such a connection is not closed when this object goes.
    using ConnectionSource =
        std::function<std::shared_ptr<Connection>(const ClusterProfile &profile, QString *problem)>;
    explicit Executors(ConnectionSource connections);
    ~Executors();
    // A cluster without a trainer path runs the trainer `orrery cluster deploy` builds. By
    // default get() assumes it is there (following a sweep launches retries with it; no remote
    // command); after deployIfMissing(), get() deploys it first when it is not (sweep submit),
    // reporting the build through `progress`.
    // `cancelled` (optional) is polled between the build's steps; true ends it.
    void deployIfMissing(std::function<void(const QString &cluster, const DeployProgress &)> progress,
                         std::function<bool()> cancelled = {});
    // The executor for a sweep's cluster ("" or "local": this machine); nullptr with *problem
    // when the profile is missing or the cluster cannot be reached. `unreachable` (optional) is
    // set when the cause may pass by itself: the connection failed, dropped or timed out (not
    // authentication, a host key or a missing profile).
    core::Executor *get(const QString &cluster, QString *problem, bool *unreachable = nullptr);

private:
    struct Cluster;
    AuthCallbacks m_callbacks;
    ConnectionSource m_connections;
    bool m_deploy = false;
    std::function<void(const QString &, const DeployProgress &)> m_deployProgress;
    std::function<bool()> m_deployCancelled;
    std::unique_ptr<core::Executor> m_local;
    std::map<QString, std::unique_ptr<Cluster>> m_clusters;
};

}  // namespace orrery::remote
