// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep ...`: one handler per verb, each declared with its own arguments and options in
// sweepVerbs() (the command table dispatches them and makes the help from them). Every verb calls
// remote::SweepOperations, the same operations the window and the monitor call; these files only
// read flags and print:
//   sweep_commands.cpp  the table, plan and submit (specs)
//   sweep_report.cpp    list, status, best (the sweep overview, rendered)
//   sweep_watch.cpp     watch (following live: the status block)
//   sweep_actions.cpp   cancel, stop, retry, logs, supervise
#pragma once

#include "command_table.h"
#include "commands.h"
#include "runs_commands.h"

#include "orrery/core/sweeprunner.h"
#include "orrery/remote/sweepoperations.h"

#include <QCommandLineParser>
#include <QStringList>

#include <memory>
#include <optional>

namespace orrery::cli {

QList<VerbInfo> sweepVerbs();
extern const char *const kSweepNotes;  // appended to `orrery sweep --help`

// --- shared by the sweep_*.cpp files ---------------------------------------------------------

// The operations of one CLI command: prompts on the terminal (never when stdin is not one),
// leases for a follower that ticks at most every `slowestTickMs`, settling by waiting.
remote::SweepOperations::Options cliOperations(qint64 slowestTickMs = 15'000);
// Prints an operation's failure as "orrery sweep VERB: message" and returns its exit status
// (2: the request is wrong, 1: the operation failed).
int reportFailure(const QString &verb, const remote::OperationError &e);
// Parses a trial number argument; -1 (after printing a usage error) when it is not one.
int trialArgument(const QString &verb, const QString &text);

int sweepList(const Context &ctx, const QCommandLineParser &p);
int sweepStatus(const Context &ctx, const QCommandLineParser &p);
int sweepBest(const Context &ctx, const QCommandLineParser &p);
// Prints the summary `status` and the end of `watch` show.
void printSweepSummary(const core::SweepOverview &o);

int sweepWatch(const Context &ctx, const QCommandLineParser &p);
// Follows the sweep until it ends or Ctrl-C; exit status as `watch`.
// `notify`: where `--notify` sends the sweep's notices, besides where its spec's `notify:` does.
int watchSweep(remote::SweepOperations &ops, const core::Sweep &sweep, bool json, const core::TickPace &pace,
               const std::optional<core::NotifyTarget> &notify = std::nullopt);
// `--notify TARGET` of submit and watch: nullopt when not given; false (after printing the usage
// error naming `verb`) when TARGET is neither a command nor an http(s) URL.
bool notifyOption(const QString &verb, const QCommandLineParser &p,
                  std::optional<core::NotifyTarget> &target);

int sweepCancel(const Context &ctx, const QCommandLineParser &p);
int sweepStop(const Context &ctx, const QCommandLineParser &p);
int sweepRetry(const Context &ctx, const QCommandLineParser &p);
int sweepLogs(const Context &ctx, const QCommandLineParser &p);
int sweepSupervise(const Context &ctx, const QCommandLineParser &p);

}  // namespace orrery::cli
