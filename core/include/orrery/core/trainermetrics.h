// SPDX-License-Identifier: GPL-3.0-or-later
//
// The metric names the bundled trainer (orrery-train) logs, kept in one place on core's side: the
// trainer shares no code with core (ARCHITECTURE.md), so its names are written down here from
// trainer/src (train.cpp, evaluate.cpp, sysmetrics.h) and docs/trainer.md, and a test checks this
// list against docs/trainer.md. A sweep of the bundled trainer whose `metric: {name: ...}` is not
// one of them would wait for a value that never comes (bayes never learns, early stopping never
// stops, "best" stays empty): the spec check warns, with the closest real name.
//
// Some names carry a number: eval/loss_t<flow time> (one per eval.timesteps entry),
// node<n>/cpu_pct and node<n>/rss_gb (per node), gpu<r>/util, gpu<r>/mem_gb and gpu<r>/power_w
// (per rank). They are listed with the placeholder as docs/trainer.md writes them ("node<n>/...").
#pragma once

#include <QString>
#include <QStringList>

namespace orrery::core {

// Every name orrery-train logs, placeholders as "<t>", "<n>" and "<r>", in the order the trainer
// documents them (training, perf, eval, system).
QStringList trainerMetricNames();
// Whether `name` is a metric orrery-train logs (a placeholder matches any number: node0/cpu_pct).
bool isTrainerMetric(const QString &name);
// The warning for a sweep of the bundled trainer whose metric it never logs, with the closest
// real name: "eval/los is not a metric orrery-train logs; did you mean eval/loss?". Empty when it
// is one.
QString trainerMetricWarning(const QString &name);

}  // namespace orrery::core
