// SPDX-License-Identifier: GPL-3.0-or-later
// The one log reader (core/logread.h) over a real local executor: readLogFiles' tails and earlier
// chunks cut at a line start, appends, a file that shrank or grew by more than an append read
// from its tail again, a whole file read from its start chunk by chunk, a missing file, and the
// reads batched (two executor calls at most); LogTailer's tail, then only what is new, a rewrite
// read again, each attempt its own part.
#include "orrery/core/localexecutor.h"
#include "orrery/core/logread.h"
#include "orrery/core/runfiles.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace orrery::core;

namespace {

// Reading needs neither: the executors here only read.
const QString kNoTrainer = QStringLiteral("/nonexistent/trainer");
const QString kNoSupervisor = QStringLiteral("/nonexistent/orrery");

// The local executor, counting its batched reads.
class CountingExecutor final : public LocalExecutor {
public:
    using LocalExecutor::LocalExecutor;
    QList<FileChunk> readFiles(const QList<FileRead> &reads) override
    {
        ++calls;
        return LocalExecutor::readFiles(reads);
    }
    int calls = 0;
};

QByteArray numberedLines(int from, int to)
{
    QByteArray out;
    for (int i = from; i < to; ++i)
        out += "line " + QByteArray::number(i) + '\n';
    return out;
}

// A sweep in `dir` and its running trial `index`, with its run directory made.
std::pair<Sweep, Trial> runningTrial(const QTemporaryDir &dir, SweepId sweepId, int index)
{
    Sweep sweep;
    sweep.id = sweepId;
    sweep.rootDir = dir.path();
    Trial trial;
    trial.index = index;
    trial.attempt = 0;
    trial.state = QStringLiteral("running");
    trial.runDir = dir.filePath(QStringLiteral("run%1").arg(index));
    QDir().mkpath(trial.runDir);
    return {sweep, trial};
}

bool writeFile(const QString &path, const QByteArray &bytes, QIODevice::OpenMode mode = QIODevice::WriteOnly)
{
    QFile f(path);
    return f.open(mode) && f.write(bytes) == bytes.size();
}

}  // namespace

class TestLogRead : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void pollReadsTheTailAtALineStartThenAppends()
    {
        QTemporaryDir dir;
        CountingExecutor executor(QStringLiteral("/nonexistent/trainer"),
                                  QStringLiteral("/nonexistent/orrery"), dir.path());
        const QString big = dir.filePath(QStringLiteral("big.log"));
        const QString small = dir.filePath(QStringLiteral("small.log"));
        const QString none = dir.filePath(QStringLiteral("none.log"));
        const QByteArray bigBytes = numberedLines(0, 20'000);
        QVERIFY(writeFile(big, bigBytes));
        QVERIFY(writeFile(small, "one\ntwo\n"));

        QList<LogRead> r = readLogFiles(executor,
                                        {{LogReadJob::Kind::Poll, 0, big, -1, -1},
                                         {LogReadJob::Kind::Poll, 1, small, -1, -1},
                                         {LogReadJob::Kind::Poll, 2, none, -1, -1}});
        QCOMPARE(executor.calls, 2);  // the sizes, then the tails: one batch each
        QCOMPARE(r.size(), 3);
        QCOMPARE(r[0].kind, LogRead::Kind::Tail);
        QCOMPARE(r[0].file, 0);
        QCOMPARE(r[0].size, bigBytes.size());
        QVERIFY(r[0].data.size() <= kLogChunkBytes);
        QVERIFY(r[0].data.startsWith("line "));  // cut at a line start
        QCOMPARE(r[0].offset + r[0].data.size(), bigBytes.size());
        QCOMPARE(bigBytes.mid(r[0].offset, 5), QByteArray("line "));
        QCOMPARE(bigBytes.at(r[0].offset - 1), '\n');
        QCOMPARE(r[1].kind, LogRead::Kind::Tail);
        QCOMPARE(r[1].offset, 0);
        QCOMPARE(r[1].data, QByteArray("one\ntwo\n"));
        QCOMPARE(r[2].kind, LogRead::Kind::Missing);

        // What is new, in one call; nothing new says so.
        QVERIFY(writeFile(small, "three", QIODevice::Append));
        executor.calls = 0;
        r = readLogFiles(executor,
                         {{LogReadJob::Kind::Poll, 0, big, -1, bigBytes.size()},
                          {LogReadJob::Kind::Poll, 1, small, -1, 8}});
        QCOMPARE(executor.calls, 1);
        QCOMPARE(r[0].kind, LogRead::Kind::Unchanged);
        QCOMPARE(r[1].kind, LogRead::Kind::Append);
        QCOMPARE(r[1].offset, 8);
        QCOMPARE(r[1].data, QByteArray("three"));

        // Shrank (rewritten) or grew by more than an append: the tail again.
        QVERIFY(writeFile(small, "new\n"));
        QVERIFY(writeFile(big, QByteArray(kLogMaxAppendBytes + 10, 'x') + "\nlast\n", QIODevice::Append));
        r = readLogFiles(executor,
                         {{LogReadJob::Kind::Poll, 0, big, -1, bigBytes.size()},
                          {LogReadJob::Kind::Poll, 1, small, -1, 13}});
        QCOMPARE(r[0].kind, LogRead::Kind::Tail);
        // The x's are one line longer than the chunk: the tail starts at the next line.
        QCOMPARE(r[0].data, QByteArray("last\n"));
        QCOMPARE(r[0].offset + r[0].data.size(), r[0].size);
        QCOMPARE(r[1].kind, LogRead::Kind::Tail);
        QCOMPARE(r[1].data, QByteArray("new\n"));
    }

    void earlierReadsTheChunkBeforeAtALineStart()
    {
        QTemporaryDir dir;
        LocalExecutor executor(kNoTrainer, kNoSupervisor, dir.path());
        const QString path = dir.filePath(QStringLiteral("log"));
        const QByteArray bytes = numberedLines(0, 30'000);
        QVERIFY(writeFile(path, bytes));
        const qint64 from = bytes.indexOf("line 25000\n");
        const QList<LogRead> r = readLogFiles(executor, {{LogReadJob::Kind::Earlier, 3, path, from, -1}});
        QCOMPARE(r[0].kind, LogRead::Kind::Earlier);
        QCOMPARE(r[0].file, 3);
        QVERIFY(r[0].data.endsWith("line 24999\n"));
        QVERIFY(r[0].data.startsWith("line "));
        QCOMPARE(r[0].offset + r[0].data.size(), from);
        QVERIFY(from - r[0].offset <= kLogChunkBytes);
        // Near the start: from byte 0, nothing cut.
        const QList<LogRead> start = readLogFiles(executor, {{LogReadJob::Kind::Earlier, 0, path, 14, -1}});
        QCOMPARE(start[0].offset, 0);
        QCOMPARE(start[0].data, QByteArray("line 0\nline 1\n"));
    }

    // `orrery sweep logs`: a whole file, larger than one read, chunk by chunk from its start.
    void fromReadsAWholeFileInChunks()
    {
        QTemporaryDir dir;
        LocalExecutor executor(kNoTrainer, kNoSupervisor, dir.path());
        const QString path = dir.filePath(QStringLiteral("log"));
        const QByteArray bytes = QByteArray(kLogFromBytes + 1000, 'a') + "\nend\n";
        QVERIFY(writeFile(path, bytes));
        QByteArray got;
        qint64 end = 0;
        int reads = 0;
        while (true) {
            const LogRead r = readLogFiles(executor, {{LogReadJob::Kind::From, 0, path, -1, end}}).front();
            ++reads;
            if (r.kind != LogRead::Kind::Append)
                break;
            QCOMPARE(r.offset, end);
            got += r.data;
            end += r.data.size();
        }
        QCOMPARE(got, bytes);
        QCOMPARE(reads, 3);  // two chunks, then nothing new
        QCOMPARE(readLogFiles(executor, {{LogReadJob::Kind::From, 0, path + QStringLiteral(".x"), -1, 0}})
                     .front()
                     .kind,
                 LogRead::Kind::Missing);
    }

    void logTailer_readsTheTailThenWhatIsNew()
    {
        QTemporaryDir dir;
        LocalExecutor executor(kNoTrainer, kNoSupervisor, dir.path());
        auto [sweep, trial] = runningTrial(dir, 1, 0);
        QVERIFY(QDir(trial.runDir).exists());
        LogTailer tailer;
        LogTail t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.of, (LogRequest{1, 0}));
        QCOMPARE(t.state, QStringLiteral("running"));
        QCOMPARE(t.files.size(), 2);
        QVERIFY(!t.files[0].exists && t.files[0].lines.isEmpty());

        // More than a tail's worth: the last lines only, none cut at the front.
        QFile out(dir.filePath(QStringLiteral("run0/stdout.log")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        for (int i = 0; i < 20'000; ++i)
            out.write(QStringLiteral("line %1\n").arg(i).toUtf8());
        out.flush();
        t = tailer.read(executor, sweep, trial);
        QVERIFY(t.files[0].exists);
        QCOMPARE(t.files[0].lines.back(), QStringLiteral("line 19999"));
        QVERIFY(t.files[0].lines.size() <= LogTailer::kMaxLines);
        QVERIFY(t.files[0].lines.front().startsWith(QLatin1String("line ")));
        QVERIFY(!t.files[1].exists);
        // What is appended arrives, an unfinished line included.
        out.write("line 20000\npartial");
        out.flush();
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[0].lines.back(), QStringLiteral("partial"));
        QCOMPARE(t.files[0].lines[t.files[0].lines.size() - 2], QStringLiteral("line 20000"));
        // Rewritten shorter (a new attempt's log): read again from its start.
        out.close();
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write("fresh\n");
        out.close();
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[0].lines, QStringList{QStringLiteral("fresh")});
    }

    // Another attempt of the trial starts over: its state, its files read from their tails.
    void logTailer_anotherAttemptStartsOver()
    {
        QTemporaryDir dir;
        LocalExecutor executor(kNoTrainer, kNoSupervisor, dir.path());
        auto [sweep, trial] = runningTrial(dir, 3, 2);
        QVERIFY(QDir(trial.runDir).exists());
        QFile err(dir.filePath(QStringLiteral("run2/stderr.log")));
        QVERIFY(err.open(QIODevice::WriteOnly));
        err.write("attempt 0 failed\n");
        err.close();
        LogTailer tailer;
        LogTail t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files.size(), 2);
        QCOMPARE(t.files[1].lines, QStringList{QStringLiteral("attempt 0 failed")});

        trial.attempt = 1;
        trial.state = QStringLiteral("queued");
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.attempt, 1);
        QCOMPARE(t.state, QStringLiteral("queued"));
        QCOMPARE(t.files[1].lines, QStringList{QStringLiteral("attempt 0 failed")});  // from its tail

        // The local executor appends a retry to the same files, after its marker (issue 41:
        // "stderr of attempt 1" held both attempts' output): each attempt reads its own part.
        QVERIFY(err.open(QIODevice::Append));
        err.write(attemptMarker(1, QStringLiteral("0.2"), QDateTime::currentDateTimeUtc()));
        err.write("Traceback (most recent call last):\nValueError: lr must be positive\n");
        err.close();
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[1].lines,
                 (QStringList{QStringLiteral("Traceback (most recent call last):"),
                              QStringLiteral("ValueError: lr must be positive")}));
        trial.attempt = 0;
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[1].lines, QStringList{QStringLiteral("attempt 0 failed")});
        trial.attempt = 2;  // queued, nothing written yet: none of the others' lines
        t = tailer.read(executor, sweep, trial);
        QVERIFY(t.files[1].lines.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLogRead)
#include "tst_logread.moc"
