// SPDX-License-Identifier: GPL-3.0-or-later
// `sweep submit --watch` as a person sees it: a real local sweep of the real trainer, watched in a
// real terminal (tmux), shows one status block whose steps advance with a rate and an ETA, then
// the final table; the same command into a pipe writes plain lines, with step counts and no
// control characters.
#include "sweeptest.h"
#include "tmuxsession.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using orrery::test::TmuxSession;

class TestCliProgress : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    // Two trials of a shrunken tiny model (fast steps: the suite shares two cores), `steps` long.
    QString spec(const QString &name, int steps)
    {
        const QString path = m_dir.filePath(name + QStringLiteral(".yaml"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(QStringLiteral("name: %1\nexperiment: progress\n"
                               "trainer: {config: %2/resources/configs/tiny.yaml}\n"
                               "method: grid\nmetric: {name: eval/loss, goal: minimize}\n"
                               "parameters:\n  optim.lr: {values: [1e-3, 3e-3]}\n"
                               "  train.steps: {value: %3}\n  train.log_every: {value: 5}\n"
                               "  train.ckpt_every: {value: 0}\n  data.size: {value: 16}\n"
                               "  data.frames: {value: 4}\n  model.channels: {value: 16}\n"
                               "  train.batch_size: {value: 2}\n"
                               "max_concurrent: 2\n")
                    .arg(name, qEnvironmentVariable("ORRERY_SOURCE_DIR"))
                    .arg(steps)
                    .toUtf8());
        return path;
    }
    QStringList env() const
    {
        return {QStringLiteral("HOME=") + m_dir.path(),
                QStringLiteral("XDG_CONFIG_HOME=") + m_dir.filePath(QStringLiteral("config")),
                QStringLiteral("ORRERY_TRAINER=") + orrery::test::trainer(), QStringLiteral("LANG=C.UTF-8"),
                QStringLiteral("TERM=xterm-256color")};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!orrery::test::cli().isEmpty() && !orrery::test::trainer().isEmpty(),
                 "ORRERY_CLI and ORRERY_TRAINER must name the built programs (CTest sets them)");
        if (const QString missing = TmuxSession::missing(); !missing.isEmpty())
            QFAIL(qPrintable(missing));
    }

    void aTerminalShowsOneLiveBlockWithStepsRateAndEta()
    {
        TmuxSession tmux;
        const QString db = m_dir.filePath(QStringLiteral("tty.sqlite"));
        QVERIFY2(tmux.start(TmuxSession::reportingExit(
                                QStringLiteral("'%1' --db '%2' sweep submit '%3' --watch")
                                    .arg(orrery::test::cli(), db, spec(QStringLiteral("tty"), 300))),
                            140, 30, env()),
                 qPrintable(tmux.error()));
        // A trial line with step N/120, a rate and an ETA; later, a higher step on the same line.
        static const QRegularExpression running(
            QStringLiteral(R"(trial (\d)\s+running\s+step (\d+)/300\s+[\d.e+]+ steps/s.*ETA \d+(s|m))"));
        QString s;
        qint64 first = -1;
        QVERIFY2(tmux.waitFor(
                     [&](const QString &screen) {
                         const auto m = running.match(screen);
                         if (m.hasMatch() && first < 0)
                             first = m.captured(2).toLongLong();
                         return m.hasMatch() && m.captured(2).toLongLong() > first;
                     },
                     120'000, &s),
                 qPrintable(s));
        // The block is drawn once: one head line (events say "[time] tty: ..."), whatever the number
        // of redraws.
        static const QRegularExpression head(QStringLiteral("^tty: "), QRegularExpression::MultilineOption);
        QCOMPARE(s.count(head), 1);
        QVERIFY2(s.contains(QRegularExpression(QStringLiteral(R"(steps \d+/600 \(\d+%\)  ETA)"))),
                 qPrintable(s));
        QVERIFY2(tmux.waitForText(QStringLiteral("[exit 0, tty restored]"), 180'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QStringLiteral("best: ")) && s.contains(QStringLiteral("completed  300")),
                 qPrintable(s));
        QVERIFY2(!s.contains(QStringLiteral("steps/s")), qPrintable(s));  // the block is gone
    }

    void aPipeGetsPlainLinesWithStepCounts()
    {
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString &kv : env())
            e.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
        p.setProcessEnvironment(e);
        p.start(orrery::test::cli(),
                {QStringLiteral("--db"), m_dir.filePath(QStringLiteral("pipe.sqlite")),
                 QStringLiteral("sweep"), QStringLiteral("submit"), spec(QStringLiteral("pipe"), 60),
                 QStringLiteral("--watch")});
        QVERIFY(p.waitForFinished(240'000));
        QCOMPARE(p.exitCode(), 0);
        const QByteArray out = p.readAllStandardOutput();
        QVERIFY2(!out.contains('\x1b') && !out.contains('\r'), out.constData());
        QVERIFY2(out.contains("; steps "), out.constData());
        QVERIFY2(QString::fromUtf8(out).contains(
                     QRegularExpression(QStringLiteral(R"(\] 2 of 2 trials: 2 done.*steps 120/120)"))),
                 out.constData());
    }

    void ingestShowsABarOnATerminalOnly()
    {
        // A run directory big enough to be read in several chunks.
        const QString run = m_dir.filePath(QStringLiteral("ingest/run-a"));
        QVERIFY(QDir().mkpath(run));
        QFile f(run + QStringLiteral("/events.jsonl"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 200'000; ++i)
            f.write(
                QStringLiteral(
                    "{\"kind\":\"metrics\",\"step\":%1,\"t\":%2,\"v\":1,\"values\":{\"train/loss\":%3}}\n")
                    .arg(i)
                    .arg(1.7e9 + i)
                    .arg(1.0 / (i + 1))
                    .toUtf8());
        f.close();
        // On a terminal (script(1) gives the command one): the bar, with bytes and a percentage.
        const QString db = m_dir.filePath(QStringLiteral("ingest-tty.sqlite"));
        QProcess tty;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("TERM"), QStringLiteral("xterm"));
        tty.setProcessEnvironment(e);
        tty.start(QStringLiteral("script"),
                  {QStringLiteral("-qec"),
                   QStringLiteral("'%1' --db '%2' runs ingest '%3'")
                       .arg(orrery::test::cli(), db, m_dir.filePath(QStringLiteral("ingest"))),
                   QStringLiteral("/dev/null")});
        QVERIFY(tty.waitForFinished(60'000));
        const QString screen = QString::fromUtf8(tty.readAllStandardOutput());
        QCOMPARE(tty.exitCode(), 0);
        QVERIFY2(
            screen.contains(QRegularExpression(QStringLiteral(R"(\[#*\.*\] +\d+%  [\d.]+ MB/[\d.]+ MB)"))),
            qPrintable(screen));
        QVERIFY2(screen.contains(QStringLiteral("200000 points")), qPrintable(screen));
        // Into a pipe, and with --quiet: no bar, no control character; --quiet drops the per-run line.
        QProcess pipe;
        pipe.setProcessEnvironment(e);
        pipe.start(orrery::test::cli(),
                   {QStringLiteral("--db"), m_dir.filePath(QStringLiteral("ingest-pipe.sqlite")),
                    QStringLiteral("runs"), QStringLiteral("ingest"),
                    m_dir.filePath(QStringLiteral("ingest")), QStringLiteral("--quiet")});
        QVERIFY(pipe.waitForFinished(60'000));
        QCOMPARE(pipe.exitCode(), 0);
        const QByteArray all = pipe.readAllStandardOutput() + pipe.readAllStandardError();
        QVERIFY2(!all.contains('\x1b') && !all.contains('\r') && !all.contains("[1/1]"), all.constData());
        QVERIFY2(all.contains("ingested 1 run directory: 200000 points"), all.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliProgress)
#include "tst_cli_progress.moc"
