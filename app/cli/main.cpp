// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery`: the headless face. `orrery <noun> <verb> [options]`; every command calls core/remote
// and only formats what they return.
#include "command_table.h"
#include "commands.h"
#include "manpage.h"
#include "output.h"

#include "orrery/core/paths.h"
#include "orrery/core/version.h"

#include <QCoreApplication>

namespace {

using namespace orrery::cli;

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
    const QString usage = usageText(orrery::core::defaultDatabasePath());
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
    const QString &command = args.front();
    if (command == QLatin1String("--version") || command == QLatin1String("-V")) {
        out(QStringLiteral("orrery %1\n").arg(orrery::core::version()));
        return kOk;
    }
    // Not in the help: what the build runs to generate orrery(1) and the bash completion from the
    // command table (packaging/CMakeLists.txt).
    if (command == QLatin1String("help") && args.value(1) == QLatin1String("--man")) {
        out(manPage(commandTable(), orrery::core::version()));
        return kOk;
    }
    if (command == QLatin1String("help") && args.value(1) == QLatin1String("--bash-completion")) {
        out(bashCompletion(commandTable()));
        return kOk;
    }
    if (command == QLatin1String("--help") || command == QLatin1String("-h") ||
        command == QLatin1String("help")) {
        if (args.size() > 1)  // `orrery help sweep` is `orrery sweep --help`
            return dispatch(ctx, {args[1], QStringLiteral("--help")}, usage);
        out(usage);
        return kOk;
    }
    return dispatch(ctx, args, usage);
}
