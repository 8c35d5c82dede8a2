// SPDX-License-Identifier: GPL-3.0-or-later
//
// A sweep's metric goal, typed: whether a lower or a higher value of its metric is better, and the
// one ranking rule every part of Orrery uses (the runner's early stopping and bayes suggestions,
// the store's best run, the CLI's tables, the monitor, the GUI). Nobody compares goal text.
//
// Pure functions; safe from any thread.
#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace orrery::core {

enum class Goal { Minimize, Maximize };

QString toString(Goal g);  // "minimize" | "maximize", as the spec and the store write it
// The spec's and the store's word; nullopt for anything else.
std::optional<Goal> goalFromText(QStringView text);

// Is `a` strictly better than `b` by the goal? NaN is never better and everything beats NaN, so a
// run whose metric went NaN never ranks first.
bool isBetter(double a, double b, Goal goal);
// The better of two (a when they tie).
double betterOf(double a, double b, Goal goal);
// A run's best value over its history is its min (minimize) or its max (maximize); the short word
// tables put beside it: "min" | "max".
QString bestWord(Goal goal);

}  // namespace orrery::core
