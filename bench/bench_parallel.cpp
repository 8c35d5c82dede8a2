// SPDX-License-Identifier: GPL-3.0-or-later
//
// Parallel coordinates of many selected runs (issue 31: 5,000 selected runs painted < 100 ms),
// offscreen: setRuns (the axes built from the sweep's plan) + the first paint, then repeated
// paints (a live refresh or a hover repaints without new runs), each a render into an image of
// the widget's size; median and p95. And core::paramImportance over a sweep of as many runs (the
// Importance tab's work on the reader thread), median of a few.
// Usage: bench_parallel [--runs 5000] [--repeats 50] [--width 1200] [--height 320]
#include "guibench.h"
#include "parallelcoordinates.h"

#include "orrery/core/importance.h"
#include "orrery/core/store.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace orrery::core;
using namespace orrery::bench;
using namespace orrery::gui;

namespace { }  // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.addOption({QStringLiteral("runs"), QStringLiteral("selected runs"), QStringLiteral("N"),
                 QStringLiteral("5000")});
    p.addOption({QStringLiteral("repeats"), QStringLiteral("paints timed"), QStringLiteral("N"),
                 QStringLiteral("50")});
    p.addOption({QStringLiteral("width"), QStringLiteral("widget width"), QStringLiteral("PX"),
                 QStringLiteral("1200")});
    p.addOption({QStringLiteral("height"), QStringLiteral("widget height"), QStringLiteral("PX"),
                 QStringLiteral("320")});
    p.process(app);
    const int n = p.value(QStringLiteral("runs")).toInt(),
              repeats = p.value(QStringLiteral("repeats")).toInt();
    const QSize size(p.value(QStringLiteral("width")).toInt(), p.value(QStringLiteral("height")).toInt());

    // A random sweep of `n` runs: optim.lr (log-uniform), weight decay (log), warmup, an
    // optimizer (text), a seed; the metric falls with lr (what the tab is for).
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> u(0, 1);
    const QStringList optimizers{QStringLiteral("adam"), QStringLiteral("adamw"), QStringLiteral("lion")};
    QList<RunRow> runs;
    QList<RunId> ids;
    QList<ImportanceRun> forImportance;
    for (int i = 0; i < n; ++i) {
        RunRow r;
        r.run.id = i + 1;
        const double lr = std::pow(10.0, -5 + 3 * u(rng));
        r.params = {
            {QStringLiteral("optim.lr"), QString::number(lr, 'g', 6)},
            {QStringLiteral("optim.weight_decay"), QString::number(std::pow(10.0, -5 + 3 * u(rng)), 'g', 6)},
            {QStringLiteral("optim.warmup"), QString::number(int(u(rng) * 1000))},
            {QStringLiteral("optim.name"), optimizers[i % 3]},
            {QStringLiteral("seed"), QString::number(i % 5)}};
        const double loss = 0.2 + 0.1 * (std::log10(lr) + 5) * (std::log10(lr) + 5) / 9 + 0.05 * u(rng);
        LatestMetric m;
        m.key = QStringLiteral("eval/loss");
        m.last = {1000, 0, loss};
        r.latest.push_back(m);
        forImportance.push_back({r.params, loss});
        runs.push_back(r);
        ids.push_back(r.run.id);
    }
    ParallelPlan plan;
    plan.scope = QStringLiteral("bench");
    plan.defaults = {QStringLiteral("optim.lr"), QStringLiteral("optim.weight_decay"),
                     QStringLiteral("optim.warmup"), QStringLiteral("optim.name"), QStringLiteral("seed")};
    plan.available = plan.defaults;
    plan.log = {QStringLiteral("optim.lr"), QStringLiteral("optim.weight_decay")};
    plan.metric = QStringLiteral("eval/loss");

    ParallelCoordinates pc;
    pc.resize(size);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    std::vector<double> first, setRuns, paints;
    for (int round = 0; round < 5; ++round) {
        QElapsedTimer t;
        t.start();
        pc.setRuns(runs, plan);
        pc.setHighlighted(ids);  // every run selected
        const double built = msSince(t);
        pc.render(&image);
        first.push_back(msSince(t));
        setRuns.push_back(built);
    }
    // A partial selection (half the runs) is the other common case: faint lines under wide ones.
    std::vector<double> partial;
    for (int i = 0; i < repeats; ++i) {
        QElapsedTimer t;
        t.start();
        pc.render(&image);
        paints.push_back(msSince(t));
    }
    pc.setHighlighted(ids.mid(0, 40));
    for (int i = 0; i < repeats; ++i) {
        QElapsedTimer t;
        t.start();
        pc.render(&image);
        partial.push_back(msSince(t));
    }
    std::vector<double> importance;
    ImportanceResult result;
    for (int i = 0; i < 3; ++i) {
        QElapsedTimer t;
        t.start();
        result = paramImportance(forImportance,
                                 {{QStringLiteral("optim.lr"), true},
                                  {QStringLiteral("optim.weight_decay"), true},
                                  {QStringLiteral("optim.warmup"), false},
                                  {QStringLiteral("optim.name"), false},
                                  {QStringLiteral("seed"), false}});
        importance.push_back(msSince(t));
    }
    std::printf("parallel coordinates, %d selected runs, %d axes, %dx%d offscreen\n", n,
                int(pc.axes().axes.size()), size.width(), size.height());
    std::printf("  setRuns (axes + lines)      median %.1f ms  p95 %.1f ms  (5 rounds)\n",
                percentile(setRuns, 0.5), percentile(setRuns, 0.95));
    std::printf("  setRuns + first paint       median %.1f ms  p95 %.1f ms  (5 rounds)\n",
                percentile(first, 0.5), percentile(first, 0.95));
    std::printf("  repaint, all selected       median %.1f ms  p95 %.1f ms  (%d paints)\n",
                percentile(paints, 0.5), percentile(paints, 0.95), repeats);
    std::printf("  repaint, 40 of them selected median %.1f ms  p95 %.1f ms  (%d paints)\n",
                percentile(partial, 0.5), percentile(partial, 0.95), repeats);
    std::printf(
        "parameter importance, %d runs x 5 params, 100 trees: median %.0f ms (3 runs); first %s %.2f\n", n,
        percentile(importance, 0.5), qPrintable(result.params.value(0).key),
        result.params.value(0).importance);
    return 0;
}
