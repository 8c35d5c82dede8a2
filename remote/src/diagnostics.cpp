// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/diagnostics.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/deploy.h"
#include "orrery/remote/error.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/slurm.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <libssh/libssh.h>

namespace orrery::remote {

using Status = core::Check::Status;

QList<core::Check> environmentChecks()
{
    QList<core::Check> checks = core::coreChecks();
    checks.append({QStringLiteral("libssh"), Status::Ok, QString::fromLatin1(ssh_version(0)), {}});

    const QString agent = qEnvironmentVariable("SSH_AUTH_SOCK");
    if (agent.isEmpty())
        checks.append({QStringLiteral("ssh-agent"), Status::Warning,
                       QStringLiteral("SSH_AUTH_SOCK is not set"),
                       QStringLiteral("clusters will need a key file (or start ssh-agent and ssh-add)")});
    else if (!QFileInfo::exists(agent))
        checks.append({QStringLiteral("ssh-agent"), Status::Warning,
                       QStringLiteral("SSH_AUTH_SOCK=%1 does not exist").arg(agent),
                       QStringLiteral("restart ssh-agent")});
    else
        checks.append({QStringLiteral("ssh-agent"), Status::Ok, agent, {}});
    return checks;
}

namespace {

// What the doctor's job prints, each fact on a line of its own after a marker (the setup lines
// may print anything before).
constexpr char kTorchMarker[] = "ORRERY-DOCTOR-TORCH ";
constexpr char kTrainerMarker[] = "ORRERY-DOCTOR-TRAINER ";

constexpr char kTorchProbe[] =
    "import json, os, sys\n"
    "d = {'python': sys.executable, 'visible': os.environ.get('CUDA_VISIBLE_DEVICES')}\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    d['error'] = repr(e)\n"
    "else:\n"
    "    d['torch'] = torch.__version__\n"
    "    d['cuda_built'] = torch.version.cuda\n"
    "    d['cuda_available'] = torch.cuda.is_available()\n"
    "    n = torch.cuda.device_count() if d['cuda_available'] else 0\n"
    "    d['devices'] = [torch.cuda.get_device_name(i) for i in range(n)]\n"
    "    if n:\n"
    "        d['nccl'] = '.'.join(map(str, torch.cuda.nccl.version()))\n"
    "print('ORRERY-DOCTOR-TORCH ' + json.dumps(d))\n";

QJsonObject markedJson(const QByteArray &out, const char *marker)
{
    for (const QByteArray &line : out.split('\n'))
        if (line.startsWith(marker))
            return QJsonDocument::fromJson(line.mid(qstrlen(marker))).object();
    return {};
}

QString hostKeyHint(const RemoteError &e, const QString &cluster)
{
    switch (e.kind()) {
    case RemoteError::Kind::HostKeyUnknown:
        return QStringLiteral("check the fingerprint with the cluster's admins, then `orrery cluster test %1 "
                              "--accept-new-host-key` records it")
            .arg(cluster);
    case RemoteError::Kind::HostKeyChanged:
        return QStringLiteral("the host's key changed: if the admins confirm it, remove the old line from "
                              "known_hosts (`ssh-keygen -R HOST`)");
    case RemoteError::Kind::Auth:
        return QStringLiteral(
            "add your key to ssh-agent (`ssh-add`) or give the profile one with --identity");
    default:
        return QStringLiteral("check the host, port and ProxyJump (`ssh HOST` from a terminal)");
    }
}

}  // namespace

QByteArray doctorJobCommand(const ClusterProfile &profile, const QString &trainer, bool withGpu,
                            std::chrono::seconds timeLimit)
{
    QByteArray script = profile.setup.join(QLatin1Char('\n')).toUtf8();
    script += "\npython=${ORRERY_PYTHON:-$(command -v python3 || command -v python)}\n"
              "if [ -n \"$python\" ]; then \"$python\" -W ignore -c " +
        shellQuote(kTorchProbe) +
        "; else echo 'ORRERY-DOCTOR-TORCH {\"error\": \"no python3 on PATH after the setup lines\"}'; fi\n";
    if (!trainer.isEmpty()) {
        const QByteArray t = shellQuote(trainer.toUtf8());
        script += "if [ -x " + t + " ]; then printf '" + QByteArray(kTrainerMarker) + "'; " + t +
            " --version --json | tr -d '\\n'; echo; fi\n";
    }
    const qint64 minutes = std::max<qint64>(1, (timeLimit.count() + 59) / 60);
    QList<QByteArray> argv{"srun", "--job-name=orrery-doctor", "--nodes=1", "--ntasks=1",
                           "--time=" + QByteArray::number(minutes)};
    if (!profile.partition.isEmpty())
        argv << "--partition=" + profile.partition.toUtf8();
    if (!profile.account.isEmpty())
        argv << "--account=" + profile.account.toUtf8();
    if (withGpu)
        argv << "--gres=gpu:1";
    argv << "bash"
         << "-c" << script;
    return commandLine(argv);
}

QList<core::Check> clusterChecks(const ClusterProfile &profile, const AuthCallbacks &callbacks,
                                 std::chrono::seconds jobTimeout)
{
    QList<core::Check> checks;
    const QString name = profile.name;
    Connection connection(profile.endpoint(), callbacks, probeConnectionOptions());
    const ClusterReport r = probeCluster(profile, connection);
    auto errorAbout = [&](const QString &prefix) {
        for (const QString &e : r.errors)
            if (e.startsWith(prefix))
                return e;
        return QString();
    };

    if (!r.connected) {
        QString hint = QStringLiteral("check the host, port and ProxyJump (`ssh HOST` from a terminal)");
        try {
            connection.connect().waitForFinished();
        } catch (const RemoteError &e) {
            hint = hostKeyHint(e, name);
        }
        checks.append({QStringLiteral("ssh"), Status::Failed, r.errors.value(0), hint});
        return checks;  // nothing else can be asked
    }
    checks.append({QStringLiteral("ssh"),
                   Status::Ok,
                   QStringLiteral("%1, host key %2").arg(r.where, r.fingerprint),
                   {}});

    // Slurm: the commands a sweep uses, on the PATH of a non-interactive SSH session.
    QStringList missing;
    try {
        const ExecResult which = connection
                                     .exec("for c in sinfo squeue sbatch scancel sacct srun; do command -v "
                                           "\"$c\" >/dev/null || echo "
                                           "\"$c\"; done")
                                     .result();
        missing = QString::fromUtf8(which.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    } catch (const RemoteError &e) {
        missing << e.message();
    }
    if (!missing.isEmpty() || r.slurmVersion.isEmpty())
        checks.append(
            {QStringLiteral("slurm commands"), Status::Failed,
             missing.isEmpty() ? errorAbout(QStringLiteral("Slurm version"))
                               : QStringLiteral("not on PATH: %1").arg(missing.join(QStringLiteral(", "))),
             QStringLiteral("Orrery runs them over non-interactive SSH: load Slurm's module in ~/.bashrc "
                            "(before any 'return if not interactive' line)")});
    else
        checks.append(
            {QStringLiteral("slurm commands"),
             Status::Ok,
             QStringLiteral("Slurm %1: sinfo, squeue, sbatch, scancel, sacct, srun").arg(r.slurmVersion),
             {}});

    if (!r.accounting)
        checks.append({QStringLiteral("accounting"), Status::Warning,
                       errorAbout(QStringLiteral("accounting")), QStringLiteral("sacct could not be asked")});
    else if (!*r.accounting)
        checks.append(
            {QStringLiteral("accounting"), Status::Warning, QStringLiteral("sacct has no accounting storage"),
             QStringLiteral("finished jobs are known from their exit.json only; queue times and GPU-hours "
                            "need slurmdbd (ask the admins)")});
    else
        checks.append({QStringLiteral("accounting"), Status::Ok, QStringLiteral("sacct answers"), {}});

    // Partitions and GPUs: the profile's partition (else Slurm's default) must exist.
    const slurm::Partition *partition = nullptr;
    QStringList names;
    int gpus = 0;  // per node: a node may be in several partitions
    for (const slurm::Node &n : r.info.nodes)
        gpus += n.gpusTotal;
    for (const slurm::Partition &p : r.info.partitions) {
        names << p.name + (p.isDefault ? QStringLiteral("*") : QString());
        if (profile.partition.isEmpty() ? p.isDefault : p.name == profile.partition)
            partition = &p;
    }
    if (!partition && !profile.partition.isEmpty())
        checks.append(
            {QStringLiteral("partition"), Status::Failed,
             QStringLiteral("'%1' is not one of %2").arg(profile.partition, names.join(QStringLiteral(", "))),
             QStringLiteral("set another with `orrery cluster add %1 --force ... --partition P`").arg(name)});
    else
        checks.append(
            {QStringLiteral("partition"), partition ? Status::Ok : Status::Warning,
             partition
                 ? QStringLiteral("%1: %2 nodes, %3 GPUs, time limit %4")
                       .arg(partition->name)
                       .arg(partition->nodes.size())
                       .arg(partition->gpusTotal)
                       .arg(partition->timeLimit)
                 : QStringLiteral("none named and no default among %1").arg(names.join(QStringLiteral(", "))),
             partition ? QString() : QStringLiteral("name one with --partition")});
    const bool withGpu = partition && partition->gpusTotal > 0;
    checks.append({QStringLiteral("gpus"), gpus > 0 ? Status::Ok : Status::Warning,
                   QStringLiteral("%1 GPUs (GRES gpu) on %2 nodes").arg(gpus).arg(r.info.nodes.size()),
                   gpus > 0 ? QString() : QStringLiteral("no GPUs in any partition: sweeps train on CPU")});

    if (r.remoteRootWritable)
        checks.append({QStringLiteral("remote root"), Status::Ok, profile.remoteRoot, {}});
    else
        checks.append(
            {QStringLiteral("remote root"), Status::Failed,
             profile.remoteRoot.isEmpty() ? QStringLiteral("none in the profile") : r.remoteRootError,
             QStringLiteral("a directory on the shared filesystem that compute nodes see: `orrery cluster "
                            "add %1 --force ... --remote-root DIR`")
                 .arg(name)});

    if (r.setup) {
        const bool ok = r.setup->exitStatus == 0;
        checks.append({QStringLiteral("setup lines"), ok ? Status::Ok : Status::Failed,
                       ok ? QStringLiteral("%1 line(s) ran on the login node").arg(profile.setup.size())
                          : QStringLiteral("exit %1: %2")
                                .arg(r.setup->exitStatus)
                                .arg(QString::fromUtf8(r.setup->err + r.setup->out).trimmed().left(300)),
                       ok ? QString() : QStringLiteral("fix the failing line in the profile")});
    }

    // PyTorch, CUDA and the trainer as a job sees them.
    QJsonObject torch, trainer;
    QString jobProblem;
    try {
        const ExecResult job =
            connection
                .exec(doctorJobCommand(profile, r.trainerReady ? r.trainer : QString(), withGpu, jobTimeout),
                      jobTimeout)
                .result();
        torch = markedJson(job.out, kTorchMarker);
        trainer = markedJson(job.out, kTrainerMarker);
        if (torch.isEmpty())
            jobProblem = QStringLiteral("srun exited %1: %2")
                             .arg(job.exitStatus)
                             .arg(QString::fromUtf8(job.err + job.out).trimmed().left(300));
    } catch (const RemoteError &e) {
        jobProblem = e.kind() == RemoteError::Kind::Timeout
            ? QStringLiteral("the test job did not finish in %1 s (a busy queue?)").arg(jobTimeout.count())
            : e.message();
    }
    if (!jobProblem.isEmpty()) {
        checks.append(
            {QStringLiteral("job: pytorch"), Status::Failed, jobProblem,
             QStringLiteral("a one-task srun must run: check the partition, account and time limit")});
    } else if (torch.contains(QLatin1String("error"))) {
        checks.append({QStringLiteral("job: pytorch"), Status::Failed,
                       QStringLiteral("%1: %2").arg(torch.value(QLatin1String("python")).toString(),
                                                    torch.value(QLatin1String("error")).toString()),
                       QStringLiteral("the setup lines must activate a Python environment with torch, on the "
                                      "compute nodes too")});
    } else {
        checks.append({QStringLiteral("job: pytorch"),
                       Status::Ok,
                       QStringLiteral("torch %1 (CUDA %2) at %3")
                           .arg(torch.value(QLatin1String("torch")).toString(),
                                torch.value(QLatin1String("cuda_built")).toString(QStringLiteral("none")),
                                torch.value(QLatin1String("python")).toString()),
                       {}});
        const QJsonArray devices = torch.value(QLatin1String("devices")).toArray();
        if (!withGpu)
            checks.append({QStringLiteral("job: cuda"),
                           Status::Ok,
                           QStringLiteral("no GPU asked for (CPU partition)"),
                           {}});
        else if (devices.isEmpty())
            checks.append(
                {QStringLiteral("job: cuda"), Status::Warning,
                 QStringLiteral("a job with --gres=gpu:1 sees no CUDA device (CUDA_VISIBLE_DEVICES=%1, torch "
                                "CUDA %2)")
                     .arg(torch.value(QLatin1String("visible")).toString(QStringLiteral("unset")),
                          torch.value(QLatin1String("cuda_built")).toString(QStringLiteral("none"))),
                 QStringLiteral("a CPU build of torch, or no NVIDIA driver on the node: install a CUDA "
                                "build of torch in the setup lines' environment")});
        else
            checks.append(
                {QStringLiteral("job: cuda"),
                 Status::Ok,
                 QStringLiteral("%1, NCCL %2")
                     .arg(devices.first().toString(), torch.value(QLatin1String("nccl")).toString()),
                 {}});
    }

    // The trainer sweeps will run.
    if (r.trainer.isEmpty()) {
        checks.append(
            {QStringLiteral("trainer"), Status::Warning,
             QStringLiteral("orrery-train from the cluster's PATH"),
             QStringLiteral("this installation has no trainer source to deploy (ORRERY_TRAINER_SOURCE)")});
    } else if (!r.trainerReady) {
        const bool named = !profile.trainerPath.isEmpty();
        checks.append({QStringLiteral("trainer"), named ? Status::Failed : Status::Warning,
                       named ? QStringLiteral("%1 is not an executable file").arg(r.trainer)
                             : QStringLiteral("not deployed yet (%1)").arg(r.trainer),
                       named
                           ? QStringLiteral("fix --trainer-path, or drop it to use the deployed trainer")
                           : QStringLiteral("`orrery cluster deploy %1` (or the first sweep submit does it)")
                                 .arg(name)});
    } else if (trainer.isEmpty()) {
        checks.append({QStringLiteral("trainer"), Status::Failed,
                       QStringLiteral("%1 did not start in the job").arg(r.trainer),
                       QStringLiteral("run it by hand in a job to see why (a missing library?)")});
    } else {
        const bool cuda =
            trainer.value(QLatin1String("cuda")).toObject().value(QLatin1String("compiled")).toBool();
        const bool warn = withGpu && !cuda;
        checks.append(
            {QStringLiteral("trainer"), warn ? Status::Warning : Status::Ok,
             QStringLiteral("%1: LibTorch %2, CUDA %3")
                 .arg(r.trainer, trainer.value(QLatin1String("torch")).toString(),
                      cuda ? QStringLiteral("compiled in") : QStringLiteral("not compiled in")),
             warn ? QStringLiteral("built without CUDA though the partition has GPUs: build where the CUDA "
                                   "toolkit is (`--build-on job`, `module load cuda` in the setup lines)")
                  : QString()});
    }
    return checks;
}

}  // namespace orrery::remote
