// SPDX-License-Identifier: GPL-3.0-or-later
//
// Every command and verb `orrery` accepts, in one table: main() dispatches through it and
// `orrery --help` is generated from it, so the help cannot leave a verb out (tst_cli_help walks
// the table against the real binary).
#pragma once

#include "commands.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::cli {

using CommandHandler = std::function<int(const Context &, const QStringList &)>;

struct VerbInfo {
    QString name;
    QString synopsis;  // what follows the verb: "FILE [--cluster NAME] [--watch]"
    QString summary;  // one line
    // Runs the verb with the arguments after it; an exception is reported as the verb's failure
    // (exit 1). Empty: the command's `run` gets the verb and dispatches it itself.
    CommandHandler run = {};
};

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
};

const QList<CommandInfo> &commandTable();
// `orrery --help`: every command and verb, from the table.
QString usageText(const QString &defaultDatabase);
// `orrery help COMMAND` / `orrery COMMAND help`: the command's own help, else its table rows.
QString commandHelp(const CommandInfo &c);
// Runs `orrery <args>` (after the global options): a known command and verb, else a usage error.
int dispatch(const Context &ctx, const QStringList &args, const QString &usage);

}  // namespace orrery::cli
