// SPDX-License-Identifier: GPL-3.0-or-later
//
// orrery(1) and the bash completion of `orrery`, generated from the command table: the build runs
// `orrery help --man` and `orrery help --bash-completion` (packaging/CMakeLists.txt), so neither
// can leave out a command, verb or option that the dispatcher knows.
#pragma once

#include "command_table.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::cli {

// What `orrery COMMAND --help` prints: the command's own help where it has one (taken from its
// handler through OutputCapture), else the help generated from its table rows.
QString fullCommandHelp(const CommandInfo &c);

using HelpSource = std::function<QString(const CommandInfo &)>;

// orrery(1) as roff (the man macros): the global options, every command and verb of `table` with
// its synopsis and summary, the full help of commands that print their own, exit status,
// environment and files.
QString manPage(const QList<CommandInfo> &table, const QString &version,
                const HelpSource &help = fullCommandHelp);

// Text as roff: backslashes, hyphens and quotes escaped, and no line read as a request.
QString roffEscape(const QString &text);

// The options (`--json`, `-f`) that a piece of help names, in order, once each; what stands in
// backquotes (`orrery-train --print-schema`) is another program's and is left out.
QStringList optionsIn(const QString &text);

// The options of each verb of `c` (key: the verb; "" for a command without verbs): those of its
// synopsis, plus those its full help names on the verb's lines (a line that starts with the verb,
// after "usage: orrery COMMAND", and the indented lines that follow it).
QMap<QString, QStringList> verbOptions(const CommandInfo &c, const QString &fullHelp);

// A bash completion script for `orrery`: commands, verbs and their options; any other argument
// completes as a file name.
QString bashCompletion(const QList<CommandInfo> &table, const HelpSource &help = fullCommandHelp);

}  // namespace orrery::cli
