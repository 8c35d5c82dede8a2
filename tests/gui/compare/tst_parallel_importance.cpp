// SPDX-License-Identifier: GPL-3.0-or-later
// Compare's views built around the sweep, offscreen over a real store that also holds a command
// sweep of 50 constant params: the parallel coordinates' axes are the selection's swept params
// plus the sweep's metric (log where the sweep says so), at most 10 differing params for runs of
// no sweep, the user's axes (chosen, reordered) survive a new view; lines are coloured by the
// metric with the best end bright; the scatter defaults to the first swept param (log) against
// the sweep's metric; the Importance tab explains the leading sweep's metric.
#include "testsupport.h"
#include "workbenchsupport.h"

#include "compareview.h"
#include "importanceview.h"
#include "parallelcoordinates.h"
#include "qcp.h"

#include "orrery/core/paths.h"

#include <QApplication>
#include <QComboBox>
#include <QSettings>
#include <QTabWidget>

using namespace orrery::test;

namespace {

// A run of `params` whose latest `loss` is `loss` (the parallel axes read nothing else).
orrery::core::RunRow runWithLoss(orrery::core::RunId id, double loss, const orrery::core::Params &params)
{
    orrery::core::RunRow r;
    r.run.id = id;
    r.params = params;
    orrery::core::LatestMetric m;
    m.key = QStringLiteral("loss");
    m.last.value = loss;
    r.latest.append(m);
    return r;
}

}  // namespace

namespace {

// The window's wiring of a snapshot (Compare::load), then the refresh it triggers.
void applySnapshot(Compare &c, const QString &path)
{
    c.load(path);
    c.view.refresh();
}

QStringList labels(const ParallelCoordinates *pc)
{
    QStringList out;
    for (const auto &a : pc->axes().axes)
        out << a.label;
    return out;
}

// A database with the fixture's lr-sweep and the command sweep (runs of 52 params each).
struct Both {
    Fixture f;
    CommandSweep cmd;
    Both()
    {
        auto store = TrackingStore::open(f.path);
        cmd = addCommandSweep(*store, f.dir.filePath(QStringLiteral("runs")));
    }
};

}  // namespace

class TestParallelImportance : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        QSettings(orrery::core::guiSettingsPath(), QSettings::IniFormat)
            .remove(QStringLiteral("parallelCoordinates"));
    }

    void axesAreTheSelectedSweepsParamsAndMetric()
    {
        Both db;
        Compare c(db.f.path);
        applySnapshot(c, db.f.path);
        ParallelCoordinates *pc = c.view.parallelCoordinates();
        c.selection.select(db.cmd.runs, nullptr);
        // Not the 50 constants, nor optim.lr and seed of the other sweep: its own two and its metric.
        QCOMPARE(labels(pc),
                 (QStringList{QStringLiteral("train.lr"), QStringLiteral("train.batch"),
                              QStringLiteral("train/loss")}));
        QCOMPARE(pc->axes().axes[0].kind, ParallelAxes::Axis::Kind::Log);  // 1e-4 .. 1e-2, swept log
        QCOMPARE(pc->plan().scope, QStringLiteral("cmd-sweep"));
        c.selection.select(db.f.runs, nullptr);
        QCOMPARE(labels(pc),
                 (QStringList{QStringLiteral("optim.lr"), QStringLiteral("seed"), QStringLiteral("loss")}));
        QCOMPARE(pc->axes().axes[0].kind, ParallelAxes::Axis::Kind::Log);
        // Nothing selected: the table's runs, led by the sweep most of them belong to (lr-sweep's
        // 21): its params first, the other sweep's after them, lr-sweep's metric; no constant.
        c.selection.select({}, nullptr);
        QCOMPARE(labels(pc),
                 (QStringList{QStringLiteral("optim.lr"), QStringLiteral("seed"), QStringLiteral("train.lr"),
                              QStringLiteral("train.batch"), QStringLiteral("loss")}));
    }

    void runsOfNoSweepShowAtMostTenDifferingParams()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("loose.sqlite"));
        QList<RunId> runs;
        {
            auto store = TrackingStore::open(path);
            const ExperimentId e = store->ensureExperiment(QStringLiteral("loose"));
            for (int i = 0; i < 4; ++i) {
                const RunId r = store->createRun(e, QStringLiteral("run%1").arg(i), 1000 + i);
                QList<std::pair<QString, QString>> params;
                for (int k = 0; k < 15; ++k)  // 15 params, each different in every run
                    params.push_back(
                        {QStringLiteral("p.k%1").arg(k, 2, 10, QLatin1Char('0')), QString::number(i * k)});
                store->logParams(r, params);
                store->logMetrics(r, {{QStringLiteral("loss"), {1, 1000, 1.0 / (i + 1)}}});
                runs.push_back(r);
            }
        }
        Compare c(path);
        applySnapshot(c, path);
        c.selection.select(runs, nullptr);
        ParallelCoordinates *pc = c.view.parallelCoordinates();
        QCOMPARE(pc->axes().axes.size(), 11);  // 10 params and the charted metric
        QCOMPARE(pc->axes().axes.back().label, QStringLiteral("loss"));
        QCOMPARE(pc->plan().available.size(), 15);  // the chooser offers the rest
    }

    void chosenAndReorderedAxesSurviveANewView()
    {
        Both db;
        {
            Compare c(db.f.path);
            applySnapshot(c, db.f.path);
            c.selection.select(db.f.runs, nullptr);
            ParallelCoordinates *pc = c.view.parallelCoordinates();
            pc->setChosenParams(
                {QStringLiteral("optim.lr"), QStringLiteral("seed"), QStringLiteral("model.width")});
            pc->moveAxis(0, 1);
            QCOMPARE(labels(pc),
                     (QStringList{QStringLiteral("seed"), QStringLiteral("optim.lr"),
                                  QStringLiteral("model.width"), QStringLiteral("loss")}));
        }
        Compare again(db.f.path);  // as after a restart: the settings file holds the choice
        applySnapshot(again, db.f.path);
        again.selection.select(db.f.runs, nullptr);
        QCOMPARE(labels(again.view.parallelCoordinates()),
                 (QStringList{QStringLiteral("seed"), QStringLiteral("optim.lr"),
                              QStringLiteral("model.width"), QStringLiteral("loss")}));
        // Another sweep keeps its own axes.
        again.selection.select(db.cmd.runs, nullptr);
        QCOMPARE(labels(again.view.parallelCoordinates()).front(), QStringLiteral("train.lr"));
    }

    void linesAreColouredByTheMetricBestEndBright()
    {
        Fixture f;
        Compare c(f.path);
        applySnapshot(c, f.path);
        ParallelCoordinates *pc = c.view.parallelCoordinates();
        pc->resize(800, 300);
        c.selection.select(f.runs.mid((int(std::size(kLrs)) - 1) * kSeeds, kSeeds),
                           nullptr);  // the largest lr
        // loss is minimised: the bottom of its axis is the scale's bright end.
        const QColor best = pc->metricColor(0), worst = pc->metricColor(1);
        QVERIFY(best.lightness() > worst.lightness() + 60);
        // The best run (the largest lr, seed 0) is painted in the best colour where it meets the loss axis.
        const QImage image = pc->grab().toImage();
        const int metricAxis = int(pc->axes().axes.size()) - 1;
        std::optional<double> bestPos;
        for (const auto &l : pc->axes().lines)
            if (l.run == f.runs[(int(std::size(kLrs)) - 1) * kSeeds])
                bestPos = l.positions[metricAxis];
        QVERIFY(bestPos);
        QCOMPARE(*bestPos, 0.0);
        const QColor expected = pc->metricColor(*bestPos);
        bool found = false;
        const int x = pc->axisX(metricAxis) - 10, y = pc->positionY(*bestPos);
        for (int dy = -3; dy <= 3 && !found; ++dy) {
            const QColor got =
                image.pixelColor(x * image.width() / pc->width(), (y + dy) * image.height() / pc->height());
            found = std::abs(got.red() - expected.red()) < 40 &&
                std::abs(got.green() - expected.green()) < 40 && std::abs(got.blue() - expected.blue()) < 40;
        }
        QVERIFY2(found, "the best run's line is not in the scale's best colour");
    }

    void scatterDefaultsToTheFirstSweptParamOnALogAxis()
    {
        Both db;
        Compare c(db.f.path);
        applySnapshot(c, db.f.path);
        auto *tabs = c.view.findChild<QTabWidget *>();
        QVERIFY(tabs);
        tabs->setCurrentWidget(c.view.scatter()->parentWidget());
        c.selection.select(db.cmd.runs, nullptr);
        QCOMPARE(c.view.scatterParam()->currentText(),
                 QStringLiteral("train.lr"));  // not cfg.k00, a constant
        QCOMPARE(c.view.scatter()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(c.view.scatter()->yAxis->label(), QStringLiteral("train/loss"));
        c.selection.select(db.f.runs, nullptr);
        QCOMPARE(c.view.scatterParam()->currentText(), QStringLiteral("optim.lr"));
        QCOMPARE(c.view.scatter()->yAxis->label(), QStringLiteral("loss"));
        // A param the user picks stays.
        c.view.scatterParam()->setCurrentIndex(c.view.scatterParam()->findText(QStringLiteral("seed")));
        c.selection.select(db.f.runs.mid(0, 6), nullptr);
        QCOMPARE(c.view.scatterParam()->currentText(), QStringLiteral("seed"));
        QCOMPARE(c.view.scatter()->xAxis->scaleType(), QCPAxis::stLinear);
    }

    void importanceTabExplainsTheLeadingSweep()
    {
        Both db;
        Compare c(db.f.path);
        applySnapshot(c, db.f.path);
        auto *tabs = c.view.findChild<QTabWidget *>();
        QStringList names;
        for (int i = 0; i < tabs->count(); ++i)
            names << tabs->tabText(i);
        QVERIFY2(names.contains(QStringLiteral("Importance")), qPrintable(names.join(QLatin1Char(','))));
        ImportanceView *iv = c.view.importanceView();
        QSignalSpy computed(iv, &ImportanceView::computed);
        c.selection.select(db.f.runs.mid(0, 5), nullptr);
        QCOMPARE(iv->sweep(), db.f.sweep);
        QVERIFY(computed.wait(10'000));
        QVERIFY2(iv->result().ok(), qPrintable(iv->result().problem));
        QCOMPARE(iv->result().runsUsed, 21);  // the whole sweep, not only the selection
        QCOMPARE(iv->result().params.front().key, QStringLiteral("optim.lr"));
        QVERIFY(*iv->result().params.front().correlation < -0.5);  // a larger lr, a lower loss
        // The command sweep: 4 runs, enough; the same sweep again reads nothing new.
        c.selection.select(db.cmd.runs, nullptr);
        QCOMPARE(iv->sweep(), db.cmd.sweep);
        QVERIFY(computed.wait(10'000));
        QCOMPARE(iv->result().runsUsed, 4);
        c.selection.select(db.cmd.runs.mid(0, 2), nullptr);
        QVERIFY(!computed.wait(300));
        // Bars, not a message.
        QVERIFY(iv->message().isEmpty());
        // More ended trials of the same sweep (a live one) read it again; the last bars stay
        // meanwhile.
        const int before = int(computed.size());
        iv->setSweep(db.cmd.sweep, 99);
        QVERIFY(iv->result().ok());
        QVERIFY(iv->message().isEmpty());
        QVERIFY(computed.wait(10'000));
        QCOMPARE(int(computed.size()), before + 1);
        QCOMPARE(iv->result().runsUsed, 4);
    }
    // Issue 41: runs of two sweeps whose params differ, one bad value among learning rates: the
    // lr axis stays numeric with the bad value off it, the axis of a param only one sweep has
    // says how many runs lack it, and every run keeps its place on the axes it has values for.
    void axesAcrossSweepsKeepEveryRun()
    {
        using orrery::core::RunRow;
        using orrery::gui::ParallelAxes;
        using orrery::gui::ParallelCoordinates;
        QList<RunRow> runs;
        for (int i = 0; i < 9; ++i) {
            orrery::core::Params params{
                {QStringLiteral("lr"), i == 8 ? QStringLiteral("oops") : QString::number(0.001 * (i + 1))}};
            if (i < 4)  // only the first sweep's runs have a width
                params.insert(QStringLiteral("width"), QString::number(32 * (i + 1)));
            runs.append(runWithLoss(i + 1, 1.0 / (i + 1), params));
        }
        const ParallelAxes axes = ParallelAxes::build(runs, {QStringLiteral("lr"), QStringLiteral("width")},
                                                      {}, QStringLiteral("loss"));
        QCOMPARE(axes.axes.size(), 3);
        QVERIFY(axes.axes[0].kind != ParallelAxes::Axis::Kind::Categorical);
        QCOMPARE(axes.axes[0].notNumbers, 1);
        QCOMPARE(axes.axes[1].missing, 5);
        QCOMPARE(ParallelCoordinates::offAxisText(axes.axes[1]), QStringLiteral("5 run(s) without it"));
        QCOMPARE(ParallelCoordinates::offAxisText(axes.axes[0]), QStringLiteral("1 not a number"));
        QCOMPARE(axes.lines.size(), 9);
        // A second sweep's run: on lr and on the metric, not on width (its line goes from one to
        // the other); the bad value's run: on the metric only.
        QVERIFY(axes.lines[6].positions[0] && !axes.lines[6].positions[1] && axes.lines[6].positions[2]);
        QVERIFY(!axes.lines[8].positions[0] && axes.lines[8].positions[2]);
    }
    // Issue 41: the colour scale spans the leading sweep's runs: its best run is the brightest
    // even beside another sweep's better runs (which sit at the scale's end).
    void colourScaleIsTheLeadingSweeps()
    {
        using orrery::core::RunRow;
        using orrery::gui::ParallelCoordinates;
        using orrery::gui::ParallelPlan;
        QList<RunRow> runs;
        const double losses[] = {0.5, 0.4, 0.3, 0.05, 0.9};  // runs 4 and 5: another sweep's
        for (int i = 0; i < 5; ++i)
            runs.append(
                runWithLoss(i + 1, losses[i], {{QStringLiteral("lr"), QString::number(0.001 * (i + 1))}}));
        ParallelPlan plan;
        plan.defaults = {QStringLiteral("lr")};
        plan.metric = QStringLiteral("loss");
        plan.scaleRuns = {1, 2, 3};
        ParallelCoordinates pc;
        pc.setRuns(runs, plan);
        QCOMPARE(*pc.colourPosition(3), 1.0);  // the sweep's best: the bright end
        QCOMPARE(*pc.colourPosition(1), 0.0);  // its worst
        QCOMPARE(*pc.colourPosition(4), 1.0);  // better still, another sweep's: at the end
        QCOMPARE(*pc.colourPosition(5), 0.0);
        QVERIFY(*pc.colourPosition(2) > 0.4 && *pc.colourPosition(2) < 0.6);
        plan.scaleRuns.clear();  // every run: the other sweep's best is the bright end
        pc.setRuns(runs, plan);
        QVERIFY(*pc.colourPosition(3) < 0.9);
    }
};

ORRERY_TEST_MAIN(TestParallelImportance, QApplication)
#include "tst_parallel_importance.moc"
