// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery`: the headless face. `orrery <noun> <verb> [options]`; every command calls core/remote
// and only formats what they return.
#include "cluster_commands.h"
#include "commands.h"
#include "monitor_command.h"
#include "output.h"
#include "runs_commands.h"
#include "sweep_commands.h"

#include "orrery/core/paths.h"
#include "orrery/core/version.h"

#include <QCoreApplication>

namespace {

using namespace orrery::cli;

const QString kUsageText = QStringLiteral(
    "usage: orrery [--version] [--help] [--db PATH] <command> [options]\n"
    "\n"
    "commands:\n"
    "  doctor [--json]    check this machine: Qt, SQLite, the data and config directories,\n"
    "                     the trainer (LibTorch, CUDA, NCCL, Gloo), libssh, ssh-agent\n"
    "  experiments list   experiments and how many runs each has\n"
    "  runs <verb>        list, show, compare, history, export, ingest, push (`orrery runs help`)\n"
    "  cluster add|list|show|test|remove\n"
    "                     cluster profiles; `test` connects and reports Slurm, nodes, GPUs\n"
    "  monitor            full-screen terminal monitor: cluster partitions, nodes and your queue,\n"
    "                     sweeps with trial counts, best value and a sparkline (`--help`)\n"
    "  sweep plan FILE    validate a sweep spec and print its trials (and, with --cluster NAME,\n"
    "                     the sbatch script); `orrery sweep help`\n"
    "\n"
    "--db PATH: the tracking database (default $ORRERY_DB, else %1)\n"
    "exit status: 0 ok, 1 the operation failed, 2 usage error\n");

// Takes the global `--db PATH` / `--db=PATH` out of args (it may stand anywhere).
bool takeDatabaseOption(QStringList &args, Context &ctx)
{
    for (qsizetype i = 0; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--db")) {
            if (i + 1 >= args.size())
                return false;
            ctx.dbPath = args[i + 1];
            args.remove(i, 2);
            --i;
        } else if (args[i].startsWith(QLatin1String("--db="))) {
            ctx.dbPath = args[i].mid(5);
            args.remove(i);
            --i;
        }
    }
    return true;
}

}  // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    orrery::core::applyApplicationIdentity();

    QStringList args = QCoreApplication::arguments().mid(1);
    Context ctx;
    const QString usage = kUsageText.arg(orrery::core::defaultDatabasePath());
    if (!takeDatabaseOption(args, ctx)) {
        err(QStringLiteral("orrery: --db needs a path\n\n") + usage);
        return kUsage;
    }
    if (ctx.dbPath.isEmpty())
        ctx.dbPath = orrery::core::defaultDatabasePath();
    if (args.isEmpty()) {
        err(usage);
        return kUsage;
    }
    const QString command = args.takeFirst();
    if (command == QLatin1String("--version") || command == QLatin1String("-V")) {
        out(QStringLiteral("orrery %1\n").arg(orrery::core::version()));
        return kOk;
    }
    if (command == QLatin1String("--help") || command == QLatin1String("-h") ||
        command == QLatin1String("help")) {
        out(usage);
        return kOk;
    }
    if (command == QLatin1String("doctor"))
        return runDoctor(args);
    if (command == QLatin1String("experiments"))
        return runExperiments(ctx, args);
    if (command == QLatin1String("runs"))
        return runRuns(ctx, args);
    if (command == QLatin1String("cluster"))
        return runCluster(args);
    if (command == QLatin1String("sweep"))
        return runSweep(ctx, args);
    if (command == QLatin1String("monitor"))
        return runMonitor(ctx, args);
    err(QStringLiteral("orrery: unknown command '%1'\n\n").arg(command) + usage);
    return kUsage;
}
