// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/remote/connection.h"
#include "orrery/remote/slurmparse.h"

#include <QStringList>

#include <optional>

namespace orrery::remote {

// What one sbatch submission asks for. Values are passed as "--opt=value" (never as a separate
// argument that could be read as an option) and quoted by remote::commandLine.
struct SubmitOptions {
    QString jobName;
    QString partition;
    QString account;
    QString array;  // "0-9" or "0,3,7"; empty: not an array
    int throttle = 0;  // > 0: at most this many array tasks at once ("%N")
    QString output;  // Slurm's %A/%a patterns allowed
    QString error;
    QString workDir;
    QStringList extra;  // further options, "--flag" or "--opt=value" (each must start with "--")
};

// The Slurm client of one cluster, over one Connection. Every call sends one command (the poll
// of any number of jobs is one squeue), blocks the calling thread until it is answered, and
// throws RemoteError: Kind::Slurm with Slurm's own error text when Slurm refuses. Call it from a
// worker thread, never the UI thread. Not thread-safe itself (it remembers whether the cluster
// has accounting); use one per thread or guard it.
class SlurmClient {
public:
    explicit SlurmClient(Connection &connection);

    QString version();  // "22.05.8"

    // Uploads `script` to `remotePath` over SFTP (atomically), then `sbatch --parsable`.
    slurm::Submitted submit(const QString &remotePath, const QByteArray &script,
                            const SubmitOptions &options);

    // The state of these jobs (ids as sbatch returned them, or "123_4") in ONE squeue call; array
    // jobs come back one record per task. Jobs Slurm has forgotten are simply absent.
    QList<slurm::Job> jobs(const QStringList &jobIds);
    // This user's pending and running jobs, with their names (one `squeue --me`; pending array
    // tasks come folded, "123_[4-9%2]"). For showing the queue to a person: the terminal monitor.
    QList<slurm::Job> myQueue();
    // The same for every user's jobs (one `squeue`): the GUI's queue with "mine only" unticked.
    QList<slurm::Job> queue(bool mineOnly);
    slurm::ClusterInfo clusterInfo();  // partitions and nodes with CPUs, memory, GPUs (one sinfo)

    slurm::Record showJob(const QString &jobId);
    slurm::Record showNode(const QString &node);

    void cancel(const QString &jobId);  // a job, one array task ("123_4"), or a whole array ("123")
    void setArrayThrottle(const QString &arrayJobId, int maxRunning);

    // Whether the cluster keeps accounting (sacct works). Asked once, then remembered.
    bool hasAccounting();
    // Finished jobs from sacct; nullopt where the cluster has no accounting (no command is sent
    // once that is known).
    std::optional<QList<slurm::Accounting>> accounting(const QStringList &jobIds);

    Connection &connection() { return m_connection; }

private:
    ExecResult run(const QList<QByteArray> &argv, bool allowFailure = false);
    [[noreturn]] void refuse(const QList<QByteArray> &argv, const ExecResult &result);
    slurm::Record show(const char *entity, const QString &name);
    template<typename T>
    T parsed(const char *command, slurm::Parsed<T> result);

    Connection &m_connection;
    std::optional<bool> m_accounting;
};

}  // namespace orrery::remote
