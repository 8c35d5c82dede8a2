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
    std::shared_ptr<Connection> connection;
    std::unique_ptr<SlurmExecutor> executor;
};

Executors::Executors(AuthCallbacks callbacks) : m_callbacks(std::move(callbacks))
{ }
Executors::Executors(ConnectionSource connections) : m_connections(std::move(connections))
{ }
Executors::~Executors() = default;

void Executors::deployIfMissing(std::function<void(const QString &, const DeployProgress &)> progress,
                                std::function<bool()> cancelled)
{
    m_deploy = true;
    m_deployProgress = std::move(progress);
    m_deployCancelled = std::move(cancelled);
}

core::Executor *Executors::get(const QString &cluster, QString *problem, bool *unreachable)
{
    if (unreachable)
        *unreachable = false;
    if (cluster.isEmpty() || cluster == QLatin1String("local")) {
        if (!m_local) {
            const QString supervisor = core::cliExecutable();
            if (supervisor.isEmpty()) {
                *problem = QStringLiteral("the orrery program (the local sweeps' supervisor) is not "
                                          "installed beside this one nor on PATH; set ORRERY_CLI");
                return nullptr;
            }
            // Without orrery-train the executor still runs sweeps of the user's own command and
            // reads any trial's logs; launching the bundled trainer's trials says what is missing.
            m_local = std::make_unique<core::LocalExecutor>(core::trainerExecutable(), supervisor);
        }
        return m_local.get();
    }
    if (auto it = m_clusters.find(cluster); it != m_clusters.end())
        return it->second->executor.get();
    try {
        auto profile = ProfileStore().find(cluster);
        if (!profile) {
            *problem = QStringLiteral("no cluster profile '%1' (`orrery cluster list`)").arg(cluster);
            return nullptr;
        }
        auto c = std::make_unique<Cluster>();
        if (m_connections) {
            c->connection = m_connections(*profile, problem);
            if (!c->connection)
                return nullptr;
        } else {
            c->connection = std::make_shared<Connection>(profile->endpoint(), m_callbacks);
        }
        c->connection->connect().waitForFinished();  // throws what connecting threw
        if (profile->trainerPath.isEmpty())  // the deployed trainer's path must be absolute
            *profile = withAbsoluteRemoteRoot(*profile, *c->connection);
        if (profile->trainerPath.isEmpty() && m_deploy) {
            const std::optional<TrainerSource> source = TrainerSource::locate(problem);
            if (!source)
                return nullptr;
            DeployOptions options;
            if (m_deployProgress)
                options.progress = [&](const DeployProgress &p) { m_deployProgress(cluster, p); };
            options.cancelled = m_deployCancelled;
            profile->trainerPath = deployTrainer(*profile, *c->connection, *source, options).trainerPath;
        } else {
            profile->trainerPath = sweepTrainerPath(*profile);
        }
        c->executor = std::make_unique<SlurmExecutor>(*profile, *c->connection, core::configDirectory());
        return m_clusters.emplace(cluster, std::move(c)).first->second->executor.get();
    } catch (const DeployError &e) {
        *problem = QStringLiteral("cluster '%1': %2").arg(cluster, e.describe());
        return nullptr;
    } catch (const RemoteError &e) {
        if (unreachable)
            *unreachable = e.kind() == RemoteError::Kind::Connect || e.kind() == RemoteError::Kind::Timeout;
        *problem = QStringLiteral("cluster '%1': %2").arg(cluster, QString::fromUtf8(e.what()));
        return nullptr;
    } catch (const std::exception &e) {
        *problem = QStringLiteral("cluster '%1': %2").arg(cluster, QString::fromUtf8(e.what()));
        return nullptr;
    }
}

}  // namespace orrery::remote
