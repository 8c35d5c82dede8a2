// SPDX-License-Identifier: GPL-3.0-or-later
#include "command_table.h"

#include "cluster_commands.h"
#include "commands.h"
#include "db_commands.h"
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

// Parses a declared verb's arguments and runs it; a usage error names the verb and shows its help.
int runParsedVerb(const Context &ctx, const QString &command, const VerbInfo &v, const QStringList &args)
{
    QCommandLineParser p;
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    p.addOptions(v.options);
    const QString who = command.isEmpty() ? QStringLiteral("orrery %1").arg(v.name)
                                          : QStringLiteral("orrery %1 %2").arg(command, v.name);
    if (!p.parse(QStringList{QStringLiteral("orrery")} + args)) {
        err(QStringLiteral("%1: %2\n").arg(who, p.errorText()) + verbHelp(command, v));
        return kUsage;
    }
    const QStringList given = p.positionalArguments();
    const qsizetype required = std::count_if(v.arguments.begin(), v.arguments.end(), [](const QString &a) {
        return !a.startsWith(QLatin1Char('['));
    });
    // RUN... and [RUN...] both take any number.
    const bool variadic = !v.arguments.isEmpty() &&
        (v.arguments.back().endsWith(QLatin1String("...")) ||
         v.arguments.back().endsWith(QLatin1String("...]")));
    if (given.size() < required) {
        err(QStringLiteral("%1: %2 is missing\n").arg(who, v.arguments.value(given.size())) +
            verbHelp(command, v));
        return kUsage;
    }
    if (!variadic && given.size() > v.arguments.size()) {
        err(QStringLiteral("%1: unexpected argument '%2'\n").arg(who, given.value(v.arguments.size())) +
            verbHelp(command, v));
        return kUsage;
    }
    return v.parsed(ctx, p);
}

}  // namespace

VerbInfo parsedVerb(const QString &name, const QStringList &arguments,
                    const QList<QCommandLineOption> &options, const QString &summary, ParsedHandler run)
{
    QStringList words = arguments;
    for (const QCommandLineOption &o : options) {
        const QString first = o.names().front();
        QString word = (first.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + first;
        if (!o.valueName().isEmpty())
            word += QLatin1Char(' ') + o.valueName();
        words << QLatin1Char('[') + word + QLatin1Char(']');
    }
    VerbInfo v{name, words.join(QLatin1Char(' ')), summary};
    v.arguments = arguments;
    v.options = options;
    v.parsed = std::move(run);
    return v;
}

// A declared command as the verb the dispatcher parses.
static VerbInfo asVerb(const CommandInfo &c)
{
    VerbInfo v{c.name, c.synopsis, c.summary};
    v.arguments = c.arguments;
    v.options = c.options;
    v.parsed = c.parsed;
    return v;
}

CommandInfo parsedCommand(const QString &name, const QStringList &arguments,
                          const QList<QCommandLineOption> &options, const QString &summary, ParsedHandler run,
                          const QString &helpNotes)
{
    const VerbInfo v = parsedVerb(name, arguments, options, summary, std::move(run));
    CommandInfo c{name, v.synopsis, summary, {}, {}, false, helpNotes};
    c.arguments = v.arguments;
    c.options = v.options;
    c.parsed = v.parsed;
    return c;
}

QString verbHelp(const QString &command, const VerbInfo &verb)
{
    QStringList words{QStringLiteral("usage: orrery")};
    if (!command.isEmpty())
        words << command;
    words << verb.name;
    if (!verb.synopsis.isEmpty())
        words << verb.synopsis;
    QString text = words.join(QLatin1Char(' ')) + QStringLiteral("\n  %1\n").arg(verb.summary);
    for (const QCommandLineOption &o : verb.options) {
        QStringList names;
        for (const QString &n : o.names())
            names << (n.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + n;
        QString left = names.join(QStringLiteral(", "));
        if (!o.valueName().isEmpty())
            left += QLatin1Char(' ') + o.valueName();
        text += QStringLiteral("  %1  %2\n").arg(left, -24).arg(o.description());
    }
    return text;
}

const QList<CommandInfo> &commandTable()
{
    static const QList<CommandInfo> table = [] {
        QList<CommandInfo> t;
        t.append(parsedCommand(
            QStringLiteral("doctor"), {},
            {QCommandLineOption(QStringLiteral("cluster"),
                                QStringLiteral("check this cluster profile instead"), QStringLiteral("NAME")),
             QCommandLineOption(QStringLiteral("accept-new-host-key"),
                                QStringLiteral("record the cluster's host key the first time")),
             QCommandLineOption(QStringLiteral("json"), QStringLiteral("one JSON document for scripts"))},
            QStringLiteral("check this machine (Qt, SQLite, the trainer, libssh) or a cluster"),
            [](const Context &, const QCommandLineParser &p) { return runDoctor(p); }));
        t.append({QStringLiteral("experiments"),
                  {},
                  QStringLiteral("experiments"),
                  experimentsVerbs(),
                  {},  // every verb has its handler
                  false,
                  {}});
        t.append({QStringLiteral("runs"),
                  {},
                  QStringLiteral("tracked runs"),
                  runsVerbs(),
                  {},  // every verb has its handler
                  false,
                  QStringLiteral("RUN is an id, a uuid (or a prefix of 6+ hex digits) or a run name;\n"
                                 "DIR a run directory or a folder of them.\n"
                                 "`orrery runs VERB --help` shows a verb's options.\n")});
        t.append({QStringLiteral("cluster"),
                  {},
                  QStringLiteral("cluster profiles"),
                  clusterVerbs(),
                  [](const Context &, const QStringList &a) { return runCluster(a); },
                  true,
                  {}});
        t.append({QStringLiteral("sweep"),
                  {},
                  QStringLiteral("hyperparameter sweeps of orrery-train"),
                  sweepVerbs(),
                  {},  // every verb has its handler
                  false,
                  QString::fromUtf8(kSweepNotes)});
        t.append({QStringLiteral("db"),
                  {},
                  QStringLiteral("the database itself: backups and checks"),
                  dbVerbs(),
                  {},  // every verb has its handler
                  false,
                  QStringLiteral("Works on --db (else $ORRERY_DB, else the default database) while other\n"
                                 "windows and sweeps use it.\n")});
        t.append(monitorCommand());
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

namespace {

// The CLI's one boundary for what a verb throws (docs/errors.md): the verb's name and the error's
// message for a person, exit status 1. std::bad_alloc and anything not a std::exception (a bug)
// are not caught here.
template<typename F>
int atBoundary(const QString &who, F &&run)
{
    try {
        return run();
    } catch (const std::bad_alloc &) {
        throw;
    } catch (const std::exception &e) {
        err(QStringLiteral("%1: %2\n").arg(who, QString::fromUtf8(e.what())));
        return kFailed;
    }
}

}  // namespace

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
    if (it->verbs.isEmpty() && it->parsed) {
        if (!rest.isEmpty() && isHelp(rest.front())) {
            out(verbHelp({}, asVerb(*it)) + it->helpNotes);
            return kOk;
        }
        return atBoundary(QStringLiteral("orrery %1").arg(name),
                          [&] { return runParsedVerb(ctx, {}, asVerb(*it), rest); });
    }
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
        if (v != it->verbs.end() && v->parsed) {
            if (rest.size() > 1 && isHelp(rest[1]) && rest[1] != QLatin1String("help")) {
                out(verbHelp(name, *v));
                return kOk;
            }
            return atBoundary(QStringLiteral("orrery %1 %2").arg(name, verb),
                              [&] { return runParsedVerb(ctx, name, *v, rest.mid(1)); });
        }
        if (v != it->verbs.end() && v->run) {
            return atBoundary(QStringLiteral("orrery %1 %2").arg(name, verb),
                              [&] { return v->run(ctx, rest.mid(1)); });
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
