// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery`: the headless face. `orrery <noun> <verb> [options]`; every command calls core/remote
// and only formats what they return.
#include "cluster_commands.h"
#include "commands.h"
#include "output.h"

#include "orrery/core/paths.h"
#include "orrery/core/version.h"

#include <QCoreApplication>

namespace {

using namespace orrery::cli;

const QString kUsageText =
    QStringLiteral("usage: orrery [--version] [--help] <command> [options]\n"
                   "\n"
                   "commands:\n"
                   "  doctor [--json]    check this machine: Qt, SQLite, the data and config directories,\n"
                   "                     the trainer (LibTorch, CUDA, NCCL, Gloo), libssh, ssh-agent\n"
                   "  cluster add|list|show|test|remove\n"
                   "                     cluster profiles; `test` connects and reports Slurm, nodes, GPUs\n"
                   "\n"
                   "exit status: 0 ok, 1 the operation failed, 2 usage error\n");

}  // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    orrery::core::applyApplicationIdentity();

    QStringList args = QCoreApplication::arguments().mid(1);
    if (args.isEmpty()) {
        err(kUsageText);
        return kUsage;
    }
    const QString command = args.takeFirst();
    if (command == QLatin1String("--version") || command == QLatin1String("-V")) {
        out(QStringLiteral("orrery %1\n").arg(orrery::core::version()));
        return kOk;
    }
    if (command == QLatin1String("--help") || command == QLatin1String("-h") ||
        command == QLatin1String("help")) {
        out(kUsageText);
        return kOk;
    }
    if (command == QLatin1String("doctor"))
        return runDoctor(args);
    if (command == QLatin1String("cluster"))
        return runCluster(args);
    err(QStringLiteral("orrery: unknown command '%1'\n\n").arg(command) + kUsageText);
    return kUsage;
}
