// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where the CLI's sweeps run: this machine (core::LocalExecutor, with this `orrery` as the
// supervisor) or a cluster of the user's profiles (remote::SlurmExecutor over one SSH connection,
// kept open while the Executors object lives, so follow ticks reuse it).
#pragma once

#include "orrery/core/executor.h"
#include "orrery/remote/session.h"

#include <QString>

#include <map>
#include <memory>

namespace orrery::cli {

class Executors {
public:
    // `callbacks` answer the SSH prompts (the terminal's for commands; none in the monitor).
    explicit Executors(remote::AuthCallbacks callbacks = {});
    ~Executors();
    // The executor for a sweep's cluster ("" or "local": this machine); nullptr with *problem
    // when the profile is missing or the cluster cannot be reached.
    core::Executor *get(const QString &cluster, QString *problem);

private:
    struct Cluster;
    remote::AuthCallbacks m_callbacks;
    std::unique_ptr<core::Executor> m_local;
    std::map<QString, std::unique_ptr<Cluster>> m_clusters;
};

}  // namespace orrery::cli
