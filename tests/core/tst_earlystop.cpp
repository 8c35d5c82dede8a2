// SPDX-License-Identifier: GPL-3.0-or-later
// Early stopping: hyperband rungs and decisions, the median rule, as tables of metric histories.
#include "testsupport.h"

#include "orrery/core/earlystop.h"

#include <QCoreApplication>

#include <cmath>
#include <limits>

using namespace orrery::core;

Q_DECLARE_METATYPE(QList<TrialHistory>)

namespace {

// A trial whose metric takes `values` at steps 10, 20, ...
TrialHistory trial(qint64 id, QList<double> values, bool running = true)
{
    TrialHistory t;
    t.trial = id;
    t.running = running;
    for (qsizetype i = 0; i < values.size(); ++i)
        t.points.append({(i + 1) * 10, values[i]});
    return t;
}

EarlyTerminate hyperband(int minIter, double eta)
{
    EarlyTerminate r;
    r.minIter = minIter;
    r.eta = eta;
    return r;
}

EarlyTerminate medianRule(qint64 minStep, int minTrials)
{
    EarlyTerminate r;
    r.type = EarlyTerminate::Type::Median;
    r.minStep = minStep;
    r.minTrials = minTrials;
    return r;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

class TestEarlyStop : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rungs()
    {
        QCOMPARE(hyperbandRungs(hyperband(3, 3), 100), (QList<int>{3, 9, 27, 81}));
        QCOMPARE(hyperbandRungs(hyperband(1, 2), 9), (QList<int>{1, 2, 4, 8}));
        QCOMPARE(hyperbandRungs(hyperband(3, 3), 2), QList<int>{});
        EarlyTerminate byMax;
        byMax.maxIter = 27;
        byMax.s = 2;
        byMax.eta = 3;
        QCOMPARE(hyperbandRungs(byMax, 0), (QList<int>{3, 9}));  // 27/9, 27/3
    }

    void decisions_data()
    {
        QTest::addColumn<EarlyTerminate>("rule");
        QTest::addColumn<int>("goal");
        QTest::addColumn<QList<TrialHistory>>("trials");
        QTest::addColumn<QList<qint64>>("stopped");
        const int mini = int(Goal::Minimize), maxi = int(Goal::Maximize);
        QTest::newRow("hyperband-stops-the-worst-two-of-three-at-rung-1")
            << hyperband(2, 3) << mini
            << QList<TrialHistory>{trial(1, {1.0, 0.5}), trial(2, {1.0, 0.9}), trial(3, {1.0, 0.7})}
            << QList<qint64>{2, 3};
        QTest::newRow("hyperband-maximize-keeps-the-largest")
            << hyperband(2, 3) << maxi
            << QList<TrialHistory>{trial(1, {0.1, 0.5}), trial(2, {0.1, 0.9}), trial(3, {0.1, 0.7})}
            << QList<qint64>{1, 3};
        QTest::newRow("hyperband-waits-for-eta-trials-at-a-rung")
            << hyperband(2, 3) << mini
            << QList<TrialHistory>{trial(1, {1.0, 0.5}), trial(2, {1.0, 0.9}), trial(3, {1.0})}
            << QList<qint64>{};
        QTest::newRow("hyperband-finished-trials-set-the-bar-but-are-not-stopped")
            << hyperband(1, 2) << mini
            << QList<TrialHistory>{trial(1, {0.1}, false), trial(2, {0.5}), trial(3, {0.9}, false),
                                   trial(4, {0.2})}
            << QList<qint64>{2};
        QTest::newRow("hyperband-judges-at-the-highest-rung-reached")
            // At rung 1 trial 1 is the worst, but it reached rung 2 (two values) and leads there.
            << hyperband(1, 2) << mini
            << QList<TrialHistory>{trial(1, {0.9, 0.1}), trial(2, {0.5, 0.6}), trial(3, {0.4})}
            << QList<qint64>{2};
        QTest::newRow("hyperband-judges-a-trial-that-ran-ahead-where-the-others-are")
            // Trial 1 reached rung 2 alone (no quorum there); at rung 1 it is the worst of two.
            << hyperband(1, 2) << mini << QList<TrialHistory>{trial(1, {0.9, 0.8}), trial(2, {0.5})}
            << QList<qint64>{1};
        QTest::newRow("hyperband-uses-the-best-so-far-within-the-rung")
            << hyperband(3, 3) << mini
            << QList<TrialHistory>{trial(1, {0.2, 0.8, 0.8}), trial(2, {0.5, 0.5, 0.5}),
                                   trial(3, {0.6, 0.6, 0.6})}
            << QList<qint64>{2, 3};
        QTest::newRow("hyperband-strict-judges-the-value-at-the-rung")
            // W&B's strict: true: trial 1's best (0.2) no longer saves it, its value at the rung (0.8) is
            // the worst.
            <<
            [] {
                EarlyTerminate r = hyperband(3, 3);
                r.strict = true;
                return r;
            }()
            << mini
            << QList<TrialHistory>{trial(1, {0.2, 0.8, 0.8}), trial(2, {0.5, 0.5, 0.5}),
                                   trial(3, {0.6, 0.6, 0.6})}
            << QList<qint64>{1, 3};
        QTest::newRow("hyperband-nan-is-the-worst")
            << hyperband(1, 3) << mini
            << QList<TrialHistory>{trial(1, {kNaN}), trial(2, {5.0}), trial(3, {6.0})} << QList<qint64>{1, 3};
        QTest::newRow("hyperband-ties-continue")
            << hyperband(1, 3) << mini
            << QList<TrialHistory>{trial(1, {0.5}), trial(2, {0.5}), trial(3, {0.5})} << QList<qint64>{};
        QTest::newRow("median-stops-worse-than-median")
            << medianRule(0, 3) << mini
            << QList<TrialHistory>{trial(1, {0.5, 0.4}), trial(2, {0.6, 0.5}), trial(3, {0.7, 0.6}),
                                   trial(4, {0.9, 0.8})}
            << QList<qint64>{3, 4};
        QTest::newRow("median-warm-up") << medianRule(30, 3) << mini
                                        << QList<TrialHistory>{trial(1, {0.5, 0.4}), trial(2, {0.6, 0.5}),
                                                               trial(3, {0.7, 0.6}), trial(4, {0.9, 0.8})}
                                        << QList<qint64>{};
        QTest::newRow("median-needs-min-trials-that-got-that-far")
            << medianRule(0, 3)
            << mini
            // Trial 4 would be worse than the others' median (0.6), but none of them got to its step 30.
            << QList<TrialHistory>{trial(1, {0.5}), trial(2, {0.6}), trial(3, {0.7, 0.6}),
                                   trial(4, {0.9, 0.8, 0.7})}
            << QList<qint64>{};
        QTest::newRow("median-maximize")
            << medianRule(0, 2) << maxi
            << QList<TrialHistory>{trial(1, {0.9}), trial(2, {0.5}), trial(3, {0.1})} << QList<qint64>{3};
        QTest::newRow("median-compares-best-so-far")
            // Trial 3's latest value is bad but its best (0.1) beats the others' median.
            << medianRule(0, 2) << mini
            << QList<TrialHistory>{trial(1, {0.5, 0.5}), trial(2, {0.4, 0.4}), trial(3, {0.1, 0.9})}
            << QList<qint64>{1, 2};
    }
    void decisions()
    {
        QFETCH(EarlyTerminate, rule);
        QFETCH(int, goal);
        QFETCH(QList<TrialHistory>, trials);
        QFETCH(QList<qint64>, stopped);
        const QList<StopDecision> d = decideEarlyStops(rule, Goal(goal), QStringLiteral("eval/loss"), trials);
        QList<qint64> ids;
        for (const StopDecision &s : d) {
            ids << s.trial;
            QVERIFY(s.reason.contains(QStringLiteral("eval/loss")));
        }
        QCOMPARE(ids, stopped);
    }

    void reasonSaysWhy()
    {
        const QList<StopDecision> d =
            decideEarlyStops(hyperband(2, 3), Goal::Minimize, QStringLiteral("eval/loss"),
                             {trial(1, {1.0, 0.5}), trial(2, {1.0, 0.9}), trial(3, {1.0, 0.7})});
        QCOMPARE(d.value(0).reason,
                 QStringLiteral("hyperband: best eval/loss 0.9 in its first 2 values (rung 1) is not "
                                "in the top 1 of the 3 trials there (cut-off 0.5)"));
    }
};

ORRERY_TEST_MAIN(TestEarlyStop, QCoreApplication)
#include "tst_earlystop.moc"
