// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/logreader.h"

#include "orrery/core/localexecutor.h"
#include "orrery/remote/error.h"
#include "orrery/remote/sweepoperations.h"

namespace orrery::remote {

namespace {

// Runs a read, its failures as OperationError: a connection lost or refused is Unavailable (the
// view's next poll tries again), anything else Failed.
template<typename F>
auto asOperation(const QString &cluster, F &&f) -> decltype(f())
{
    const auto where = [&](const char *what) {
        const QString text = QString::fromUtf8(what);
        return cluster.isEmpty() ? text : QStringLiteral("cluster '%1': %2").arg(cluster, text);
    };
    try {
        return f();
    } catch (const OperationError &) {
        throw;
    } catch (const RemoteError &e) {
        const bool unreachable =
            e.kind() == RemoteError::Kind::Connect || e.kind() == RemoteError::Kind::Timeout;
        throw OperationError(unreachable ? OperationError::Kind::Unavailable : OperationError::Kind::Failed,
                             where(e.what()));
    } catch (const std::bad_alloc &) {
        throw;
    } catch (const std::exception &e) {
        throw OperationError(OperationError::Kind::Failed, where(e.what()));
    }
}

}  // namespace

LogReader::LogReader(QString cluster, Executors::ConnectionSource connections)
    : m_cluster(std::move(cluster)), m_connections(std::move(connections))
{ }

LogReader::~LogReader() = default;

core::Executor &LogReader::executor()
{
    if (m_cluster.isEmpty() || m_cluster == QLatin1String("local")) {
        if (!m_local)
            m_local = std::make_unique<core::LocalExecutor>(QString(), QString(), QStringLiteral("/"));
        return *m_local;
    }
    if (!m_operations) {
        SweepOperations::Options options;
        options.connections = m_connections;
        m_operations = std::make_unique<SweepOperations>(std::move(options));
    }
    return m_operations->executor(m_cluster);
}

QList<core::LogRead> LogReader::read(const QList<core::LogReadJob> &jobs)
{
    return asOperation(m_cluster, [&] { return core::readLogFiles(executor(), jobs); });
}

core::LogTail LogReader::tail(core::LogTailer &tailer, const core::Sweep &sweep, const core::Trial &trial)
{
    return asOperation(m_cluster, [&] { return tailer.read(executor(), sweep, trial); });
}

}  // namespace orrery::remote
