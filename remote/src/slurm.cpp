// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/slurm.h"

#include "logging.h"
#include "orrery/remote/shell.h"

#include <QFileInfo>

namespace orrery::remote {

namespace {

// Slurm commands are quick; a cluster whose controller does not answer in this long is
// effectively down for this tick (Slurm's own MessageTimeout default is 10 s).
constexpr std::chrono::seconds kSlurmTimeout{60};

QByteArray option(const char *name, const QString &value)
{
    return QByteArray(name) + '=' + value.toUtf8();
}

void requireJobId(const QString &id)
{
    if (!slurm::isJobId(id))
        throw RemoteError(RemoteError::Kind::Slurm, QStringLiteral("'%1' is not a Slurm job id").arg(id));
}

}  // namespace

SlurmClient::SlurmClient(Connection &connection) : m_connection(connection)
{ }

ExecResult SlurmClient::run(const QList<QByteArray> &argv, bool allowFailure)
{
    ExecResult result = m_connection.exec(commandLine(argv), kSlurmTimeout).result();
    if (result.exitStatus != 0 && !allowFailure)
        refuse(argv, result);
    return result;
}

void SlurmClient::refuse(const QList<QByteArray> &argv, const ExecResult &result)
{
    const QString text = QString::fromUtf8(result.err.isEmpty() ? result.out : result.err).trimmed();
    throw RemoteError(RemoteError::Kind::Slurm,
                      QStringLiteral("%1: `%2` failed (exit %3): %4")
                          .arg(m_connection.endpoint().host, QString::fromUtf8(argv.join(' ')))
                          .arg(result.exitStatus)
                          .arg(text.isEmpty() ? QStringLiteral("no message") : text));
}

template<typename T>
T SlurmClient::parsed(const char *command, slurm::Parsed<T> result)
{
    if (!result.ok())
        throw RemoteError(RemoteError::Kind::Slurm,
                          QStringLiteral("%1: cannot read the output of %2: %3")
                              .arg(m_connection.endpoint().host, QLatin1String(command), result.error));
    return std::move(result.value);
}

QString SlurmClient::version()
{
    return parsed("sinfo -V", slurm::parseVersion(run({"sinfo", "-V"}).out));
}

slurm::Submitted SlurmClient::submit(const QString &remotePath, const QByteArray &script,
                                     const SubmitOptions &options)
{
    if (!remotePath.startsWith(QLatin1Char('/')))
        throw RemoteError(RemoteError::Kind::Slurm,
                          QStringLiteral("the script path '%1' must be absolute").arg(remotePath));
    QList<QByteArray> argv{"sbatch", "--parsable"};
    if (!options.jobName.isEmpty())
        argv << option("--job-name", options.jobName);
    if (!options.partition.isEmpty())
        argv << option("--partition", options.partition);
    if (!options.account.isEmpty())
        argv << option("--account", options.account);
    if (!options.array.isEmpty())
        argv << option("--array",
                       options.throttle > 0 ? QStringLiteral("%1%%2").arg(options.array).arg(options.throttle)
                                            : options.array);
    if (!options.output.isEmpty())
        argv << option("--output", options.output);
    if (!options.error.isEmpty())
        argv << option("--error", options.error);
    if (!options.workDir.isEmpty())
        argv << option("--chdir", options.workDir);
    for (const QString &extra : options.extra) {
        if (!extra.startsWith(QLatin1String("--")))
            throw RemoteError(RemoteError::Kind::Slurm,
                              QStringLiteral("sbatch option '%1' must start with --").arg(extra));
        argv << extra.toUtf8();
    }
    argv << remotePath.toUtf8();

    const QString dir = QFileInfo(remotePath).path();
    m_connection
        .run([&](Session &session) {
            session.makeDirectories(dir);
            session.writeFile(remotePath, script, 0755);
        })
        .waitForFinished();
    return parsed("sbatch --parsable", slurm::parseSbatch(run(argv).out));
}

QList<slurm::Job> SlurmClient::jobs(const QStringList &jobIds)
{
    if (jobIds.isEmpty())
        return {};
    for (const QString &id : jobIds)
        requireJobId(id);
    const QList<QByteArray> argv{"squeue",
                                 "--noheader",
                                 "--array",
                                 "--states=all",
                                 option("--jobs", jobIds.join(QLatin1Char(','))),
                                 "--format=" + slurm::squeueFormat()};
    const ExecResult result = run(argv, true);
    if (result.exitStatus != 0) {
        // Every listed job already forgotten: Slurm calls that an error; for a poll it is "none".
        if (result.err.contains("Invalid job id"))
            return {};
        refuse(argv, result);
    }
    return parsed("squeue", slurm::parseSqueue(result.out));
}

QList<slurm::Job> SlurmClient::myQueue()
{
    return queue(true);
}

QList<slurm::Job> SlurmClient::queue(bool mineOnly)
{
    QList<QByteArray> argv{"squeue", "--noheader"};
    if (mineOnly)
        argv << "--me";
    argv << "--format=" + slurm::squeueNamedFormat();
    return parsed(mineOnly ? "squeue --me" : "squeue", slurm::parseSqueueNamed(run(argv).out));
}

slurm::ClusterInfo SlurmClient::clusterInfo()
{
    return parsed(
        "sinfo",
        slurm::parseSinfo(run({"sinfo", "--noheader", "--Node", "--Format=" + slurm::sinfoFormat()}).out));
}

slurm::Record SlurmClient::show(const char *entity, const QString &name)
{
    QList<slurm::Record> records =
        parsed("scontrol show",
               slurm::parseScontrol(run({"scontrol", "--oneliner", "show", entity, name.toUtf8()}).out));
    if (records.isEmpty())
        throw RemoteError(RemoteError::Kind::Slurm,
                          QStringLiteral("%1 %2 is not known to Slurm").arg(QLatin1String(entity), name));
    return records.front();
}

slurm::Record SlurmClient::showJob(const QString &jobId)
{
    requireJobId(jobId);
    return show("job", jobId);
}

slurm::Record SlurmClient::showNode(const QString &node)
{
    if (node.isEmpty() || node.startsWith(QLatin1Char('-')))
        throw RemoteError(RemoteError::Kind::Slurm, QStringLiteral("'%1' is not a node name").arg(node));
    return show("node", node);
}

void SlurmClient::cancel(const QString &jobId)
{
    requireJobId(jobId);
    run({"scancel", jobId.toUtf8()});
}

void SlurmClient::setArrayThrottle(const QString &arrayJobId, int maxRunning)
{
    requireJobId(arrayJobId);
    if (maxRunning < 0)
        throw RemoteError(RemoteError::Kind::Slurm, QStringLiteral("a throttle cannot be negative"));
    run({"scontrol", "update", option("JobId", arrayJobId),
         option("ArrayTaskThrottle", QString::number(maxRunning))});
}

bool SlurmClient::hasAccounting()
{
    if (!m_accounting) {
        // Without accounting sacct exits 1 ("Slurm accounting storage is disabled").
        const ExecResult r =
            run({"sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID", "--starttime=now"},
                true);
        m_accounting = r.exitStatus == 0;
        qCInfo(lcRemote) << m_connection.endpoint().host << "accounting:" << *m_accounting;
    }
    return *m_accounting;
}

std::optional<QList<slurm::Accounting>> SlurmClient::accounting(const QStringList &jobIds)
{
    if (!hasAccounting())
        return std::nullopt;
    if (jobIds.isEmpty())
        return QList<slurm::Accounting>();
    for (const QString &id : jobIds)
        requireJobId(id);
    return parsed("sacct",
                  slurm::parseSacct(run({"sacct", "--noheader", "--parsable2", "--allocations",
                                         option("--jobs", jobIds.join(QLatin1Char(','))),
                                         "--format=" + slurm::sacctFormat()})
                                        .out));
}

}  // namespace orrery::remote
