// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/executors.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/paths.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/slurmexecutor.h"

namespace orrery::remote {

struct Executors::Cluster {
    std::unique_ptr<Connection> connection;
    std::unique_ptr<SlurmExecutor> executor;
};

Executors::Executors(AuthCallbacks callbacks) : m_callbacks(std::move(callbacks))
{ }
Executors::~Executors() = default;

core::Executor *Executors::get(const QString &cluster, QString *problem)
{
    if (cluster.isEmpty() || cluster == QLatin1String("local")) {
        if (!m_local) {
            const QString supervisor = core::cliExecutable();
            if (supervisor.isEmpty()) {
                *problem = QStringLiteral("the orrery program (the local sweeps' supervisor) is not "
                                          "installed beside this one nor on PATH; set ORRERY_CLI");
                return nullptr;
            }
            m_local = std::make_unique<core::LocalExecutor>(core::trainerExecutable(), supervisor);
        }
        return m_local.get();
    }
    if (auto it = m_clusters.find(cluster); it != m_clusters.end())
        return it->second->executor.get();
    try {
        const auto profile = ProfileStore().find(cluster);
        if (!profile) {
            *problem = QStringLiteral("no cluster profile '%1' (`orrery cluster list`)").arg(cluster);
            return nullptr;
        }
        auto c = std::make_unique<Cluster>();
        c->connection = std::make_unique<Connection>(profile->endpoint(), m_callbacks);
        c->connection->connect().waitForFinished();  // throws what connecting threw
        c->executor = std::make_unique<SlurmExecutor>(*profile, *c->connection, core::configDirectory());
        return m_clusters.emplace(cluster, std::move(c)).first->second->executor.get();
    } catch (const std::exception &e) {
        *problem = QStringLiteral("cluster '%1': %2").arg(cluster, QString::fromUtf8(e.what()));
        return nullptr;
    }
}

}  // namespace orrery::remote
