// SPDX-License-Identifier: GPL-3.0-or-later
//
// Every command and verb `orrery` accepts, in one table: main() dispatches through it and
// `orrery --help` is generated from it, so the help cannot leave a verb out (tst_cli_help walks
// the table against the real binary).
#pragma once

#include "commands.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::cli {

using CommandHandler = std::function<int(const Context &, const QStringList &)>;
// A verb whose arguments the dispatcher has parsed from its declaration (parsedVerb).
using ParsedHandler = std::function<int(const Context &, const QCommandLineParser &)>;

struct VerbInfo {
    QString name;
    QString synopsis;  // what follows the verb: "FILE [--cluster NAME] [--watch]"
    QString summary;  // one line
    // Runs the verb with the arguments after it; an exception is reported as the verb's failure
    // (exit 1). Empty: the command's `run` gets the verb and dispatches it itself.
    CommandHandler run = {};
    // A declared verb (parsedVerb): its positional arguments ("FILE", "TRIAL", "[RUN]", "DIR...")
    // and options, which the dispatcher parses before calling `parsed`; the synopsis and the
    // verb's --help are made from them, so the help says exactly what the verb accepts.
    QStringList arguments = {};
    QList<QCommandLineOption> options = {};
    ParsedHandler parsed = {};
};

// A declared verb: its synopsis is generated ("SWEEP TRIAL [--reason TEXT]").
VerbInfo parsedVerb(const QString &name, const QStringList &arguments,
                    const QList<QCommandLineOption> &options, const QString &summary, ParsedHandler run);
// `orrery COMMAND VERB --help` of a declared verb (`orrery COMMAND --help` of a declared command,
// `command` then empty): its synopsis and each option's description.
QString verbHelp(const QString &command, const VerbInfo &verb);

struct CommandInfo {
    QString name;
    QString synopsis;  // a command without verbs: what follows its name
    QString summary;
    QList<VerbInfo> verbs;  // empty: the command takes no verb (doctor, monitor)
    // Runs the command; args start with the verb (or the first option for a verbless command).
    CommandHandler run;
    // The command prints its own detailed help for `--help` (else it is generated from here).
    bool ownHelp = false;
    QString helpNotes;  // appended to the generated help
    // A declared command without verbs (parsedCommand): as a declared verb, the dispatcher parses
    // its options and the synopsis and help come from them.
    QStringList arguments = {};
    QList<QCommandLineOption> options = {};
    ParsedHandler parsed = {};
};

// A declared command without verbs (doctor, monitor).
CommandInfo parsedCommand(const QString &name, const QStringList &arguments,
                          const QList<QCommandLineOption> &options, const QString &summary, ParsedHandler run,
                          const QString &helpNotes = {});

const QList<CommandInfo> &commandTable();
// `orrery --help`: every command and verb, from the table.
QString usageText(const QString &defaultDatabase);
// `orrery help COMMAND` / `orrery COMMAND help`: the command's own help, else its table rows.
QString commandHelp(const CommandInfo &c);
// Runs `orrery <args>` (after the global options): a known command and verb, else a usage error.
int dispatch(const Context &ctx, const QStringList &args, const QString &usage);

}  // namespace orrery::cli
