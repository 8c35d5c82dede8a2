// SPDX-License-Identifier: GPL-3.0-or-later
#include "executors.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/paths.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/slurmexecutor.h"

#include <QCoreApplication>

namespace orrery::cli {

struct Executors::Cluster {
    std::unique_ptr<remote::Connection> connection;
    std::unique_ptr<remote::SlurmExecutor> executor;
};

Executors::Executors(remote::AuthCallbacks callbacks) : m_callbacks(std::move(callbacks))
{ }
Executors::~Executors() = default;

core::Executor *Executors::get(const QString &cluster, QString *problem)
{
    if (cluster.isEmpty() || cluster == QLatin1String("local")) {
        if (!m_local)
            m_local = std::make_unique<core::LocalExecutor>(core::trainerExecutable(),
                                                            QCoreApplication::applicationFilePath());
        return m_local.get();
    }
    if (auto it = m_clusters.find(cluster); it != m_clusters.end())
        return it->second->executor.get();
    try {
        const auto profile = remote::ProfileStore().find(cluster);
        if (!profile) {
            *problem = QStringLiteral("no cluster profile '%1' (`orrery cluster list`)").arg(cluster);
            return nullptr;
        }
        auto c = std::make_unique<Cluster>();
        c->connection = std::make_unique<remote::Connection>(profile->endpoint(), m_callbacks);
        c->connection->connect().waitForFinished();  // throws what connecting threw
        c->executor =
            std::make_unique<remote::SlurmExecutor>(*profile, *c->connection, core::configDirectory());
        return m_clusters.emplace(cluster, std::move(c)).first->second->executor.get();
    } catch (const std::exception &e) {
        *problem = QStringLiteral("cluster '%1': %2").arg(cluster, QString::fromUtf8(e.what()));
        return nullptr;
    }
}

}  // namespace orrery::cli
