// SPDX-License-Identifier: GPL-3.0-or-later
// When a rank fails (trainer/src/faults.h, docs/trainer.md "When a rank fails"), with real
// orrery-train ranks (--nproc 2, Gloo on CPU): every rank that fails writes faults/rank-<R>.json
// (cause, node, rank, step, reason), and exit.json names the first that failed, whichever rank it
// was. Faults caused for real: a rank that aborts (SIGABRT, recorded by the fatal-signal handler),
// a rank whose collective times out (its peer stalled past dist.timeout_s). Faults that cannot be
// caused on a CPU machine (a CUDA device error, NCCL's failure) come from ORRERY_TRAIN_FAULT, a
// test hook that throws the text those layers give; their classification is the real one.
// The fixture's two-node Slurm: tst_trainer_slurm.
#include "testsupport.h"
#include "trainersupport.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QTemporaryDir>

using namespace orrery::test;

namespace {

// orrery-train with ORRERY_TRAIN_FAULT=`fault` and SLURMD_NODENAME=`node` (the name a rank gives
// its node) in its environment.
Result trainWithFault(const QStringList &args, const QString &fault,
                      const QString &node = QStringLiteral("n7"))
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!fault.isEmpty())
        env.insert(QStringLiteral("ORRERY_TRAIN_FAULT"), fault);
    env.insert(QStringLiteral("SLURMD_NODENAME"), node);
    p.setProcessEnvironment(env);
    p.start(trainer(), args);
    if (!p.waitForFinished(240'000)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

QJsonObject fileJson(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}

// Two ranks of 6 steps. A collective may wait a minute: on a loaded machine (the suite beside it)
// a rank can be descheduled for seconds, and a run meant to complete must not time out. The stall
// test sets its own short timeout (a later --set wins).
QStringList twoRanks(const QString &run, const QStringList &sets = {})
{
    return runArgs(run,
                   QStringList{QStringLiteral("train.steps=6"), QStringLiteral("train.log_every=1"),
                               QStringLiteral("dist.timeout_s=60")} +
                       sets) +
        QStringList{QStringLiteral("--nproc"), QStringLiteral("2")};
}

QString describe(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

}  // namespace

class TestTrainerFaults : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { ORRERY_SKIP_WITHOUT_TRAINER(); }

    // Rank 1 aborts at step 3: no exception, no rank 0 to write for it (the launcher kills the
    // other ranks). Its own handler's record is the run's verdict.
    void aRankThatAbortsIsNamed()
    {
        const QString run = m_dir.filePath(QStringLiteral("abort"));
        const Result r = trainWithFault(twoRanks(run), QStringLiteral("abort:rank=1:step=3"));
        QCOMPARE(r.code, 1);
        const QJsonObject exit = exitJson(run);
        QCOMPARE(exit[QLatin1String("state")].toString(), QStringLiteral("failed"));
        QVERIFY2(exit[QLatin1String("cause")].toString() == QLatin1String("crash"),
                 qPrintable(describe(exit)));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), 1);
        QCOMPARE(exit[QLatin1String("node")].toString(), QStringLiteral("n7"));
        QCOMPARE(exit[QLatin1String("step")].toInt(), 3);
        QVERIFY2(exit[QLatin1String("reason")].toString().startsWith(QLatin1String("rank 1 on n7: SIGABRT")),
                 qPrintable(describe(exit)));
        const QJsonObject own = fileJson(run + QStringLiteral("/faults/rank-1.json"));
        QCOMPARE(own[QLatin1String("cause")].toString(), QStringLiteral("crash"));
        QVERIFY(own[QLatin1String("t")].toDouble() > 1.7e9);
    }

    // Rank 1 stalls past dist.timeout_s: rank 0's allreduce times out for real. The verdict names
    // the rank it waited for (cause hang, from the roll call), not rank 0, with rank 0's words.
    void aStalledRankIsNamedNotTheRankThatWaited()
    {
        const QString run = m_dir.filePath(QStringLiteral("stall"));
        const Result r = trainWithFault(twoRanks(run, {QStringLiteral("dist.timeout_s=3")}),
                                        QStringLiteral("stall:rank=1:step=3"));
        QCOMPARE(r.code, 1);
        const QJsonObject exit = exitJson(run);
        QVERIFY2(exit[QLatin1String("cause")].toString() == QLatin1String("hang"),
                 qPrintable(describe(exit)));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), 1);
        QCOMPARE(exit[QLatin1String("node")].toString(), QStringLiteral("n7"));
        QCOMPARE(exit[QLatin1String("step")].toInt(), 3);
        const QString reason = exit[QLatin1String("reason")].toString();
        QVERIFY2(reason.startsWith(QLatin1String("rank 1 on n7: did not reach the collective")) &&
                     reason.contains(QLatin1String("Timed out")),
                 qPrintable(describe(exit)));
        // The run's last event says the same.
        const QList<QJsonObject> ev = events(run);
        QVERIFY(!ev.isEmpty());
        QCOMPARE(ev.back()[QLatin1String("state")].toString(), QStringLiteral("failed"));
        QCOMPARE(ev.back()[QLatin1String("message")].toString(), exit[QLatin1String("reason")].toString());
    }

    // Rank 1 meets a device error; rank 0's allreduce then fails too, its peer gone. The verdict is
    // rank 1's whichever wrote first: a rank that failed by itself before one that waited for it.
    void aRanksOwnFailureComesBeforeTheOnesItCaused_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("cause");
        QTest::addColumn<QString>("words");
        QTest::newRow("cuda") << "cuda"
                              << "cuda"
                              << "uncorrectable ECC error";
        QTest::newRow("nccl") << "nccl"
                              << "nccl"
                              << "unhandled system error";
        QTest::newRow("oom") << "oom"
                             << "oom"
                             << "out of memory";
        QTest::newRow("data") << "data"
                              << "data"
                              << "no file of the dataset decodes";
    }
    void aRanksOwnFailureComesBeforeTheOnesItCaused()
    {
        QFETCH(QString, kind);
        QFETCH(QString, cause);
        QFETCH(QString, words);
        const QString run = m_dir.filePath(QStringLiteral("own-") + kind);
        const Result r = trainWithFault(twoRanks(run), kind + QStringLiteral(":rank=1:step=2"));
        QCOMPARE(r.code, 1);
        const QJsonObject exit = exitJson(run);
        QVERIFY2(exit[QLatin1String("cause")].toString() == cause, qPrintable(describe(exit)));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), 1);
        QCOMPARE(exit[QLatin1String("step")].toInt(), 2);
        QVERIFY2(exit[QLatin1String("reason")].toString().contains(words), qPrintable(describe(exit)));
        QVERIFY(exit[QLatin1String("ranks_failed")].toInt() >= 1);
    }

    // One process: its own exception, classified, and its node.
    void aSingleProcessNamesItsOwnCause()
    {
        const QString run = m_dir.filePath(QStringLiteral("single"));
        const Result r = trainWithFault(runArgs(run, {QStringLiteral("train.steps=4")}),
                                        QStringLiteral("data:step=2"), QStringLiteral("gpu07"));
        QCOMPARE(r.code, 1);
        const QJsonObject exit = exitJson(run);
        QCOMPARE(exit[QLatin1String("cause")].toString(), QStringLiteral("data"));
        QCOMPARE(exit[QLatin1String("node")].toString(), QStringLiteral("gpu07"));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), 0);
    }

    // A process that dies by a signal writes no exit.json itself; --fold-faults (what the sbatch
    // script runs after srun) makes it from the record its handler left.
    void foldFaultsAfterACrashOfTheOnlyRank()
    {
        const QString run = m_dir.filePath(QStringLiteral("crash"));
        const Result r =
            trainWithFault(runArgs(run, {QStringLiteral("train.steps=4")}), QStringLiteral("abort:step=2"));
        QVERIFY(r.code != 0);
        QVERIFY(!QFile::exists(run + QStringLiteral("/exit.json")));
        const Result fold =
            trainWithFault({QStringLiteral("--fold-faults"), QStringLiteral("--run-dir"), run}, {});
        QCOMPARE(fold.code, 0);
        const QJsonObject exit = exitJson(run);
        QCOMPARE(exit[QLatin1String("state")].toString(), QStringLiteral("failed"));
        QCOMPARE(exit[QLatin1String("cause")].toString(), QStringLiteral("crash"));
        QCOMPARE(exit[QLatin1String("step")].toInt(), 2);
    }

    // Which record is the run's: a rank that failed by itself (rank 3's device error) comes before
    // one that aborted (rank 2: also what NCCL's watchdog does to a healthy rank on a timeout), and
    // that before ones whose collective timed out waiting (ranks 0 and 1), though they wrote first.
    // Without rank 3, the abort.
    void theFirstFaultIsTheRanksOwn_data()
    {
        QTest::addColumn<bool>("withDeviceError");
        QTest::addColumn<int>("rank");
        QTest::addColumn<QString>("cause");
        QTest::newRow("own failure first") << true << 3 << "cuda";
        QTest::newRow("then an abort") << false << 2 << "crash";
    }
    void theFirstFaultIsTheRanksOwn()
    {
        QFETCH(bool, withDeviceError);
        QFETCH(int, rank);
        QFETCH(QString, cause);
        const QString run = m_dir.filePath(QStringLiteral("fold-%1").arg(rank));
        QDir().mkpath(run + QStringLiteral("/faults"));
        const auto record = [&](int r, const char *kind, const char *node, double t, const char *reason) {
            QFile f(run + QStringLiteral("/faults/rank-%1.json").arg(r));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QJsonDocument(QJsonObject{{QStringLiteral("cause"), QLatin1String(kind)},
                                              {QStringLiteral("node"), QLatin1String(node)},
                                              {QStringLiteral("rank"), r},
                                              {QStringLiteral("step"), 9},
                                              {QStringLiteral("t"), t},
                                              {QStringLiteral("reason"), QLatin1String(reason)}})
                        .toJson());
        };
        record(0, "comm", "node1", 100.5, "Timed out");
        record(1, "comm", "node1", 100.75, "Timed out");
        record(2, "crash", "node1", 110.0, "SIGABRT (aborted)");
        if (withDeviceError)
            record(3, "cuda", "node2", 130.25, "Xid 79");
        QCOMPARE(trainWithFault({QStringLiteral("--fold-faults"), QStringLiteral("--run-dir"), run}, {}).code,
                 0);
        const QJsonObject exit = exitJson(run);
        QCOMPARE(exit[QLatin1String("rank")].toInt(), rank);
        QCOMPARE(exit[QLatin1String("cause")].toString(), cause);
        QCOMPARE(exit[QLatin1String("ranks_failed")].toInt(), withDeviceError ? 4 : 3);
        if (withDeviceError)
            QCOMPARE(exit[QLatin1String("reason")].toString(), QStringLiteral("rank 3 on node2: Xid 79"));
    }

    // A rank its peers waited for, at 4 ranks on 2 nodes, from the records alone: every rank said
    // where it started (faults/started-<R>.json); rank 0 timed out waiting. The verdict is a hang of
    // the one rank that did not time out (silent, or woken to find its peers gone), on its node;
    // where that cannot be told (several silent) or a rank failed by itself, the rules above.
    void aHungRankIsNamedWhenTheRecordsTellWhich_data()
    {
        QTest::addColumn<QString>("spec");  // per rank 0-3, by commas: timeout, gone, cuda or "" (silent)
        QTest::addColumn<int>("rank");
        QTest::addColumn<QString>("cause");
        QTest::addColumn<QString>("node");
        QTest::newRow("the silent one") << "timeout,timeout,timeout," << 3 << "hang"
                                        << "node2";
        QTest::newRow("silent among peers gone") << "timeout,gone,gone," << 3 << "hang"
                                                 << "node2";
        QTest::newRow("woke to its peers gone") << "timeout,timeout,gone,timeout" << 2 << "hang"
                                                << "node2";
        QTest::newRow("no telling which") << "timeout,,," << 0 << "comm"
                                          << "node1";
        QTest::newRow("a rank's own failure") << "timeout,cuda,," << 1 << "cuda"
                                              << "node1";
    }
    void aHungRankIsNamedWhenTheRecordsTellWhich()
    {
        QFETCH(QString, spec);
        const QStringList faults = spec.split(u',');
        QFETCH(int, rank);
        QFETCH(QString, cause);
        QFETCH(QString, node);
        const QString run = m_dir.filePath(
            QStringLiteral("hung-%1").arg(QString::fromLatin1(QTest::currentDataTag())).replace(u' ', u'-'));
        QDir().mkpath(run + QStringLiteral("/faults"));
        const auto write = [&](const QString &name, const QJsonObject &o) {
            QFile f(run + QStringLiteral("/faults/") + name);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QJsonDocument(o).toJson());
        };
        for (int r = 0; r < 4; ++r) {
            const QString where = r < 2 ? QStringLiteral("node1") : QStringLiteral("node2");
            write(
                QStringLiteral("started-%1.json").arg(r),
                {{QStringLiteral("node"), where}, {QStringLiteral("rank"), r}, {QStringLiteral("t"), 90.0}});
            const QString kind = faults[r];
            if (kind.isEmpty())
                continue;
            const QString reason = kind == QLatin1String("timeout")
                ? QStringLiteral("Timed out waiting 3000ms")
                : kind == QLatin1String("gone") ? QStringLiteral("Connection closed by peer")
                                                : QStringLiteral("Xid 79");
            write(QStringLiteral("rank-%1.json").arg(r),
                  {{QStringLiteral("cause"),
                    kind == QLatin1String("cuda") ? QStringLiteral("cuda") : QStringLiteral("comm")},
                   {QStringLiteral("node"), where},
                   {QStringLiteral("rank"), r},
                   {QStringLiteral("step"), 9},
                   {QStringLiteral("t"), 100.0 + r},
                   {QStringLiteral("reason"), reason}});
        }
        QCOMPARE(trainWithFault({QStringLiteral("--fold-faults"), QStringLiteral("--run-dir"), run}, {}).code,
                 0);
        const QJsonObject exit = exitJson(run);
        QVERIFY2(exit[QLatin1String("cause")].toString() == cause, qPrintable(describe(exit)));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), rank);
        QCOMPARE(exit[QLatin1String("node")].toString(), node);
        if (cause == QLatin1String("hang"))
            QCOMPARE(
                exit[QLatin1String("reason")].toString(),
                QStringLiteral("rank %1 on node2: did not reach the collective that its peers waited for at "
                               "step 9 (hung, or ended without a word); rank 0: Timed out waiting 3000ms")
                    .arg(rank));
    }

    // A run that completed keeps its verdict: a fault file a later fold finds (a rank of an
    // earlier attempt, say) does not turn it into a failure. And a new attempt's launcher clears
    // the old records, those of ranks its world does not have included.
    void aCompletedRunKeepsItsVerdictAndOldRecordsGo()
    {
        const QString run = m_dir.filePath(QStringLiteral("completed"));
        QDir().mkpath(run + QStringLiteral("/faults"));
        for (const char *name : {"rank-0.json", "rank-5.json"}) {
            QFile old(run + QStringLiteral("/faults/") + QLatin1String(name));
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("{\"cause\":\"cuda\",\"node\":\"old\",\"rank\":5,\"step\":1,\"t\":1.0,\"reason\":"
                      "\"earlier\"}");
        }
        const Result r = trainWithFault(twoRanks(run), {});
        QVERIFY2(r.code == 0, r.err.right(2000).constData());
        QVERIFY(!QFile::exists(run + QStringLiteral("/faults/rank-0.json")));
        QVERIFY(!QFile::exists(run + QStringLiteral("/faults/rank-5.json")));
        QFile late(run + QStringLiteral("/faults/rank-1.json"));
        QVERIFY(late.open(QIODevice::WriteOnly));
        late.write(
            "{\"cause\":\"comm\",\"node\":\"n7\",\"rank\":1,\"step\":6,\"t\":2.0,\"reason\":\"late\"}");
        late.close();
        QCOMPARE(trainWithFault({QStringLiteral("--fold-faults"), QStringLiteral("--run-dir"), run}, {}).code,
                 0);
        QCOMPARE(exitJson(run)[QLatin1String("state")].toString(), QStringLiteral("completed"));
    }
};

ORRERY_TEST_MAIN(TestTrainerFaults, QCoreApplication)
#include "tst_trainer_faults.moc"
