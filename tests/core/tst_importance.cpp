// SPDX-License-Identifier: GPL-3.0-or-later
// Parameter importance (core/importance.h) on synthetic runs whose answer is known — the metric
// depends strongly on x1, weakly on x2, not at all on x3; a categorical param that matters; a log
// param; too few runs — and `orrery sweep importance` as a user runs it: the real CLI on a store
// written through TrackingStore, as a table, as JSON, and its exit codes.
#include "testsupport.h"

#include "orrery/core/importance.h"
#include "orrery/core/store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace orrery::core;

namespace {

// A deterministic uniform [0, 1) sequence (the test's own, so its data never changes).
struct Lcg {
    quint64 state;
    double next()
    {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return double(state >> 11) / double(1ULL << 53);
    }
};

const ParamImportance *find(const ImportanceResult &r, const QString &key)
{
    for (const ParamImportance &p : r.params)
        if (p.key == key)
            return &p;
    return nullptr;
}

QString num(double v)
{
    return QString::number(v, 'g', 17);
}

// The CLI's answer as bytes (JSON is parsed from them).
struct CliRun {
    int code = -1;
    QByteArray out, err;
};

}  // namespace

class TestImportance : public QObject {
    Q_OBJECT
    QTemporaryDir m_home;

    CliRun cli(const QStringList &args)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HOME"), m_home.path());
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        const auto r = orrery::test::runProcess(qEnvironmentVariable("ORRERY_CLI"), args, {}, env, 60'000);
        return {r.code, r.out.toUtf8(), r.err.toUtf8()};
    }

    // A finished grid sweep `name` over optim.lr (log) x seed whose loss falls with lr and
    // rises a little with the seed; `lrs` values of lr, 3 seeds.
    static void addSweep(TrackingStore &store, const QString &name, int lrs)
    {
        const ExperimentId e = store.ensureExperiment(QStringLiteral("shapes"));
        Sweep s;
        s.name = name;
        s.experimentId = e;
        s.method = QStringLiteral("grid");
        s.metricName = QStringLiteral("eval/loss");
        s.state = QStringLiteral("finished");
        s.trialCount = lrs * 3;
        s.spec = QStringLiteral("name: %1\nmethod: grid\nmetric: {name: eval/loss, goal: minimize}\n"
                                "parameters:\n  optim.lr: {values: [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]}\n"
                                "  seed: {values: [0, 1, 2]}\n  model.width: {value: 64}\n")
                     .arg(name);
        const SweepId sweep = store.createSweep(s);
        int index = 0;
        for (int i = 0; i < lrs; ++i)
            for (int seed = 0; seed < 3; ++seed) {
                const double lr = std::pow(10.0, -5 + i);
                const RunId r =
                    store.createRun(e, QStringLiteral("%1-%2").arg(name).arg(index), 1000 + index);
                store.logParams(r,
                                {{QStringLiteral("optim.lr"), num(lr)},
                                 {QStringLiteral("seed"), QString::number(seed)},
                                 {QStringLiteral("model.width"), QStringLiteral("64")}});
                store.logMetrics(r,
                                 {{QStringLiteral("eval/loss"), {100, 2000, 1.0 - 0.15 * i + 0.01 * seed}}});
                store.endRun(r, RunStatus::Finished);
                Trial t;
                t.sweepId = sweep;
                t.index = index++;
                t.runId = r;
                t.params = QStringLiteral(R"({"optim.lr": %1, "seed": %2, "model.width": 64})")
                               .arg(num(lr))
                               .arg(seed);
                t.setState(TrialState::Completed);
                store.addTrial(t);
            }
    }

private Q_SLOTS:
    // y = 10·x1 + 1·x2 (+ x3 not at all), each column its own uniform sequence: the answer's
    // order, signs and the irrelevant param's near-zero share are known.
    void strongWeakAndNone_data()
    {
        QTest::addColumn<double>("sign");  // of x1's and x2's effect
        QTest::addColumn<int>("runs");
        QTest::newRow("positive, 60 runs") << 1.0 << 60;
        QTest::newRow("negative, 60 runs") << -1.0 << 60;
        QTest::newRow("positive, 24 runs (a small sweep)") << 1.0 << 24;
    }
    void strongWeakAndNone()
    {
        QFETCH(double, sign);
        QFETCH(int, runs);
        Lcg rng{7};
        QList<ImportanceRun> data;
        for (int i = 0; i < runs; ++i) {
            const double x1 = rng.next(), x2 = rng.next(), x3 = rng.next();
            data.push_back({{{QStringLiteral("x1"), num(x1)},
                             {QStringLiteral("x2"), num(x2)},
                             {QStringLiteral("x3"), num(x3)},
                             {QStringLiteral("width"), QStringLiteral("64")}},  // a constant
                            sign * (10 * x1 + 2 * x2)});
        }
        const ImportanceResult r =
            paramImportance(data, {{QStringLiteral("x1"), false}, {QStringLiteral("x2"), false}});
        QVERIFY2(r.ok(), qPrintable(r.problem));
        QCOMPARE(r.runsUsed, runs);
        QStringList order;
        double sum = 0;
        for (const ParamImportance &p : r.params) {
            order << p.key;
            sum += p.importance;
        }
        // x3 varies and is numeric, so it is listed although not swept; the constant is not.
        QCOMPARE(order, (QStringList{QStringLiteral("x1"), QStringLiteral("x2"), QStringLiteral("x3")}));
        QVERIFY(std::abs(sum - 1) < 1e-9);
        const ParamImportance *x1 = find(r, QStringLiteral("x1")), *x2 = find(r, QStringLiteral("x2")),
                              *x3 = find(r, QStringLiteral("x3"));
        QVERIFY(x1->swept && !find(r, QStringLiteral("x3"))->swept);
        QVERIFY2(x1->importance > 0.7, qPrintable(QString::number(x1->importance)));
        QVERIFY2(x2->importance > x3->importance, qPrintable(QString::number(x2->importance)));
        QVERIFY2(x3->importance < 0.05, qPrintable(QString::number(x3->importance)));
        QVERIFY(x1->correlation && x2->correlation && x3->correlation);
        QVERIFY2(*x1->correlation * sign > 0.8, qPrintable(QString::number(*x1->correlation)));
        QVERIFY2(*x2->correlation * sign > 0, qPrintable(QString::number(*x2->correlation)));
        QVERIFY2(std::abs(*x3->correlation) < 0.35, qPrintable(QString::number(*x3->correlation)));
        QCOMPARE(x1->runs, runs);
        // The forest is seeded: the same data gives the same numbers.
        const ImportanceResult again =
            paramImportance(data, {{QStringLiteral("x1"), false}, {QStringLiteral("x2"), false}});
        for (qsizetype i = 0; i < r.params.size(); ++i)
            QCOMPARE(again.params[i].importance, r.params[i].importance);
    }

    // An optimizer (text) that matters and a numeric param that does not: the categorical one
    // leads, has no correlation (text has no order), and a run lacking the metric is left out.
    void categoricalThatMatters()
    {
        const QStringList optimizers{QStringLiteral("adam"), QStringLiteral("sgd"), QStringLiteral("lion")};
        const double effect[] = {0.2, 1.0, 0.4};
        Lcg rng{11};
        QList<ImportanceRun> data;
        for (int i = 0; i < 45; ++i)
            data.push_back({{{QStringLiteral("optim.name"), optimizers[i % 3]},
                             {QStringLiteral("noise"), num(rng.next())}},
                            effect[i % 3] + 0.01 * rng.next()});
        data.push_back({{{QStringLiteral("optim.name"), QStringLiteral("adam")}}, std::nan("")});
        const ImportanceResult r = paramImportance(data, {{QStringLiteral("optim.name"), false}});
        QVERIFY2(r.ok(), qPrintable(r.problem));
        QCOMPARE(r.runsUsed, 45);
        QCOMPARE(r.runsLeftOut, 1);
        QCOMPARE(r.params.front().key, QStringLiteral("optim.name"));
        QVERIFY(r.params.front().categorical);
        QVERIFY(!r.params.front().correlation);
        QVERIFY2(r.params.front().importance > 0.9, qPrintable(QString::number(r.params.front().importance)));
        QCOMPARE(r.params.front().runs, 45);
    }

    // A learning rate over five decades: correlated on log10 of it (where the metric is linear),
    // not on the value (where four of five points sit at the left edge).
    void logParamCorrelatesOnItsLog()
    {
        QList<ImportanceRun> data;
        for (int i = 0; i < 10; ++i) {
            const double lr = std::pow(10.0, -5 + i * 0.5);
            data.push_back({{{QStringLiteral("optim.lr"), num(lr)}}, 3 + std::log10(lr)});
        }
        const ImportanceResult asLog = paramImportance(data, {{QStringLiteral("optim.lr"), true}});
        QVERIFY(asLog.ok());
        QVERIFY(asLog.params.front().log);
        QVERIFY2(*asLog.params.front().correlation > 0.999,
                 qPrintable(QString::number(*asLog.params.front().correlation)));
        const ImportanceResult linear = paramImportance(data, {{QStringLiteral("optim.lr"), false}});
        QVERIFY(*linear.params.front().correlation < 0.9);
        QCOMPARE(asLog.params.front().importance, 1.0);
    }

    void notEnoughRuns_data()
    {
        QTest::addColumn<int>("withMetric");
        QTest::addColumn<int>("without");
        QTest::newRow("no runs") << 0 << 0;
        QTest::newRow("three runs") << 3 << 0;
        QTest::newRow("three with the metric, five without") << 3 << 5;
    }
    void notEnoughRuns()
    {
        QFETCH(int, withMetric);
        QFETCH(int, without);
        QList<ImportanceRun> data;
        for (int i = 0; i < withMetric + without; ++i)
            data.push_back(
                {{{QStringLiteral("x"), QString::number(i)}}, i < withMetric ? double(i) : std::nan("")});
        const ImportanceResult r = paramImportance(data, {{QStringLiteral("x"), false}});
        QVERIFY(!r.ok());
        QVERIFY2(r.problem.startsWith(QLatin1String("not enough runs")), qPrintable(r.problem));
        QCOMPARE(r.runsUsed, withMetric);
        QCOMPARE(r.runsLeftOut, without);
        QVERIFY(r.params.isEmpty());
    }

    void nothingVaries()
    {
        QList<ImportanceRun> data;
        for (int i = 0; i < 6; ++i)
            data.push_back({{{QStringLiteral("width"), QStringLiteral("64")}}, double(i)});
        const ImportanceResult r = paramImportance(data, {});
        QVERIFY(!r.ok());
        QVERIFY2(r.problem.contains(QLatin1String("no param varies")), qPrintable(r.problem));
    }

    // --- the CLI -----------------------------------------------------------------------------
    void cliPrintsTheSweepsParamsByImportance()
    {
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI must name the built orrery");
        const QString db = m_home.filePath(QStringLiteral("importance.sqlite"));
        {
            auto store = TrackingStore::open(db);
            addSweep(*store, QStringLiteral("lr-sweep"), 5);
            addSweep(*store, QStringLiteral("tiny"), 1);  // 3 runs
        }
        const CliRun table = cli({QStringLiteral("--db"), db, QStringLiteral("sweep"),
                                  QStringLiteral("importance"), QStringLiteral("lr-sweep")});
        QVERIFY2(table.code == 0, table.err.constData());
        const QStringList lines = QString::fromUtf8(table.out).split(QLatin1Char('\n'));
        QVERIFY2(lines.value(0).contains(QLatin1String("eval/loss")), table.out.constData());
        QVERIFY2(lines.value(0).contains(QLatin1String("15 run(s)")), table.out.constData());
        QVERIFY2(lines.value(1).startsWith(QLatin1String("param")), table.out.constData());
        QVERIFY2(lines.value(1).contains(QLatin1String("correlation")), table.out.constData());
        // optim.lr first (it decides the loss), shown log, correlated negatively; seed after it.
        QVERIFY2(lines.value(2).startsWith(QLatin1String("optim.lr (log)")), table.out.constData());
        QVERIFY2(lines.value(2).contains(QLatin1String("-1.00")), table.out.constData());
        QVERIFY2(lines.value(3).startsWith(QLatin1String("seed")), table.out.constData());
        QVERIFY2(!table.out.contains("model.width"), table.out.constData());  // a constant

        const CliRun json =
            cli({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("importance"),
                 QStringLiteral("lr-sweep"), QStringLiteral("--json")});
        QCOMPARE(json.code, 0);
        QJsonParseError error;
        const QJsonObject o = QJsonDocument::fromJson(json.out, &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(o.value(QLatin1String("metric")).toString(), QStringLiteral("eval/loss"));
        QCOMPARE(o.value(QLatin1String("runs_used")).toInt(), 15);
        const QJsonArray params = o.value(QLatin1String("params")).toArray();
        QCOMPARE(params.size(), 2);
        QCOMPARE(params[0].toObject().value(QLatin1String("param")).toString(), QStringLiteral("optim.lr"));
        QVERIFY(params[0].toObject().value(QLatin1String("correlation")).toDouble() < -0.9);
        QVERIFY(params[0].toObject().value(QLatin1String("importance")).toDouble() >
                params[1].toObject().value(QLatin1String("importance")).toDouble());
        QVERIFY(params[0].toObject().value(QLatin1String("log")).toBool());
        double sum = 0;
        for (const QJsonValue &p : params)
            sum += p.toObject().value(QLatin1String("importance")).toDouble();
        QVERIFY(std::abs(sum - 1) < 1e-9);

        // Failures: too few runs and an unknown sweep are the operation's (1); no sweep, usage (2).
        const CliRun tiny = cli({QStringLiteral("--db"), db, QStringLiteral("sweep"),
                                 QStringLiteral("importance"), QStringLiteral("tiny")});
        QCOMPARE(tiny.code, 1);
        QVERIFY2(tiny.err.contains("not enough runs: 3 of 3 have logged eval/loss"), tiny.err.constData());
        QVERIFY(tiny.out.isEmpty());
        const CliRun unknown = cli({QStringLiteral("--db"), db, QStringLiteral("sweep"),
                                    QStringLiteral("importance"), QStringLiteral("no-such-sweep")});
        QCOMPARE(unknown.code, 1);
        QVERIFY2(unknown.err.contains("no-such-sweep"), unknown.err.constData());
        const CliRun usage =
            cli({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("importance")});
        QCOMPARE(usage.code, 2);
        QVERIFY2(usage.err.contains("SWEEP is missing"), usage.err.constData());
    }
};

ORRERY_TEST_MAIN(TestImportance, QCoreApplication)
#include "tst_importance.moc"
