// SPDX-License-Identifier: GPL-3.0-or-later
// What the compare view computes from curves: EMA smoothing and the group mean ± std band.
#include "testsupport.h"

#include "orrery/core/curves.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace orrery::core;

class TestCurves : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void emaIsDebiasedAndSkipsNonFinite()
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const std::vector<CurvePoint> raw{{0, 1}, {1, 3}, {2, nan}, {3, 5}};
        const auto s = emaSmooth(raw, 0.5);
        QCOMPARE(s.size(), raw.size());
        QCOMPARE(s[0].y, 1.0);  // debiased: the first value is itself, not half of it
        // (0.5·1 + 0.5·3 ... ) / (1 - 0.5²): ((0.5·0.5·1) + 0.5·3) / 0.75
        QCOMPARE(s[1].y, (0.25 * 1 + 0.5 * 3) / 0.75);
        QVERIFY(std::isnan(s[2].y));
        QCOMPARE(s[3].y, (0.125 * 1 + 0.25 * 3 + 0.5 * 5) / 0.875);
        QCOMPARE(emaSmooth(raw, 0)[1].y, 3.0);
    }

    // Issue 41: a constant metric smoothed is the same constant, bit for bit, at every weight
    // (rounding in the debiased average made it wobble by an ulp: a chart drew that as a cliff).
    void emaOfAConstantIsThatConstant()
    {
        for (const double c : {0.493946, 1e-7, -3.25, 123456.789})
            for (const double w : {0.3, 0.6, 0.9, 0.99}) {
                std::vector<CurvePoint> raw;
                for (int step = 0; step < 500; ++step)
                    raw.push_back({double(step), c});
                for (const CurvePoint &p : emaSmooth(raw, w))
                    QCOMPARE(p.y, c);  // exact: QCOMPARE on doubles is fuzzy, so also:
                for (const CurvePoint &p : emaSmooth(raw, w))
                    QVERIFY2(p.y == c, qPrintable(QString::number(p.y, 'g', 17)));
            }
        // A smoothed value stays within the values seen so far.
        const std::vector<CurvePoint> raw{{0, 2}, {1, 2}, {2, 1}, {3, 1}};
        for (const CurvePoint &p : emaSmooth(raw, 0.9))
            QVERIFY(p.y >= 1 && p.y <= 2);
    }

    void aMetricAgainstAnotherIsPairedByStep()
    {
        // GPU-hours logged every 10 steps, eval/loss every 25: x interpolated between its points,
        // taken as logged where the steps meet, and no point where GPU-hours had not been logged.
        std::vector<StepValue> gpuHours, loss;
        for (long long s = 10; s <= 100; s += 10)
            gpuHours.push_back({s, double(s) / 100});
        gpuHours.push_back({60, std::nan("")});  // a NaN is not an x
        std::sort(gpuHours.begin(), gpuHours.end(),
                  [](const StepValue &a, const StepValue &b) { return a.step < b.step; });
        for (long long s = 0; s <= 125; s += 25)
            loss.push_back({s, 1.0 / double(s + 1)});
        const auto curve = pairByStep(gpuHours, loss);
        // Step 0 (before x's first point) and 125 (after its last) are left out.
        QCOMPARE(curve.size(), std::size_t(4));
        const double want[][2] = {{0.25, 1.0 / 26}, {0.50, 1.0 / 51}, {0.75, 1.0 / 76}, {1.00, 1.0 / 101}};
        for (std::size_t i = 0; i < curve.size(); ++i) {
            QVERIFY2(std::abs(curve[i].x - want[i][0]) < 1e-12, qPrintable(QString::number(curve[i].x)));
            QCOMPARE(curve[i].y, want[i][1]);
        }
        QVERIFY(xNonDecreasing(curve));
        // An x that goes back keeps y's step order (a parametric curve, not a sorted one).
        const std::vector<StepValue> lr{{0, 1.0}, {10, 3.0}, {20, 2.0}};
        const std::vector<StepValue> y{{0, 5}, {10, 6}, {20, 7}};
        const auto back = pairByStep(lr, y);
        QCOMPARE(back.size(), std::size_t(3));
        QCOMPARE(back[1].x, 3.0);
        QCOMPARE(back[2].y, 7.0);
        QVERIFY(!xNonDecreasing(back));
        QVERIFY(pairByStep({}, y).empty());
    }

    void bandIsMeanAndStdOverRuns()
    {
        // Three seeds, one point per step; bins of one step each: the band is the plain
        // per-step mean and population std of the three values.
        std::vector<std::vector<CurvePoint>> runs(3);
        for (int step = 0; step < 10; ++step)
            for (int r = 0; r < 3; ++r)
                runs[std::size_t(r)].push_back({double(step), step * 0.1 + r * r});
        runs[2].pop_back();  // one seed is behind: the last bin has two runs
        const auto band = meanStdBand(runs, -0.5, 9.5, 10);
        QCOMPARE(band.size(), std::size_t(10));
        for (int step = 0; step < 10; ++step) {
            const int n = step == 9 ? 2 : 3;
            double sum = 0, sumSq = 0;
            for (int r = 0; r < n; ++r) {
                const double v = step * 0.1 + r * r;
                sum += v;
                sumSq += v * v;
            }
            const double mean = sum / n;
            QCOMPARE(band[std::size_t(step)].runs, n);
            QVERIFY(std::abs(band[std::size_t(step)].x - step) < 1e-9);
            QVERIFY(std::abs(band[std::size_t(step)].mean - mean) < 1e-9);
            QVERIFY(std::abs(band[std::size_t(step)].std - std::sqrt(sumSq / n - mean * mean)) < 1e-9);
        }
        QVERIFY(meanStdBand(runs, 0, 9, 0).empty());
    }
};

ORRERY_TEST_MAIN(TestCurves, QCoreApplication)
#include "tst_curves.moc"
