// SPDX-License-Identifier: GPL-3.0-or-later
// The Slurm executor's pure pieces: the ustar writer (extracted by the real `tar`, byte for byte,
// hostile contents and names), Slurm states as the runner sees them, folded array tasks, and the
// batch reader — its framing parser on table cases (truncated and hostile answers), and its perl
// program run here by a real perl on real files.
#include "testsupport.h"

#include "orrery/remote/batchread.h"
#include "orrery/remote/slurmexecutor.h"
#include "orrery/remote/tar.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>

using orrery::core::FileChunk;
using orrery::core::FileRead;
using orrery::core::TaskStatus;
using orrery::remote::TarFile;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// Runs `program` with `input` on stdin; returns stdout, or fails the test.
QByteArray runWithInput(const QString &program, const QStringList &args, const QByteArray &input,
                        const QString &dir = {}, int *exitCode = nullptr)
{
    QProcess p;
    if (!dir.isEmpty())
        p.setWorkingDirectory(dir);
    p.start(program, args);
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(30'000))
        qFatal("%s did not finish", qPrintable(program));
    if (exitCode)
        *exitCode = p.exitCode();
    else if (p.exitCode() != 0)
        qWarning("%s: %s", qPrintable(program), p.readAllStandardError().constData());
    return p.readAllStandardOutput();
}

QStringList ids(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *id : list)
        out << QString::fromLatin1(id);
    return out;
}

FileRead read(const QString &path, qint64 offset, qint64 maxBytes = 4 << 20)
{
    FileRead r;
    r.path = path;
    r.offset = offset;
    r.maxBytes = maxBytes;
    return r;
}

}  // namespace

Q_DECLARE_METATYPE(TaskStatus::State)

class TestSlurmExecutor : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // --- tar -----------------------------------------------------------------------------------
    void tarExtractsByteForByte()
    {
        QByteArray binary(70'000, '\0');
        for (qsizetype i = 0; i < binary.size(); ++i)
            binary[i] = static_cast<char>(QRandomGenerator::global()->bounded(256));
        const QByteArray longDir(60, 'd');
        const QList<TarFile> files{
            {"0/trial.yaml", "optim: {lr: '$(touch pwned)'}\nname: \"`id`\"\n", 0600},
            {"1/trial.yaml", QByteArray(), 0600},  // empty
            {"1/exactly-512", QByteArray(512, 'x'), 0644},  // no padding block
            {"2/binary", binary, 0600},
            {"batch-0.sbatch", "#!/bin/bash\n#SBATCH --array=0-2%1\nsrun 'a b'\n", 0700},
            // Over 100 bytes: split into ustar's prefix and name.
            {longDir + '/' + longDir + "/trial.yaml", "deep\n", 0600},
            {"name with spaces/'q' \"dq\" $(x) -rf/\xc3\xa9t\xc3\xa9.yaml", "utf-8 names\n", 0600},
        };
        const QByteArray archive = orrery::remote::writeTar(files, 1'700'000'000);
        QCOMPARE(archive.size() % 512, 0);
        QTemporaryDir dir;
        int code = -1;
        runWithInput(QStringLiteral("tar"),
                     {QStringLiteral("-x"), QStringLiteral("-m"), QStringLiteral("-f"), QStringLiteral("-")},
                     archive, dir.path(), &code);
        QCOMPARE(code, 0);
        for (const TarFile &f : files)
            QCOMPARE(readAll(dir.filePath(QString::fromUtf8(f.path))), f.data);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("pwned"))));
        // tar itself lists exactly these names (a checksum or a header field off would show).
        const QByteArray listing =
            runWithInput(QStringLiteral("tar"),
                         {QStringLiteral("-t"), QStringLiteral("-f"), QStringLiteral("-")}, archive);
        QByteArray expected;
        for (const TarFile &f : files)
            expected += f.path + '\n';
        QCOMPARE(listing, expected);
        QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("batch-0.sbatch"))).permissions() & QFile::ExeOwner,
                 QFile::ExeOwner);
    }

    void tarRefusesUnsafePaths_data()
    {
        QTest::addColumn<QByteArray>("path");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("absolute") << QByteArray("/etc/passwd");
        QTest::newRow("parent") << QByteArray("../x");
        QTest::newRow("parent-inside") << QByteArray("a/../../x");
        QTest::newRow("dot") << QByteArray("./x");
        QTest::newRow("empty-component") << QByteArray("a//x");
        QTest::newRow("trailing-slash") << QByteArray("a/");
        QTest::newRow("newline") << QByteArray("a\nb");
        QTest::newRow("nul") << QByteArray("a\0b", 3);
        QTest::newRow("del") << QByteArray("a\x7f");
        QTest::newRow("name-over-100-no-slash") << QByteArray(101, 'n');
        QTest::newRow("prefix-over-155") << QByteArray(160, 'p') + "/x";
    }
    void tarRefusesUnsafePaths()
    {
        QFETCH(QByteArray, path);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, orrery::remote::writeTar({{path, "x", 0600}}));
    }

    // --- Slurm states --------------------------------------------------------------------------
    void states_data()
    {
        QTest::addColumn<QString>("state");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<TaskStatus::State>("expected");
        QTest::addColumn<QString>("detail");
        using S = TaskStatus::State;
        QTest::newRow("pending-resources") << "PENDING"
                                           << "Resources" << S::Queued << "PENDING (Resources)";
        QTest::newRow("pending-throttled")
            << "PENDING"
            << "JobArrayTaskLimit" << S::Queued << "PENDING (JobArrayTaskLimit)";
        QTest::newRow("requeued") << "REQUEUED"
                                  << "None" << S::Queued << "REQUEUED";
        QTest::newRow("configuring") << "CONFIGURING"
                                     << "None" << S::Queued << "CONFIGURING";
        QTest::newRow("resizing") << "RESIZING"
                                  << "None" << S::Queued << "RESIZING";
        QTest::newRow("suspended") << "SUSPENDED"
                                   << "None" << S::Queued << "SUSPENDED";
        QTest::newRow("running") << "RUNNING"
                                 << "None" << S::Running << "RUNNING";
        QTest::newRow("completing-is-running") << "COMPLETING"
                                               << "None" << S::Running << "COMPLETING";
        QTest::newRow("completed") << "COMPLETED"
                                   << "None" << S::Ended << "COMPLETED";
        QTest::newRow("failed") << "FAILED"
                                << "NonZeroExitCode" << S::Ended << "FAILED (NonZeroExitCode)";
        QTest::newRow("cancelled") << "CANCELLED"
                                   << "None" << S::Ended << "CANCELLED";
        QTest::newRow("sacct-cancelled-by") << "CANCELLED by 1000"
                                            << "" << S::Ended << "CANCELLED";
        QTest::newRow("timeout") << "TIMEOUT"
                                 << "TimeLimit" << S::Ended << "TIMEOUT (TimeLimit)";
        QTest::newRow("oom") << "OUT_OF_MEMORY"
                             << "OutOfMemory" << S::Ended << "OUT_OF_MEMORY (OutOfMemory)";
        QTest::newRow("node-fail") << "NODE_FAIL"
                                   << "None" << S::Ended << "NODE_FAIL";
        QTest::newRow("preempted") << "PREEMPTED"
                                   << "None" << S::Ended << "PREEMPTED";
        QTest::newRow("boot-fail") << "BOOT_FAIL"
                                   << "None" << S::Ended << "BOOT_FAIL";
        QTest::newRow("deadline") << "DEADLINE"
                                  << "None" << S::Ended << "DEADLINE";
        QTest::newRow("unknown-state") << "WARP_SPEED"
                                       << "None" << S::Unknown << "WARP_SPEED";
    }
    void states()
    {
        QFETCH(QString, state);
        QFETCH(QString, reason);
        QFETCH(TaskStatus::State, expected);
        QFETCH(QString, detail);
        const TaskStatus s = orrery::remote::taskStatusOf(state, reason);
        QCOMPARE(s.state, expected);
        QCOMPARE(s.detail, detail);
    }

    void foldedArrayTasks_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("plain") << "123" << ids({"123"});
        QTest::newRow("task") << "123_4" << ids({"123_4"});
        QTest::newRow("range-throttle") << "123_[2-5%2]" << ids({"123_2", "123_3", "123_4", "123_5"});
        QTest::newRow("list-and-range") << "9_[0,3-4,7]" << ids({"9_0", "9_3", "9_4", "9_7"});
        QTest::newRow("single-in-brackets") << "9_[6]" << ids({"9_6"});
        QTest::newRow("reversed-range") << "9_[5-2]" << ids({});
        QTest::newRow("absurd-range") << "9_[0-99999999]" << ids({});
        QTest::newRow("not-an-id") << "9_[a]" << ids({});
        QTest::newRow("injection") << "9; rm -rf ~" << ids({});
    }
    void foldedArrayTasks()
    {
        QFETCH(QString, id);
        QFETCH(QStringList, expected);
        QCOMPARE(orrery::remote::expandArrayTasks(id), expected);
    }

    // The suspect nodes travel as one quoted --exclude argument; a name Slurm could not take is
    // refused before anything is sent.
    void sbatchExcludesSuspectNodes()
    {
        orrery::core::LaunchBatch batch;
        batch.tasks.resize(3);
        batch.maxConcurrent = 2;
        QCOMPARE(orrery::remote::sbatchArguments(batch, "batch-0.sbatch"),
                 (QList<QByteArray>{"sbatch", "--parsable", "--array=0-2%2", "batch-0.sbatch"}));
        batch.excludeNodes = {QStringLiteral("node2"), QStringLiteral("gpu-07.rack1")};
        QCOMPARE(orrery::remote::sbatchArguments(batch, "batch-0.sbatch"),
                 (QList<QByteArray>{"sbatch", "--parsable", "--array=0-2%2", "--exclude=node2,gpu-07.rack1",
                                    "batch-0.sbatch"}));
        for (const char *bad : {"node2;rm -rf ~", "-x", "node 2", "n,m"}) {
            batch.excludeNodes = {QString::fromLatin1(bad)};
            QVERIFY_THROWS_EXCEPTION(orrery::remote::RemoteError,
                                     orrery::remote::sbatchArguments(batch, "batch-0.sbatch"));
        }
    }

    // --- the batch reader ----------------------------------------------------------------------
    void batchReadFraming_data()
    {
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("firstData");
        // Two reads: /a from 2 (at most 4 bytes), /b from 0.
        QTest::newRow("two-files") << QByteArray("orrery-read 1\n10 4\ncdef7 3\nxyz") << true << "cdef";
        QTest::newRow("missing") << QByteArray("orrery-read 1\n-1 0\n7 3\nxyz") << true << "";
        QTest::newRow("data-holds-newlines-and-headers")
            << QByteArray("orrery-read 1\n6 4\n\n1 20 0\n") << true << "\n1 2";
        QTest::newRow("login-banner-first")
            << QByteArray("Welcome to the cluster\norrery-read 1\n2 0\n0 0\n") << true << "";
        QTest::newRow("no-magic") << QByteArray("2 0\n0 0\n") << false << "";
        QTest::newRow("empty") << QByteArray() << false << "";
        QTest::newRow("cut-in-header") << QByteArray("orrery-read 1\n10 4\ncdef7") << false << "";
        QTest::newRow("cut-in-data") << QByteArray("orrery-read 1\n10 4\ncdef7 3\nxy") << false << "";
        QTest::newRow("second-missing") << QByteArray("orrery-read 1\n10 4\ncdef") << false << "";
        QTest::newRow("trailing-bytes") << QByteArray("orrery-read 1\n10 4\ncdef7 3\nxyzz") << false << "";
        QTest::newRow("over-max-bytes") << QByteArray("orrery-read 1\n10 5\ncdefg7 3\nxyz") << false << "";
        QTest::newRow("past-size") << QByteArray("orrery-read 1\n4 4\ncdef7 3\nxyz") << false << "";
        QTest::newRow("missing-with-data") << QByteArray("orrery-read 1\n-1 2\nab7 3\nxyz") << false << "";
        QTest::newRow("negative-length") << QByteArray("orrery-read 1\n10 -4\n7 3\nxyz") << false << "";
        QTest::newRow("size-below-minus-one") << QByteArray("orrery-read 1\n-2 0\n7 3\nxyz") << false << "";
        QTest::newRow("garbage-header") << QByteArray("orrery-read 1\nten four\ncdef7 3\nxyz") << false << "";
        QTest::newRow("three-numbers") << QByteArray("orrery-read 1\n10 4 1\ncdef7 3\nxyz") << false << "";
        QTest::newRow("huge-header") << QByteArray("orrery-read 1\n") + QByteArray(100, '9') + " 0\n0 0\n"
                                     << false << "";
    }
    void batchReadFraming()
    {
        QFETCH(QByteArray, out);
        QFETCH(bool, ok);
        QFETCH(QString, firstData);
        const QList<FileRead> reads{read(QStringLiteral("/a"), 2, 4), read(QStringLiteral("/b"), 0)};
        const auto parsed = orrery::remote::parseBatchRead(out, reads);
        QVERIFY2(parsed.ok() == ok, qPrintable(parsed.error));
        if (ok) {
            QCOMPARE(parsed.chunks.size(), 2);
            QCOMPARE(QString::fromUtf8(parsed.chunks[0].data), firstData);
        }
    }

    void batchReadInputRefusesRelativeAndNul()
    {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 orrery::remote::batchReadInput({read(QStringLiteral("rel"), 0)}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 orrery::remote::batchReadInput({read(QStringLiteral("/a") + QChar(0), 0)}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 orrery::remote::batchReadInput({read(QStringLiteral("/a"), -1)}));
    }

    // The program itself, run by this machine's perl on real files through a real shell.
    void perlProgramReadsFromOffsets()
    {
        QTemporaryDir dir;
        const QString hostile = dir.filePath(QStringLiteral("a\nb 'q' $(touch pwned) -rf"));
        QVERIFY(QDir().mkpath(hostile));
        const QString events = hostile + QStringLiteral("/events.jsonl");
        QByteArray content;
        for (int i = 0; i < 2000; ++i)
            content += "{\"v\":1,\"kind\":\"metrics\",\"step\":" + QByteArray::number(i) + "}\n";
        content += QByteArray("\0\xff binary tail", 14);
        QFile f(events);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        const QList<FileRead> reads{
            read(events, 0, 100),  // the first 100 bytes
            read(events, 100, -1),  // the rest
            read(events, content.size(), 10),  // nothing new
            read(events, content.size() + 50, 10),  // past the end (truncated file)
            read(dir.filePath(QStringLiteral("missing")), 0),
            read(dir.path(), 0),  // a directory
        };
        int code = -1;
        const QByteArray out =
            runWithInput(QStringLiteral("/bin/sh"),
                         {QStringLiteral("-c"), QString::fromUtf8(orrery::remote::batchReadCommand())},
                         orrery::remote::batchReadInput(reads), dir.path(), &code);
        QCOMPARE(code, 0);
        const auto parsed = orrery::remote::parseBatchRead(out, reads);
        QVERIFY2(parsed.ok(), qPrintable(parsed.error));
        const QList<FileChunk> &c = parsed.chunks;
        QCOMPARE(c[0].data, content.left(100));
        QCOMPARE(c[0].size, content.size());
        QCOMPARE(c[1].data, content.mid(100));
        QVERIFY(c[2].exists && c[2].data.isEmpty());
        QVERIFY(c[3].exists && c[3].data.isEmpty());
        QVERIFY(!c[4].exists);
        QCOMPARE(c[4].size, -1);
        QVERIFY(!c[5].exists);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("pwned"))));
    }

    // A listing in the same round trip as the reads: the perl program and the local executor's
    // listDirectory answer alike (sorted, sizes, links not followed, 8 levels, a hostile name).
    void perlProgramListsLikeTheLocalExecutor()
    {
        QTemporaryDir dir;
        const QDir d(dir.path());
        const QStringList files{QStringLiteral("tb/events.out.tfevents.1.host"),
                                QStringLiteral("samples/step_1.mp4"),
                                QStringLiteral("a\nb 'q' $(touch pwned)/x.png"),
                                QStringLiteral("1/2/3/4/5/6/7/8/too-deep.tfevents"),
                                QStringLiteral("1/2/3/4/5/6/7/deepest.tfevents")};
        for (const QString &f : files) {
            QVERIFY(d.mkpath(QFileInfo(d.filePath(f)).path()));
            QFile file(d.filePath(f));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(f.toUtf8());
        }
        QVERIFY(QFile::link(d.filePath(QStringLiteral("tb")), d.filePath(QStringLiteral("link"))));
        const QList<FileRead> reads{FileRead::listing(dir.path()), read(d.filePath(files[0]), 3),
                                    FileRead::listing(d.filePath(QStringLiteral("missing"))),
                                    FileRead::listing(dir.path(), 2)};
        int code = -1;
        const QByteArray out =
            runWithInput(QStringLiteral("/bin/sh"),
                         {QStringLiteral("-c"), QString::fromUtf8(orrery::remote::batchReadCommand())},
                         orrery::remote::batchReadInput(reads), dir.path(), &code);
        QCOMPARE(code, 0);
        const auto parsed = orrery::remote::parseBatchRead(out, reads);
        QVERIFY2(parsed.ok(), qPrintable(parsed.error));
        const FileChunk local = orrery::core::listDirectory(dir.path());
        QCOMPARE(parsed.chunks[0].entries, local.entries);
        QCOMPARE(local.entries.size(), 4);  // not too-deep, not through the link
        QCOMPARE(local.entries[0].path, QStringLiteral("1/2/3/4/5/6/7/deepest.tfevents"));
        QCOMPARE(local.entries[0].size, QStringLiteral("1/2/3/4/5/6/7/deepest.tfevents").size());
        QCOMPARE(parsed.chunks[1].data, files[0].toUtf8().mid(3));
        QVERIFY(!parsed.chunks[2].exists);
        QCOMPARE(parsed.chunks[3].entries.size(), 2);
        QVERIFY(!QFile::exists(d.filePath(QStringLiteral("pwned"))));
        // A listing answer that announces more entries than it holds is refused.
        QVERIFY(!orrery::remote::parseBatchRead(QByteArray("orrery-read 1\n2 4\n1 a\0", 22),
                                                {FileRead::listing(QStringLiteral("/x"))})
                     .ok());
    }
};

ORRERY_TEST_MAIN(TestSlurmExecutor, QCoreApplication)
#include "tst_slurmexecutor.moc"
