// SPDX-License-Identifier: GPL-3.0-or-later
#include "executors.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/paths.h"

#include <QCoreApplication>

namespace orrery::cli {

struct Executors::Cluster {
    std::unique_ptr<core::Executor> executor;
};

Executors::Executors() = default;
Executors::~Executors() = default;

core::Executor *Executors::get(const QString &cluster, QString *problem)
{
    if (cluster.isEmpty() || cluster == QLatin1String("local")) {
        if (!m_local)
            m_local = std::make_unique<core::LocalExecutor>(core::trainerExecutable(),
                                                            QCoreApplication::applicationFilePath());
        return m_local.get();
    }
    *problem = QStringLiteral("cluster '%1': the Slurm executor is not available in this build").arg(cluster);
    return nullptr;
}

}  // namespace orrery::cli
