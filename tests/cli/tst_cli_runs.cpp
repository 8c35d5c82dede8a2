// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery experiments` and `orrery runs` as a user runs them: real processes, a real database
// file, run directories on disk; output parsed back (JSON, CSV) and exit codes checked.
#include "testsupport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

namespace {

struct Result {
    int code = -1;
    QByteArray out, err;
};

void writeRun(const QString &dir, double lr, int steps, const char *exitState)
{
    QDir().mkpath(dir);
    QFile f(dir + QStringLiteral("/events.jsonl"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        QStringLiteral(
            R"({"v":1,"t":1700000000,"kind":"start","run":{"world_size":1,"params":{"optim":{"lr":%1},"model":{"size":"tiny"}}}})"
            "\n")
            .arg(lr)
            .toUtf8());
    for (int s = 1; s <= steps; ++s)
        f.write(QStringLiteral(
                    R"({"v":1,"t":%1,"kind":"metrics","step":%2,"values":{"train/loss":%3,"eval/loss":%4}})"
                    "\n")
                    .arg(1700000000 + s)
                    .arg(s)
                    .arg(1.0 / s)
                    .arg(lr * 1000 + 1.0 / s)
                    .toUtf8());
    f.write(R"({"v":1,"t":1700009999,"kind":"artifact","step":5,"path":"samples/step-5.mp4","type":"video"})"
            "\n");
    f.close();
    QFile exit(dir + QStringLiteral("/exit.json"));
    QVERIFY(exit.open(QIODevice::WriteOnly));
    exit.write(QByteArray(R"({"state":")") + exitState + R"(","reason":"","step":0})");
}

}  // namespace

class TestCliRuns : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_db;

    Result run(QStringList args)
    {
        QProcess p;
        p.start(qEnvironmentVariable("ORRERY_CLI"), QStringList{QStringLiteral("--db"), m_db} + args);
        p.waitForFinished(60'000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }

    QJsonDocument json(const QStringList &args)
    {
        const Result r = run(args);
        if (r.code != 0)
            qWarning("%s", r.err.constData());
        return QJsonDocument::fromJson(r.out);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = m_dir.filePath(QStringLiteral("db/orrery.sqlite"));
        writeRun(m_dir.filePath(QStringLiteral("runs/exp/s1/0")), 0.001, 50, "completed");
        writeRun(m_dir.filePath(QStringLiteral("runs/exp/s1/1")), 0.0003, 50, "failed");
        writeRun(m_dir.filePath(QStringLiteral("runs/exp/s1/2")), 0.0001, 20, "preempted");
    }

    void readingAnEmptyDatabaseWorks()
    {
        const Result r = run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        QCOMPARE(QJsonDocument::fromJson(r.out).array().size(), 0);
    }

    void ingestIsIncremental()
    {
        const QStringList ingest{QStringLiteral("runs"),
                                 QStringLiteral("ingest"),
                                 m_dir.filePath(QStringLiteral("runs")),
                                 QStringLiteral("--experiment"),
                                 QStringLiteral("moving-shapes"),
                                 QStringLiteral("--json")};
        QJsonArray report = json(ingest).array();
        QCOMPARE(report.size(), 3);
        qint64 points = 0;
        for (const QJsonValue &v : report)
            points += v[QLatin1String("points")].toInteger();
        QCOMPARE(points, 240);
        report = json(ingest).array();
        for (const QJsonValue &v : report)
            QCOMPARE(v[QLatin1String("points")].toInteger(), 0);
    }

    void listFiltersSortsAndReportsStatus()
    {
        const QJsonArray all =
            json({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")}).array();
        QCOMPARE(all.size(), 3);
        const QJsonArray sorted =
            json({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--sort"),
                  QStringLiteral("eval/loss"), QStringLiteral("--filter"),
                  QStringLiteral("params.optim.lr >= 0.0003"), QStringLiteral("--json")})
                .array();
        QCOMPARE(sorted.size(), 2);
        QCOMPARE(sorted[0][QLatin1String("status")].toString(),
                 QStringLiteral("FAILED"));  // lr 3e-4: lower loss
        QCOMPARE(sorted[1][QLatin1String("status")].toString(), QStringLiteral("FINISHED"));
        const QJsonArray killed =
            json({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--status"),
                  QStringLiteral("killed"), QStringLiteral("--json")})
                .array();
        QCOMPARE(killed.size(), 1);
        const Result table = run({QStringLiteral("runs"), QStringLiteral("list")});
        QCOMPARE(table.code, 0);
        QVERIFY(table.out.startsWith("ID  RUN"));
        QVERIFY(table.out.contains("moving-shapes"));
        const QJsonArray exps =
            json({QStringLiteral("experiments"), QStringLiteral("list"), QStringLiteral("--json")}).array();
        QCOMPARE(exps.size(), 1);
        QCOMPARE(exps[0][QLatin1String("runs")].toInt(), 3);
    }

    void showCompareHistoryExport()
    {
        const QJsonObject show = json({QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1"),
                                       QStringLiteral("--json")})
                                     .object();
        QCOMPARE(show[QLatin1String("params")][QLatin1String("optim.lr")].toString(),
                 QStringLiteral("0.001"));
        QCOMPARE(show[QLatin1String("metrics")][QLatin1String("train/loss")][QLatin1String("count")].toInt(),
                 50);
        QCOMPARE(show[QLatin1String("artifacts")].toArray().size(), 1);
        const QJsonObject cmp = json({QStringLiteral("runs"), QStringLiteral("compare"), QStringLiteral("1"),
                                      QStringLiteral("2"), QStringLiteral("--json")})
                                    .object();
        QCOMPARE(cmp[QLatin1String("differing_params")].toArray(), QJsonArray{QStringLiteral("optim.lr")});
        const Result csv = run({QStringLiteral("runs"), QStringLiteral("history"), QStringLiteral("1"),
                                QStringLiteral("train/loss"), QStringLiteral("--csv")});
        QCOMPARE(csv.code, 0);
        const QList<QByteArray> lines = csv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 51);
        QCOMPARE(lines[0], QByteArray("step,time,value"));
        QVERIFY(lines[1].startsWith("1,1700000001.000,1"));
        const QJsonObject buckets =
            json({QStringLiteral("runs"), QStringLiteral("history"), QStringLiteral("1"),
                  QStringLiteral("train/loss"), QStringLiteral("--buckets"), QStringLiteral("5"),
                  QStringLiteral("--json")})
                .object();
        QVERIFY(buckets[QLatin1String("downsampled")].toBool());
        QCOMPARE(buckets[QLatin1String("buckets")].toArray().size(), 5);

        const QString out = m_dir.filePath(QStringLiteral("export/runs.csv"));
        QDir().mkpath(QFileInfo(out).absolutePath());
        QCOMPARE(run({QStringLiteral("runs"), QStringLiteral("export"), QStringLiteral("-o"), out}).code, 0);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = f.readAll().trimmed().split('\n');
        QCOMPARE(rows.size(), 4);
        QVERIFY(rows[0].contains("params.optim.lr") && rows[0].contains("metrics.eval/loss"));
        QVERIFY(!QFile::exists(out + QStringLiteral(".part")));
        const Result points =
            run({QStringLiteral("runs"), QStringLiteral("export"), QStringLiteral("--points")});
        QCOMPARE(points.out.trimmed().split('\n').size(), 1 + 240);
    }

    // `runs goodput` on a run of two trainer processes (the second resumed from step 10 after the
    // first reached 14, at 0.75 s a step: 4 steps, 3 s lost): the breakdown, and its errors.
    void goodputOfARun()
    {
        const QString dir = m_dir.filePath(QStringLiteral("goodput/gp-run"));
        QVERIFY(QDir().mkpath(dir));
        QFile f(dir + QStringLiteral("/events.jsonl"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        const char *line =
            R"({"v":1,"t":%1,"kind":"phases","step":%2,"values":{"process_start":%3,)"
            R"("resume_step":%4,"checkpoint_step":%5,"startup_s":2,"train_s":%6,"checkpoint_s":1,)"
            R"("eval_s":0,"sample_s":1,"other_s":0}})"
            "\n";
        f.write(QString::fromLatin1(line)
                    .arg(1700000020)
                    .arg(14)
                    .arg(1700000000)
                    .arg(0)
                    .arg(10)
                    .arg(14)
                    .toUtf8());
        f.write(QString::fromLatin1(line)
                    .arg(1700000051)
                    .arg(30)
                    .arg(1700000030)
                    .arg(10)
                    .arg(30)
                    .arg(15)
                    .toUtf8());
        f.close();
        QCOMPARE(run({QStringLiteral("runs"), QStringLiteral("ingest"), dir, QStringLiteral("--quiet")}).code,
                 0);

        Result r = run({QStringLiteral("runs"), QStringLiteral("goodput"), QStringLiteral("gp-run")});
        QCOMPARE(r.code, 0);
        // training 14 + 15 - 3 lost of a 41 s wall (20 + 21).
        QVERIFY2(r.out.contains("goodput 63.4% (26.0 s of training in 41.0 s of wall time)"),
                 r.out.constData());
        const QString table = QString::fromUtf8(r.out).simplified();  // columns as single spaces
        QVERIFY2(table.contains(QLatin1String("lost (4 steps redone) 3.0 0.001 7.3%")), r.out.constData());
        QVERIFY2(table.contains(QLatin1String("samples 2.0 0.001 4.9%")), r.out.constData());
        QVERIFY2(table.contains(QLatin1String("wall 41.0 0.011 100.0%")), r.out.constData());
        QVERIFY2(r.out.contains("10-30"), r.out.constData());  // the second process's steps
        const QJsonObject o = json({QStringLiteral("runs"), QStringLiteral("goodput"),
                                    QStringLiteral("gp-run"), QStringLiteral("--json")})
                                  .object();
        QCOMPARE(o[QLatin1String("lost_steps")].toInteger(), 4);
        QCOMPARE(o[QLatin1String("wall_s")].toDouble(), 41.0);
        QCOMPARE(o[QLatin1String("attempts")].toArray().size(), 2);

        QCOMPARE(run({QStringLiteral("runs"), QStringLiteral("goodput")}).code, 2);
        QCOMPARE(run({QStringLiteral("runs"), QStringLiteral("goodput"), QStringLiteral("gp-run"),
                      QStringLiteral("--sweep"), QStringLiteral("1")})
                     .code,
                 2);
        r = run({QStringLiteral("runs"), QStringLiteral("goodput"), QStringLiteral("--sweep"),
                 QStringLiteral("no-such-sweep")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("no sweep 'no-such-sweep'"));
    }

    void errorsAreClearWithTheRightExitCode()
    {
        Result r = run({QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("no-such-run")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("no run 'no-such-run'"));
        r = run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--filter"),
                 QStringLiteral("lr = 3")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("SCOPE.KEY OP VALUE"));
        r = run({QStringLiteral("runs"), QStringLiteral("frobnicate")});
        QCOMPARE(r.code, 2);
        r = run(
            {QStringLiteral("runs"), QStringLiteral("history"), QStringLiteral("1"), QStringLiteral("nope")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("has no metric 'nope'"));
        r = run(
            {QStringLiteral("runs"), QStringLiteral("ingest"), m_dir.filePath(QStringLiteral("missing"))});
        QCOMPARE(r.code, 1);
        // `runs push [RUN...]` takes several runs (an optional variadic argument was refused as
        // "unexpected argument"): it gets as far as the server, which nobody runs on port 1.
        r = run({QStringLiteral("runs"), QStringLiteral("push"), QStringLiteral("1"), QStringLiteral("2"),
                 QStringLiteral("--mlflow"), QStringLiteral("http://127.0.0.1:1")});
        QVERIFY2(!r.err.contains("unexpected argument"), r.err.constData());
    }

    void concurrentFirstOpensMigrateOnce()
    {
        // Six processes open a new file at the same instant: the migration lock lets one create
        // the schema and the others find it done.
        const QString db = m_dir.filePath(QStringLiteral("race.sqlite"));
        QList<QProcess *> procs;
        for (int i = 0; i < 6; ++i) {
            auto *p = new QProcess(this);
            p->start(qEnvironmentVariable("ORRERY_CLI"),
                     {QStringLiteral("--db"), db, QStringLiteral("experiments"), QStringLiteral("list"),
                      QStringLiteral("--json")});
            procs.push_back(p);
        }
        for (QProcess *p : procs) {
            QVERIFY(p->waitForFinished(60'000));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
            QCOMPARE(p->readAllStandardOutput().trimmed(), QByteArray("[\n]"));
        }
    }
};

ORRERY_TEST_MAIN(TestCliRuns, QCoreApplication)
#include "tst_cli_runs.moc"
