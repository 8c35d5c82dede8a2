// SPDX-License-Identifier: GPL-3.0-or-later
#include "command_table.h"

#include "cluster_commands.h"
#include "commands.h"
#include "monitor_command.h"
#include "output.h"
#include "runs_commands.h"
#include "sweep_commands.h"

#include <algorithm>

namespace orrery::cli {

namespace {

bool isHelp(const QString &a)
{
    return a == QLatin1String("help") || a == QLatin1String("--help") || a == QLatin1String("-h");
}

// Table rows: "  orrery NAME VERB SYNOPSIS" and the summary, in two columns where they fit.
QString rows(const QList<std::pair<QString, QString>> &items)
{
    constexpr qsizetype kColumn = 44;
    QString s;
    for (const auto &[left, summary] : items) {
        if (left.size() + 2 <= kColumn)
            s += QStringLiteral("  ") + left.leftJustified(kColumn, QLatin1Char(' ')) + summary +
                QLatin1Char('\n');
        else
            s += QStringLiteral("  ") + left + QLatin1Char('\n') + QString(kColumn + 2, QLatin1Char(' ')) +
                summary + QLatin1Char('\n');
    }
    return s;
}

QList<std::pair<QString, QString>> commandRows(const CommandInfo &c)
{
    QList<std::pair<QString, QString>> items;
    auto join = [](QStringList parts) {
        parts.removeAll(QString());
        return parts.join(QLatin1Char(' '));
    };
    if (c.verbs.isEmpty())
        items.append({join({c.name, c.synopsis}), c.summary});
    for (const VerbInfo &v : c.verbs)
        items.append({join({c.name, v.name, v.synopsis}), v.summary});
    return items;
}

}  // namespace

const QList<CommandInfo> &commandTable()
{
    static const QList<CommandInfo> table = [] {
        auto V = [](const char *name, const char *synopsis, const char *summary) {
            return VerbInfo{QString::fromUtf8(name), QString::fromUtf8(synopsis), QString::fromUtf8(summary)};
        };
        QList<CommandInfo> t;
        t.append({QStringLiteral("doctor"),
                  QStringLiteral("[--cluster NAME] [--json]"),
                  QStringLiteral("check this machine (Qt, SQLite, the trainer, libssh) or a cluster"),
                  {},
                  [](const Context &, const QStringList &a) { return runDoctor(a); },
                  false,
                  {}});
        t.append({QStringLiteral("experiments"),
                  {},
                  QStringLiteral("experiments"),
                  {V("list", "[--json]", "experiments and how many runs each has")},
                  runExperiments,
                  false,
                  {}});
        t.append({QStringLiteral("runs"),
                  {},
                  QStringLiteral("tracked runs"),
                  runsVerbs(),
                  {},  // every verb has its handler
                  false,
                  QStringLiteral("RUN is an id, a uuid (or a prefix of 6+ hex digits) or a run name.\n")});
        t.append({QStringLiteral("cluster"),
                  {},
                  QStringLiteral("cluster profiles"),
                  clusterVerbs(),
                  [](const Context &, const QStringList &a) { return runCluster(a); },
                  true,
                  {}});
        t.append(
            {QStringLiteral("sweep"),
             {},
             QStringLiteral("hyperparameter sweeps of orrery-train"),
             {V("plan", "FILE [--cluster NAME] [--json]", "validate a spec, print its trials (and sbatch)"),
              V("submit", "FILE [--cluster NAME] [--dry-run] [--watch]",
                "submit a sweep (--dry-run: its worst-case GPU-hours)"),
              V("list", "[--json]", "every sweep: state, trials done, GPU-hours, best value"),
              V("status", "SWEEP [--json]", "each trial: params, state, step, GPU-hours, metric"),
              V("watch", "SWEEP [--pace FAST,SLOW]", "follow live (Ctrl-C detaches)"),
              V("cancel", "SWEEP", "cancel every trial still queued or running"),
              V("stop", "SWEEP TRIAL [--reason TEXT]", "stop one queued or running trial now"),
              V("retry", "SWEEP TRIAL", "run an ended trial again, from its checkpoint"),
              V("best", "SWEEP [--json]", "the best trial: value, params, run dir, video"),
              V("logs", "SWEEP TRIAL [-f]", "a trial's output and errors"),
              V("supervise", "SWEEP", "(internal) the detached follower submit starts")},
             runSweep,
             true,
             {}});
        t.append({QStringLiteral("monitor"),
                  QStringLiteral("[--cluster NAME] [--refresh S]"),
                  QStringLiteral("full-screen terminal monitor: cluster, queue, sweeps"),
                  {},
                  runMonitor,
                  true,
                  {}});
        return t;
    }();
    return table;
}

QString usageText(const QString &defaultDatabase)
{
    QList<std::pair<QString, QString>> items;
    for (const CommandInfo &c : commandTable())
        items += commandRows(c);
    return QStringLiteral("usage: orrery [--version] [--help] [--db PATH] <command> [<verb>] [options]\n\n"
                          "commands:\n") +
        rows(items) +
        QStringLiteral("\n`orrery help COMMAND` (or `orrery COMMAND --help`) shows a command's options.\n"
                       "--db PATH: the tracking database (default $ORRERY_DB, else %1)\n"
                       "exit status: 0 ok, 1 the operation failed, 2 usage error\n")
            .arg(defaultDatabase);
}

QString commandHelp(const CommandInfo &c)
{
    QList<std::pair<QString, QString>> items = commandRows(c);
    for (auto &item : items)
        item.first.prepend(QStringLiteral("orrery "));
    return QStringLiteral("usage:\n") + rows(items) + c.helpNotes;
}

int dispatch(const Context &ctx, const QStringList &args, const QString &usage)
{
    const QString name = args.value(0);
    const QList<CommandInfo> &table = commandTable();
    const auto it =
        std::find_if(table.begin(), table.end(), [&](const CommandInfo &c) { return c.name == name; });
    if (it == table.end()) {
        err(QStringLiteral("orrery: unknown command '%1'\n\n").arg(name) + usage);
        return kUsage;
    }
    const QStringList rest = args.mid(1);
    if (!rest.isEmpty() && isHelp(rest.front())) {
        if (it->ownHelp)
            return it->run(ctx, {QStringLiteral("--help")});
        out(commandHelp(*it));
        return kOk;
    }
    if (!it->verbs.isEmpty()) {
        const QString verb = rest.value(0);
        const auto v = std::find_if(it->verbs.begin(), it->verbs.end(),
                                    [&](const VerbInfo &info) { return info.name == verb; });
        if (v != it->verbs.end() && v->run) {
            try {
                return v->run(ctx, rest.mid(1));
            } catch (const std::exception &e) {
                err(QStringLiteral("orrery %1 %2: %3\n").arg(name, verb, QString::fromUtf8(e.what())));
                return kFailed;
            }
        }
        if (v == it->verbs.end()) {
            err((verb.isEmpty() ? QStringLiteral("orrery %1: a verb is needed\n").arg(name)
                                : QStringLiteral("orrery %1: unknown verb '%2'\n").arg(name, verb)) +
                commandHelp(*it));
            return kUsage;
        }
    }
    return it->run(ctx, rest);
}

}  // namespace orrery::cli
