// SPDX-License-Identifier: GPL-3.0-or-later
// Trial expansion and search: the grid's order and cap, random and TPE reproducible from a seed
// and within every distribution's range, and TPE finding better trials than random search on a
// synthetic objective (a quadratic bowl with a log-scale learning-rate axis) over many seeds.
#include "testsupport.h"

#include "orrery/core/sweepsearch.h"

#include <QCoreApplication>

#include <cmath>

using namespace orrery::core;

namespace {

ParamSpec categorical(const char *key, QVariantList values, ConfigKey::Type type = ConfigKey::Type::Int)
{
    ParamSpec p;
    p.key = QString::fromLatin1(key);
    p.type = type;
    p.distribution = Distribution::Categorical;
    p.values = std::move(values);
    return p;
}

ParamSpec numeric(const char *key, Distribution d, double lo, double hi,
                  ConfigKey::Type type = ConfigKey::Type::Float)
{
    ParamSpec p;
    p.key = QString::fromLatin1(key);
    p.type = type;
    p.distribution = d;
    p.min = lo;
    p.max = hi;
    return p;
}

QVariant valueOf(const TrialParams &t, const char *key)
{
    for (const auto &[k, v] : t)
        if (k == QLatin1String(key))
            return v;
    return {};
}

// The synthetic objective: minimum 0 at lr = 1e-3, x = 0.3; lr matters on a log scale.
double objective(const TrialParams &t)
{
    const double lr = valueOf(t, "optim.lr").toDouble();
    const double x = valueOf(t, "x").toDouble();
    return std::pow(std::log10(lr) + 3, 2) + std::pow(x - 0.3, 2) * 4;
}

QList<ParamSpec> bowl()
{
    return {numeric("optim.lr", Distribution::LogUniformValues, 1e-6, 1e-1),
            numeric("x", Distribution::Uniform, -1, 1)};
}

double bestAfter(int budget, quint64 seed, bool tpe)
{
    const QList<ParamSpec> space = bowl();
    QList<FinishedTrial> finished;
    double best = 1e300;
    for (int i = 0; i < budget; ++i) {
        SweepRng rng = SweepRng::forTrial(seed, i);
        const TrialParams t =
            tpe ? suggestTpe(space, finished, Goal::Minimize, rng) : sampleRandom(space, rng);
        const double y = objective(t);
        finished.append({t, y});
        best = std::min(best, y);
    }
    return best;
}

}  // namespace

class TestSweepSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gridIsTheCartesianProductFirstKeySlowest()
    {
        const QList<ParamSpec> space{
            categorical("a", {qint64(1), qint64(2)}),
            categorical("b", {QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")},
                        ConfigKey::Type::String)};
        QCOMPARE(gridSize(space), 6);
        const QList<TrialParams> g = gridTrials(space, 0);
        QCOMPARE(g.size(), 6);
        QStringList seen;
        for (const TrialParams &t : g)
            seen << formatParamValue(t[0].second) + formatParamValue(t[1].second);
        QCOMPARE(seen,
                 (QStringList{QStringLiteral("1x"), QStringLiteral("1y"), QStringLiteral("1z"),
                              QStringLiteral("2x"), QStringLiteral("2y"), QStringLiteral("2z")}));
    }

    void gridRespectsRunCapAndKeepsConstants()
    {
        ParamSpec seed = categorical("seed", {qint64(7)});
        seed.distribution = Distribution::Constant;
        const QList<ParamSpec> space{categorical("a", {qint64(1), qint64(2), qint64(3)}), seed};
        const QList<TrialParams> g = gridTrials(space, 2);
        QCOMPARE(g.size(), 2);
        QCOMPARE(valueOf(g[1], "a"), QVariant(qint64(2)));
        QCOMPARE(valueOf(g[1], "seed"), QVariant(qint64(7)));
    }

    void randomIsReproducibleAndSeedDependent()
    {
        const QList<ParamSpec> space = bowl();
        SweepRng a = SweepRng::forTrial(42, 3), b = SweepRng::forTrial(42, 3), c = SweepRng::forTrial(43, 3);
        const TrialParams ta = sampleRandom(space, a);
        QCOMPARE(sampleRandom(space, b), ta);
        QVERIFY(sampleRandom(space, c) != ta);
        // Pinned: the stream is ours (xoshiro256**), the same on every machine and library.
        SweepRng pinned(1);
        QCOMPARE(pinned.next(), Q_UINT64_C(0xb3f2af6d0fc710c5));
    }

    void everyDistributionStaysInRange()
    {
        QList<ParamSpec> space{
            numeric("u", Distribution::Uniform, -2, 3),
            numeric("i", Distribution::IntUniform, 1, 4, ConfigKey::Type::Int),
            numeric("lu", Distribution::LogUniform, std::log(1e-4), std::log(1e-2)),
            numeric("luv", Distribution::LogUniformValues, 1e-5, 1e-1),
            numeric("qluv", Distribution::QLogUniformValues, 2, 64, ConfigKey::Type::Int),
        };
        space[4].q = 2;
        ParamSpec q = numeric("q", Distribution::QUniform, 0, 1);
        q.q = 0.25;
        space.append(q);
        ParamSpec n = numeric("n", Distribution::Normal, 0, 0);
        n.mu = 0.9;
        n.sigma = 0.5;
        n.lowerBound = 0;
        n.upperBound = 1;
        space.append(n);
        ParamSpec c = categorical("c", {QStringLiteral("a"), QStringLiteral("b")}, ConfigKey::Type::String);
        c.probabilities = {0.0, 1.0};
        space.append(c);
        // W&B's: ln(1/x) uniform in [4.6, 11.5] (natural logs, or the bounds of x), ln(x) normal.
        space.append(numeric("ilu", Distribution::InvLogUniform, 4.6, 11.5));
        space.append(numeric("iluv", Distribution::InvLogUniformValues, 1e-5, 1e-2));
        ParamSpec ln = numeric("ln", Distribution::QLogNormal, 0, 0, ConfigKey::Type::Int);
        ln.mu = 3;
        ln.sigma = 0.5;
        ln.q = 2;
        space.append(ln);
        double lnSum = 0;
        QSet<qint64> ints;
        for (int i = 0; i < 2000; ++i) {
            SweepRng rng = SweepRng::forTrial(9, i);
            const TrialParams t = sampleRandom(space, rng);
            const double u = valueOf(t, "u").toDouble();
            QVERIFY(u >= -2 && u < 3);
            const QVariant iv = valueOf(t, "i");
            QCOMPARE(iv.typeId(), int(QMetaType::LongLong));
            QVERIFY(iv.toLongLong() >= 1 && iv.toLongLong() <= 4);
            ints.insert(iv.toLongLong());
            const double lu = valueOf(t, "lu").toDouble();
            QVERIFY(lu >= 1e-4 * 0.999999 && lu <= 1e-2 * 1.000001);
            const double luv = valueOf(t, "luv").toDouble();
            QVERIFY(luv >= 1e-5 * 0.999999 && luv <= 1e-1 * 1.000001);
            const qint64 qluv = valueOf(t, "qluv").toLongLong();
            QVERIFY(qluv >= 2 && qluv <= 64 && qluv % 2 == 0);
            const double qv = valueOf(t, "q").toDouble();
            QCOMPARE(std::fmod(qv, 0.25), 0.0);
            const double nv = valueOf(t, "n").toDouble();
            QVERIFY(nv >= 0 && nv <= 1);  // clipped to the key's range
            QCOMPARE(valueOf(t, "c").toString(), QStringLiteral("b"));  // probability 1
            const double ilu = valueOf(t, "ilu").toDouble();
            QVERIFY(ilu >= std::exp(-11.5) * 0.999999 && ilu <= std::exp(-4.6) * 1.000001);
            const double iluv = valueOf(t, "iluv").toDouble();
            QVERIFY(iluv >= 1e-5 * 0.999999 && iluv <= 1e-2 * 1.000001);
            const qint64 lnv = valueOf(t, "ln").toLongLong();
            QVERIFY(lnv >= 0 && lnv % 2 == 0);
            lnSum += std::log(std::max<double>(double(lnv), 1));
        }
        QCOMPARE(ints.size(), 4);  // both ends included
        // ln(x) averages mu (exp(3) = 20: rounding to 2 moves it little).
        QVERIFY2(std::abs(lnSum / 2000 - 3) < 0.1, qPrintable(QString::number(lnSum / 2000)));
    }

    void tpeIsReproducibleAndStartsRandom()
    {
        const QList<ParamSpec> space = bowl();
        SweepRng a = SweepRng::forTrial(5, 0), b = SweepRng::forTrial(5, 0);
        QCOMPARE(suggestTpe(space, {}, Goal::Minimize, a), sampleRandom(space, b));
        QList<FinishedTrial> finished;
        for (int i = 0; i < 15; ++i) {
            SweepRng r = SweepRng::forTrial(5, i);
            const TrialParams t = sampleRandom(space, r);
            finished.append({t, objective(t)});
        }
        SweepRng c = SweepRng::forTrial(5, 99), d = SweepRng::forTrial(5, 99);
        QCOMPARE(suggestTpe(space, finished, Goal::Minimize, c),
                 suggestTpe(space, finished, Goal::Minimize, d));
    }

    void tpeFollowsTheGoal()
    {
        // All good trials had the same categorical value: TPE proposes it (for either goal).
        const QList<ParamSpec> space{categorical("c", {qint64(0), qint64(1), qint64(2), qint64(3)})};
        for (const Goal goal : {Goal::Minimize, Goal::Maximize}) {
            QList<FinishedTrial> finished;
            for (int i = 0; i < 40; ++i) {
                const qint64 c = i % 4;
                const double good = goal == Goal::Minimize ? 0.0 : 10.0;
                finished.append({TrialParams{{QStringLiteral("c"), c}}, c == 2 ? good : 5.0});
            }
            int hits = 0;
            for (int i = 0; i < 20; ++i) {
                SweepRng rng = SweepRng::forTrial(1, i);
                hits += valueOf(suggestTpe(space, finished, goal, rng), "c").toLongLong() == 2;
            }
            QVERIFY2(hits >= 18, qPrintable(QString::number(hits)));
        }
    }

    // TPE vs random search on the bowl: mean best objective after 40 trials over 30 seeds.
    void tpeBeatsRandomSearch()
    {
        const int seeds = 30, budget = 40;
        double tpe = 0, random = 0;
        int tpeWins = 0;
        for (int s = 0; s < seeds; ++s) {
            const double t = bestAfter(budget, quint64(s) + 1000, true);
            const double r = bestAfter(budget, quint64(s) + 1000, false);
            tpe += t / seeds;
            random += r / seeds;
            tpeWins += t < r;
        }
        qInfo("mean best after %d trials over %d seeds: TPE %.4f, random %.4f; TPE better on %d seeds",
              budget, seeds, tpe, random, tpeWins);
        QVERIFY(tpe < random * 0.6);
        QVERIFY(tpeWins > seeds / 2);
    }

    void initialTrialsPerMethod()
    {
        SweepSpec spec;
        spec.parameters = bowl();
        spec.runCap = 7;
        spec.maxConcurrent = 3;
        spec.seed = 11;
        spec.method = SearchMethod::Random;
        const QList<TrialParams> r = initialTrials(spec);
        QCOMPARE(r.size(), 7);
        QCOMPARE(initialTrials(spec), r);
        spec.method = SearchMethod::Bayes;
        const QList<TrialParams> b = initialTrials(spec);
        QCOMPARE(b.size(), 3);
        QCOMPARE(b[0], r[0]);  // bayes starts random, from the same per-trial streams
    }
};

ORRERY_TEST_MAIN(TestSweepSearch, QCoreApplication)
#include "tst_sweepsearch.moc"
