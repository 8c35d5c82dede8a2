// SPDX-License-Identifier: GPL-3.0-or-later
// What keeps a database of 100,000 runs quick to open (bench_runs_scale), against real SQLite
// files: the params and tags indexes by key (schema v11) on a database that had none, the param
// keys read by them, a sweep's overview from rows already read being the store's own, and every
// param of thousands of runs read on a second connection being each run's own.
#include "testsupport.h"

#include "orrery/core/store.h"
#include "orrery/core/sweepoverview.h"

#include <QCoreApplication>
#include <QTemporaryDir>

#include <sqlite3.h>

#include <cmath>
#include <limits>

using namespace orrery::core;

namespace {

// Runs `sql` on the file with SQLite itself, as an older Orrery left it; the last column of each
// row comes back (EXPLAIN QUERY PLAN's detail).
QStringList raw(const QString &path, const char *sql)
{
    sqlite3 *db = nullptr;
    QStringList out;
    if (sqlite3_open(path.toUtf8().constData(), &db) != SQLITE_OK)
        return {QStringLiteral("open failed")};
    sqlite3_exec(
        db, sql,
        [](void *rows, int n, char **values, char **) {
            static_cast<QStringList *>(rows)->push_back(
                n > 0 && values[n - 1] ? QString::fromUtf8(values[n - 1]) : QString());
            return 0;
        },
        &out, nullptr);
    sqlite3_close(db);
    return out;
}

}  // namespace

class TestStoreScale : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_count = 0;
    QString freshPath() { return m_dir.filePath(QStringLiteral("db%1.sqlite").arg(++m_count)); }

private Q_SLOTS:
    // A version-10 database (params and tags not indexed by key) is migrated on open: the
    // indexes exist, the keys come back by them, in name order, and follow deleted runs.
    void migratesAVersion10FileToKeyIndexes()
    {
        const QString path = freshPath();
        RunId only = 0;
        {
            auto store = TrackingStore::open(path);
            const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
            for (int i = 0; i < 3; ++i) {
                const RunId r = store->createRun(e, QStringLiteral("r%1").arg(i), 1000 + i);
                store->logParams(r,
                                 {{QStringLiteral("seed"), QString::number(i)},
                                  {QStringLiteral("optim.lr"), QStringLiteral("1e-3")}});
                store->setTags(r, {{QStringLiteral("team"), QStringLiteral("a")}});
                only = r;
            }
            store->logParams(only,
                             {{QStringLiteral("zz.only"), QStringLiteral("1")},
                              {QStringLiteral("Model.width"), QStringLiteral("64")}});
        }
        raw(path, "DROP INDEX params_by_key; DROP INDEX tags_by_key; PRAGMA user_version = 10;");
        QCOMPARE(raw(path, "SELECT name FROM sqlite_master WHERE name LIKE '%_by_key'"), QStringList{});

        auto store = TrackingStore::open(path);
        QCOMPARE(store->schemaVersion(), TrackingStore::currentSchemaVersion());
        QCOMPARE(store->schemaVersion(), 11);
        store.reset();
        QCOMPARE(raw(path, "SELECT name FROM sqlite_master WHERE name LIKE '%_by_key' ORDER BY name"),
                 (QStringList{QStringLiteral("params_by_key"), QStringLiteral("tags_by_key")}));
        // The next key above one is a seek in the index, not a scan of every param row.
        const QStringList plan = raw(path, "EXPLAIN QUERY PLAN SELECT min(key) FROM params WHERE key > 'a'");
        QVERIFY2(plan.join(QLatin1Char(' ')).contains(QLatin1String("params_by_key")),
                 qPrintable(plan.join(QLatin1Char(' '))));

        store = TrackingStore::open(path);
        // Byte order, as SQLite sorts text (the old DISTINCT ... ORDER BY key did the same).
        QCOMPARE(store->paramKeys(),
                 (QStringList{QStringLiteral("Model.width"), QStringLiteral("optim.lr"),
                              QStringLiteral("seed"), QStringLiteral("zz.only")}));
        store->deleteRuns({only});
        QCOMPARE(store->paramKeys(), (QStringList{QStringLiteral("optim.lr"), QStringLiteral("seed")}));
        RunQuery q;
        q.tags = {QStringLiteral("team")};
        const QList<RunRow> rows = store->queryRuns(q);
        QCOMPARE(rows.size(), 2);
        for (const RunRow &r : rows)
            QCOMPARE(r.tags.value(QStringLiteral("team")), QStringLiteral("a"));
    }

    // From 5,000 runs a table of every param is read by a pass over the params on a connection
    // of its own, beside the runs' read: each row still gets its own run's params, no more and
    // no fewer (runs without params, an archived run, a shared value, a distinct one per run).
    // Inside a write transaction the params come from the transaction's own connection, which
    // alone sees what it has not committed.
    void paramsOfThousandsOfRunsAreEachRunsOwn()
    {
        auto store = TrackingStore::open(freshPath());
        const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
        QHash<RunId, QMap<QString, QString>> want;
        store->writeTransaction([&] {
            for (int i = 0; i < 6000; ++i) {
                const RunId r = store->createRun(e, QStringLiteral("r%1").arg(i), 1000 + i);
                QMap<QString, QString> params;
                if (i % 7 != 3) {  // every 7th run has no params
                    params.insert(QStringLiteral("optim.lr"), QString::number(1e-5 * (i + 1)));
                    params.insert(QStringLiteral("seed"), QString::number(i % 5));
                    params.insert(QStringLiteral("model.depth"), QStringLiteral("12"));
                    if (i % 2)
                        params.insert(QStringLiteral("data.path"), QStringLiteral("/data/%1").arg(i % 3));
                    for (int k = 0; k < 3; ++k)
                        params.insert(QStringLiteral("k%1").arg(k), QString::number((i + k) % 4));
                }
                QList<std::pair<QString, QString>> list;
                for (auto it = params.cbegin(); it != params.cend(); ++it)
                    list.push_back({it.key(), it.value()});
                if (!list.isEmpty())
                    store->logParams(r, list);
                want.insert(r, params);
            }
        });
        const RunId archived = want.keys().front();
        store->archiveRuns({archived}, true);
        want.remove(archived);

        RunQuery q;
        q.params = store->paramKeys();
        QCOMPARE(q.params.size(), 7);
        // The rows are handed over before their params are in, with their metrics, and do not
        // move after: the window's sweep overviews keep pointers to them while the params are read.
        int calls = 0;
        const RunRow *handed = nullptr;
        const QList<RunRow> rows = store->queryRuns(q, [&](const QList<RunRow> &early) {
            ++calls;
            handed = early.constData();
            QCOMPARE(early.size(), 5999);
        });
        QCOMPARE(calls, 1);
        QCOMPARE(rows.constData(), handed);
        QCOMPARE(rows.size(), 5999);
        for (const RunRow &row : rows)
            QCOMPARE(row.params, want.value(row.run.id));

        store->writeTransaction([&] {
            const RunId r = store->createRun(e, QStringLiteral("uncommitted"), 99'999);
            store->logParams(r,
                             {{QStringLiteral("seed"), QStringLiteral("42")},
                              {QStringLiteral("k0"), QStringLiteral("1")}});
            const QList<RunRow> inside = store->queryRuns(q);
            QCOMPARE(inside.size(), 6000);
            QCOMPARE(inside.front().run.name, QStringLiteral("uncommitted"));  // the newest first
            QCOMPARE(inside.front().params.value(QStringLiteral("seed")), QStringLiteral("42"));
            QCOMPARE(inside.front().params.size(), 2);
        });
    }

    void paramKeysOfAnEmptyDatabase()
    {
        QCOMPARE(TrackingStore::open(freshPath())->paramKeys(), QStringList{});
    }

    // The window reads every run once and gives the rows to each sweep's overview: its trials
    // (attempts, step, latest and best value) and its best run are what the store's own reads
    // say, through ties, NaN, failed and killed runs, a retried trial and an archived run.
    void overviewFromRowsIsTheStores_data()
    {
        QTest::addColumn<bool>("maximize");
        QTest::addColumn<bool>("includeArchived");
        QTest::newRow("minimize") << false << false;
        QTest::newRow("maximize") << true << false;
        QTest::newRow("minimize, archived rows read") << false << true;
        QTest::newRow("maximize, archived rows read") << true << true;
    }
    void overviewFromRowsIsTheStores()
    {
        QFETCH(bool, maximize);
        QFETCH(bool, includeArchived);
        auto store = TrackingStore::open(freshPath());
        const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
        Sweep s;
        s.name = QStringLiteral("s");
        s.experimentId = e;
        s.method = QStringLiteral("grid");
        s.metricName = QStringLiteral("m");
        s.metricGoal = maximize ? Goal::Maximize : Goal::Minimize;
        s.state = QStringLiteral("finished");
        const SweepId sweep = store->createSweep(s);
        // Per trial: the metric's last value (nullopt: never logged), how the run ended.
        const double nan = std::numeric_limits<double>::quiet_NaN();
        struct Case {
            std::optional<double> value;
            RunStatus status;
        };
        const QList<Case> cases{{0.5, RunStatus::Finished}, {0.2, RunStatus::Failed},
                                {0.9, RunStatus::Killed},   {0.5, RunStatus::Finished},
                                {nan, RunStatus::Finished}, {std::nullopt, RunStatus::Finished},
                                {0.7, RunStatus::Finished}, {0.05, RunStatus::Finished}};
        QList<RunId> runs;
        for (int i = 0; i < cases.size(); ++i) {
            const RunId r = store->createRun(e, QStringLiteral("t%1").arg(i), 1000 + i);
            QList<std::pair<QString, MetricPoint>> pts{{QStringLiteral("other"), {7 + i, 1000, 1.0}}};
            if (cases[i].value) {
                pts.push_back({QStringLiteral("m"), {3, 1000, 0.3}});
                pts.push_back({QStringLiteral("m"), {5, 1000, *cases[i].value}});
            }
            store->logMetrics(r, pts);
            store->endRun(r, cases[i].status);
            Trial t;
            t.sweepId = sweep;
            t.index = i;
            t.runId = r;
            t.setState(cases[i].status == RunStatus::Finished ? TrialState::Completed : TrialState::Failed);
            store->addTrial(t);
            if (i == 1) {  // retried on the same run
                t.attempt = 1;
                t.setState(TrialState::Completed);
                store->addTrial(t);
            }
            runs.push_back(r);
        }
        store->archiveRuns({runs[7]}, true);  // the best of all, but archived: not the store's best

        OverviewOptions plain;
        plain.nowMs = 5000;
        plain.bestVideo = false;
        const SweepOverview want = readSweepOverview(*store, *store->sweep(sweep), plain);
        RunQuery all;
        all.includeArchived = includeArchived;
        const QList<RunRow> rows = store->queryRuns(all);
        QHash<RunId, const RunRow *> byId;
        for (const RunRow &r : rows)
            byId.insert(r.run.id, &r);
        OverviewOptions given = plain;
        given.runs = &byId;
        const SweepOverview got = readSweepOverview(*store, *store->sweep(sweep), given);

        QCOMPARE(got.trials.size(), want.trials.size());
        for (qsizetype i = 0; i < want.trials.size(); ++i) {
            const TrialSummary &a = got.trials[i], &b = want.trials[i];
            QCOMPARE(a.trial.index, b.trial.index);
            QCOMPARE(a.trial.attempt, b.trial.attempt);
            QCOMPARE(a.attempts, b.attempts);
            QCOMPARE(a.step, b.step);
            QCOMPARE(a.latest.has_value(), b.latest.has_value());
            QCOMPARE(a.best.has_value(), b.best.has_value());
            if (a.latest && !std::isnan(*b.latest))
                QCOMPARE(*a.latest, *b.latest);
            if (a.best)
                QCOMPARE(*a.best, *b.best);
        }
        QVERIFY(want.best);
        QVERIFY(got.best);
        QCOMPARE(got.best->run, want.best->run);
        QCOMPARE(got.best->value, want.best->value);
        QCOMPARE(got.best->trial, want.best->trial);
        // The case's answer, said plainly: the lower of the tied 0.5s (minimize: the failed 0.2 and
        // the archived 0.05 left out), the finished 0.7 (maximize: the killed 0.9 left out).
        QCOMPARE(want.best->run, maximize ? runs[6] : runs[0]);
        QCOMPARE(got.counts.total, want.counts.total);
        QCOMPARE(got.counts.failed, want.counts.failed);
    }
};

ORRERY_TEST_MAIN(TestStoreScale, QCoreApplication)
#include "tst_store_scale.moc"
