// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery runs list --filter` takes the GUI filter box's syntax (terms joined by AND, one parser:
// core::parseRunFilter), and both faces refuse a filter whose value is not what the operator
// compares, naming the term, instead of quietly showing no runs. The real binary over a database
// written through the TrackingStore API.
#include "testsupport.h"

#include "orrery/core/store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace orrery::core;

class TestCliFilter : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_db;

    orrery::test::Ran list(const QString &filter)
    {
        return orrery::test::runProcess(qEnvironmentVariable("ORRERY_CLI"),
                                        {QStringLiteral("--db"), m_db, QStringLiteral("runs"),
                                         QStringLiteral("list"), QStringLiteral("--json"),
                                         QStringLiteral("--filter"), filter});
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = m_dir.filePath(QStringLiteral("filter.sqlite"));
        auto store = TrackingStore::open(m_db);
        const ExperimentId e = store->ensureExperiment(QStringLiteral("shapes"));
        // (lr, eval/loss): only lr1e-3 and lr3e-3 have lr >= 1e-3 and loss < 0.39.
        const std::pair<const char *, double> runs[] = {
            {"1e-4", 0.30}, {"1e-3", 0.35}, {"3e-3", 0.38}, {"1e-2", 0.45}};
        qint64 start = 1'700'000'000'000;
        for (const auto &[lr, loss] : runs) {
            const RunId r = store->createRun(e, QStringLiteral("lr") + QLatin1String(lr), start++);
            store->logParams(r, {{QStringLiteral("optim.lr"), QLatin1String(lr)}});
            store->logMetrics(r, {{QStringLiteral("eval/loss"), {10, start, loss}}});
            store->endRun(r, RunStatus::Finished);
        }
    }

    void andJoinedTermsAllHold()
    {
        const auto r = list(QStringLiteral("params.optim.lr >= 1e-3 and metrics.eval/loss < 0.39"));
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QStringList names;
        for (const QJsonValue &v : QJsonDocument::fromJson(r.out.toUtf8()).array())
            names.push_back(v[QLatin1String("name")].toString());
        names.sort();
        QCOMPARE(names, (QStringList{QStringLiteral("lr1e-3"), QStringLiteral("lr3e-3")}));
    }

    void aDoubledOperatorIsAUsageErrorNamingTheTerm()
    {
        const auto r = list(QStringLiteral("params.optim.lr >= 1e-4 and params.optim.lr >== banana"));
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("params.optim.lr >== banana")), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    // The table's read of every param of many runs (RunQuery::params with many keys) takes one
    // pass over the params table: the same values as a key-by-key read, a key some runs lack
    // absent from those runs.
    void manyParamsOfManyRunsAreReadInOnePass()
    {
        QTemporaryDir dir;
        auto store = TrackingStore::open(dir.filePath(QStringLiteral("many.sqlite")));
        const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
        for (int i = 0; i < 100; ++i) {
            const RunId r = store->createRun(e, QStringLiteral("r%1").arg(i), 1'700'000'000'000 + i);
            QList<std::pair<QString, QString>> params;
            for (int k = 0; k < 8; ++k)
                if (k < 6 || i % 2)  // k6, k7: odd runs only
                    params.push_back({QStringLiteral("k%1").arg(k), QStringLiteral("%1-%2").arg(i).arg(k)});
            params.push_back({QStringLiteral("unasked"), QStringLiteral("x")});
            store->logParams(r, params);
        }
        RunQuery q;
        for (int k = 0; k < 8; ++k)
            q.params.push_back(QStringLiteral("k%1").arg(k));
        const QList<RunRow> rows = store->queryRuns(q);
        QCOMPARE(rows.size(), 100);
        for (const RunRow &row : rows) {
            const int i = row.run.name.mid(1).toInt();
            QCOMPARE(row.params.size(), i % 2 ? 8 : 6);
            for (int k = 0; k < (i % 2 ? 8 : 6); ++k)
                QCOMPARE(row.params.value(QStringLiteral("k%1").arg(k)),
                         QStringLiteral("%1-%2").arg(i).arg(k));
        }
    }

    // The parser both faces call: what it refuses and what it still takes.
    void parserRefusesValuesTheOperatorCannotCompare_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::newRow("doubled operator") << QStringLiteral("params.optim.lr >== banana") << false;
        QTest::newRow("doubled equals") << QStringLiteral("params.seed == = 1") << false;
        QTest::newRow("no value") << QStringLiteral("params.seed =") << false;
        QTest::newRow("param ordered against text") << QStringLiteral("params.optim.lr >= banana") << false;
        QTest::newRow("and inside one term") << QStringLiteral("params.optim.lr >= 1e-3 and x") << false;
        QTest::newRow("param ordered against a number") << QStringLiteral("params.optim.lr >= 1e-3") << true;
        QTest::newRow("param equals text") << QStringLiteral("params.model.size = tiny") << true;
        QTest::newRow("quoted value") << QStringLiteral("tags.note = '>= fine'") << true;
        QTest::newRow("double equals") << QStringLiteral("params.seed == 1") << true;
        QTest::newRow("like") << QStringLiteral("attributes.name LIKE 'lr%'") << true;
    }
    void parserRefusesValuesTheOperatorCannotCompare()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        const auto terms = parseRunFilter(text);
        QCOMPARE(bool(terms), ok);
        QCOMPARE(terms.problem().isEmpty(), ok);
    }
};

QTEST_GUILESS_MAIN(TestCliFilter)
#include "tst_cli_filter.moc"
