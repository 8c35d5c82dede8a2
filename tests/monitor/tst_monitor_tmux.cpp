// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery monitor` as a user sees it: the real binary in a real terminal (tmux on a private
// socket), reading a store this test writes through the TrackingStore API. Keys go in with
// send-keys; the screen comes back with capture-pane.
#include "monitorstore.h"
#include "testsupport.h"
#include "tmuxsession.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QThread>

using orrery::test::TmuxSession;

class TestMonitorTmux : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_db;

    // An environment with no cluster profile and nothing of the user's.
    QStringList env(const QString &config, const QStringList &extra = {}) const
    {
        return QStringList{QStringLiteral("HOME=") + m_dir.path(),
                           QStringLiteral("XDG_CONFIG_HOME=") + config, QStringLiteral("LANG=C.UTF-8"),
                           QStringLiteral("LC_ALL=C.UTF-8")} +
            extra;
    }

    QProcessEnvironment childEnvironment(const QString &config) const
    {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("HOME"), m_dir.path());
        e.insert(QStringLiteral("XDG_CONFIG_HOME"), config);
        return e;
    }

    QString command(const QString &prefix = {}, const QString &db = {}) const
    {
        return TmuxSession::reportingExit(
            QStringLiteral("%1 '%2' --db '%3' monitor --no-follow --refresh 1")
                .arg(prefix, qEnvironmentVariable("ORRERY_CLI"), db.isEmpty() ? m_db : db));
    }

    static QString lineWith(const QString &screen, const QString &needle)
    {
        for (const QString &line : screen.split(QLatin1Char('\n')))
            if (line.contains(needle))
                return line;
        return {};
    }

    // `orrery cluster add NAME --host 127.0.0.1 --port PORT` into the config dir `config`.
    void addProfile(const QString &config, const QString &name, int port)
    {
        QProcess add;
        add.setProcessEnvironment(childEnvironment(config));
        add.start(qEnvironmentVariable("ORRERY_CLI"),
                  {QStringLiteral("cluster"), QStringLiteral("add"), name, QStringLiteral("--host"),
                   QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QString::number(port),
                   QStringLiteral("--user"), QStringLiteral("nobody")});
        QVERIFY(add.waitForFinished(10'000));
        QVERIFY2(add.exitCode() == 0, add.readAllStandardError().constData());
    }

    // q: status 0, the terminal's modes restored, the cursor back and (where the terminal has
    // one) the alternate screen left, so the shell's screen is back as it was.
    static void quitCleanly(TmuxSession &tmux, bool alternateScreen = true)
    {
        QVERIFY(tmux.sendKeys({QStringLiteral("q")}));
        QString s;
        QVERIFY2(tmux.waitForText(QStringLiteral("[exit "), 10'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("[exit 0, tty restored]")), qPrintable(s));
        QCOMPARE(tmux.format(QStringLiteral("#{alternate_on}")), QStringLiteral("0"));
        QCOMPARE(tmux.format(QStringLiteral("#{cursor_flag}")), QStringLiteral("1"));
        if (alternateScreen)
            QVERIFY2(!s.contains(QLatin1String("orrery monitor")), qPrintable(s));
    }

    // Starts the monitor on `db` and presses c on its first sweep, `name` (with 2 active trials):
    // the question is on the bottom line.
    void startAndAskToCancel(TmuxSession &tmux, const QString &db, const QString &name)
    {
        QVERIFY2(tmux.start(command({}, db), 100, 30, env(m_dir.filePath(QStringLiteral("empty-config")))),
                 qPrintable(tmux.error()));
        QString s;
        QVERIFY2(tmux.waitForText(name, 10'000, &s), qPrintable(s));
        QVERIFY(tmux.sendKeys({QStringLiteral("c")}));
        QVERIFY2(
            tmux.waitForText(QStringLiteral("Cancel sweep %1 (2 active trials)? y/n").arg(name), 5'000, &s),
            qPrintable(s));
    }

private Q_SLOTS:
    void initTestCase()
    {
        ORRERY_REQUIRE_TMUX();
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI (the orrery binary) is not set");
        m_db = m_dir.filePath(QStringLiteral("orrery.sqlite"));
        orrery::test::writeMonitorStore(m_db);
    }

    void sweepsTrialsResizeAndQuit()
    {
        TmuxSession tmux;
        QVERIFY2(tmux.start(command(), 100, 30, env(m_dir.filePath(QStringLiteral("empty-config")))),
                 qPrintable(tmux.error()));
        QString s;
        QVERIFY2(tmux.waitForText(QStringLiteral("lr-sweep"), 10'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("No cluster is configured")), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("orrery cluster add NAME --host HOST")), qPrintable(s));
        const QString lr = lineWith(s, QStringLiteral("lr-sweep"));
        QVERIFY2(lr.contains(QLatin1String("local")) && lr.contains(QLatin1String("2/1/1/1 of 5")) &&
                     lr.contains(QLatin1String("0.1234")),
                 qPrintable(s));
        QVERIFY2(QRegularExpression(QStringLiteral("[▁▂▃▄▅▆▇█]{5,}")).match(lr).hasMatch(), qPrintable(lr));
        const QString old = lineWith(s, QStringLiteral("old-sweep"));
        QVERIFY2(old.contains(QLatin1String("fixture")) && old.contains(QLatin1String("1/0/0/0 of 1")) &&
                     old.contains(QLatin1String("0.75")),
                 qPrintable(s));
        QVERIFY(s.indexOf(QLatin1String("lr-sweep")) <
                s.indexOf(QLatin1String("old-sweep")));  // active first

        // Enter: the highlighted (first) sweep's trials.
        QVERIFY(tmux.sendKeys({QStringLiteral("Enter")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("lr=0.0003"), 10'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("Trials of lr-sweep (eval/loss, minimize)")), qPrintable(s));
        const QString retried = lineWith(s, QStringLiteral("lr=0.0001"));
        // ... GPU-H "-", HEALTH "-" (no health check ran).
        QVERIFY2(
            QRegularExpression(
                QStringLiteral("^\\s*2\\s+running\\s+1\\s+lr=0\\.0001\\s+10\\s+0\\.5\\s+0\\.5\\s+-\\s+-$"))
                .match(retried)
                .hasMatch(),
            qPrintable(s));
        QVERIFY2(lineWith(s, QStringLiteral("lr=0.001 ")).contains(QLatin1String("0.1234")), qPrintable(s));

        // Esc: back to the sweeps.
        QVERIFY(tmux.sendKeys({QStringLiteral("Escape")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("TRIALS d/r/q/f"), 5'000, &s), qPrintable(s));

        // Resize: the whole screen is laid out again for the new size.
        QVERIFY2(tmux.resize(80, 24), qPrintable(tmux.error()));
        QVERIFY2(tmux.waitFor(
                     [](const QString &screen) {
                         const QStringList lines = screen.split(QLatin1Char('\n'));
                         // The clock ends the title bar one cell before the right edge.
                         return lines.size() >= 24 && lines.front().size() == 79 &&
                             lines.at(23).contains(QLatin1String("q quit"));
                     },
                     5'000, &s),
                 qPrintable(s));
        QVERIFY2(lineWith(s, QStringLiteral("lr-sweep")).contains(QLatin1String("2/1/1/1 of 5")),
                 qPrintable(s));
        QVERIFY2(tmux.resize(120, 40), qPrintable(tmux.error()));
        QVERIFY2(tmux.waitFor(
                     [](const QString &screen) {
                         const QStringList lines = screen.split(QLatin1Char('\n'));
                         return lines.size() >= 40 && lines.front().size() == 119 &&
                             lines.at(39).contains(QLatin1String("q quit"));
                     },
                     5'000, &s),
                 qPrintable(s));
        // Too small for the layout: still a screen, still alive, still quits.
        QVERIFY2(tmux.resize(30, 6), qPrintable(tmux.error()));
        QVERIFY2(
            tmux.waitFor(
                [](const QString &screen) { return screen.startsWith(QLatin1String(" orrery monitor")); },
                5'000, &s),
            qPrintable(s));
        quitCleanly(tmux);
    }

    void cancelAsksAndLogsTail()
    {
        // Trial 0 of lr-sweep gets a run dir with the LocalExecutor's log files; its stdout's last
        // line carries escape sequences (clear the screen, colours) that must not reach the
        // terminal as such.
        const QString runDir = m_dir.filePath(QStringLiteral("lr-0"));
        QVERIFY(QDir().mkpath(runDir));
        orrery::core::SweepId lr = 0;
        {
            auto store = orrery::core::TrackingStore::open(m_db);
            for (const orrery::core::Sweep &sw : store->sweeps())
                if (sw.name == QLatin1String("lr-sweep"))
                    lr = sw.id;
            QVERIFY(lr != 0);
            for (orrery::core::Trial t : store->trials(lr))
                if (t.index == 0) {
                    t.runDir = runDir;
                    store->updateTrial(t);
                }
        }
        QFile out(runDir + QStringLiteral("/stdout.log"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        for (int i = 1; i <= 200; ++i)
            out.write(QStringLiteral("epoch %1 loss 0.5\n").arg(i).toUtf8());
        out.write("\x1b[2J\x1b[31mLAST-LINE-MARK\x1b[0m\tdone\n");
        out.flush();
        QFile errors(runDir + QStringLiteral("/stderr.log"));
        QVERIFY(errors.open(QIODevice::WriteOnly));
        errors.write("stderr-mark: a warning\n");
        errors.close();

        // c asks; n leaves the sweep as it was.
        TmuxSession tmux;
        startAndAskToCancel(tmux, m_db, QStringLiteral("lr-sweep"));
        if (QTest::currentTestFailed())
            return;
        QString s;
        QVERIFY(tmux.sendKeys({QStringLiteral("n")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("not cancelled"), 5'000, &s), qPrintable(s));
        // A refresh after the answer, proven: a value written now must show up. Only then does
        // "lr-sweep is unchanged" mean the store was read again and still said so.
        {
            auto store = orrery::core::TrackingStore::open(m_db);
            for (const orrery::core::Sweep &sw : store->sweeps())
                if (sw.name == QLatin1String("old-sweep"))
                    for (const orrery::core::Trial &t : store->trials(sw.id))
                        store->logMetrics(t.runId, {{QStringLiteral("eval/acc"), {6, 1006, 0.875}}});
        }
        QVERIFY2(tmux.waitForText(QStringLiteral("0.875"), 10'000, &s), qPrintable(s));
        QVERIFY2(lineWith(s, QStringLiteral("old-sweep")).contains(QLatin1String("0.875")), qPrintable(s));
        QVERIFY2(lineWith(s, QStringLiteral("lr-sweep")).contains(QLatin1String("running")) &&
                     lineWith(s, QStringLiteral("lr-sweep")).contains(QLatin1String("2/1/1/1 of 5")),
                 qPrintable(s));
        {
            auto store = orrery::core::TrackingStore::open(m_db);
            QCOMPARE(store->sweep(lr)->state, QStringLiteral("running"));
            for (const orrery::core::Trial &t : store->trials(lr))
                QVERIFY2(t.state != QLatin1String("cancelling") && t.state != QLatin1String("cancelled"),
                         qPrintable(t.state));
        }

        // Enter, then l on the first trial: its logs' tail, made safe.
        QVERIFY(tmux.sendKeys({QStringLiteral("Enter")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("lr=0.0003"), 10'000, &s), qPrintable(s));
        QVERIFY(tmux.sendKeys({QStringLiteral("l")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("LAST-LINE-MARK"), 10'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("Logs of trial 0 of lr-sweep")), qPrintable(s));
        QVERIFY2(lineWith(s, QStringLiteral("LAST-LINE-MARK"))
                     .startsWith(QLatin1String("?[2J?[31mLAST-LINE-MARK?[0m     done")),
                 qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("epoch 200 loss")) && !s.contains(QLatin1String("epoch 1 loss")),
                 qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("stderr-mark: a warning")), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("stdout.log <==")) && s.contains(QLatin1String("stderr.log <==")),
                 qPrintable(s));
        // A live tail: what is appended shows on a later refresh.
        out.write("APPENDED-LATER\n");
        out.close();
        QVERIFY2(tmux.waitForText(QStringLiteral("APPENDED-LATER"), 10'000, &s), qPrintable(s));
        // Esc: back to the trials.
        QVERIFY(tmux.sendKeys({QStringLiteral("Escape")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("lr=0.0003"), 5'000, &s), qPrintable(s));
        QVERIFY2(!s.contains(QLatin1String("LAST-LINE-MARK")), qPrintable(s));
        quitCleanly(tmux);
    }

    void cancelWithYes()
    {
        // A sweep of its own whose two active trials have local task ids of tasks that do not
        // exist: the LocalExecutor's cancel only writes their marker files.
        using namespace orrery::core;
        const QString db = m_dir.filePath(QStringLiteral("cancel.sqlite"));
        const QString local = m_dir.filePath(QStringLiteral("cancel-me/local"));
        QVERIFY(QDir().mkpath(local));
        SweepId id = 0;
        {
            auto store = TrackingStore::open(db);
            Sweep sw;
            sw.name = QStringLiteral("cancel-me");
            sw.experimentId = store->ensureExperiment(QStringLiteral("moving-shapes"));
            sw.method = QStringLiteral("grid");
            sw.state = QStringLiteral("running");
            sw.rootDir = m_dir.filePath(QStringLiteral("cancel-me"));
            id = store->createSweep(sw);
            for (int i = 0; i < 2; ++i) {
                Trial t = orrery::test::trial(
                    id, i, 0, 0, i == 0 ? QStringLiteral("running") : QStringLiteral("queued"), QString());
                t.task = QDir(local).filePath(QStringLiteral("1.%1").arg(i));
                store->addTrial(t);
            }
        }
        TmuxSession tmux;
        startAndAskToCancel(tmux, db, QStringLiteral("cancel-me"));
        if (QTest::currentTestFailed())
            return;
        QString s;
        QVERIFY(tmux.sendKeys({QStringLiteral("y")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("cancelling sweep cancel-me"), 10'000, &s), qPrintable(s));
        QVERIFY2(tmux.waitFor(
                     [](const QString &screen) {
                         // The sweep's row (above the status line) as the next read has it.
                         return lineWith(screen, QStringLiteral("cancel-me"))
                             .contains(QLatin1String("cancelling"));
                     },
                     10'000, &s),
                 qPrintable(s));
        {
            auto store = TrackingStore::open(db);
            QCOMPARE(store->sweep(id)->state, QStringLiteral("cancelling"));
            for (const Trial &t : store->trials(id))
                QCOMPARE(t.state, QStringLiteral("cancelling"));
        }
        QVERIFY(QFile::exists(QDir(local).filePath(QStringLiteral("1.0.cancel"))));
        QVERIFY(QFile::exists(QDir(local).filePath(QStringLiteral("1.1.cancel"))));
        quitCleanly(tmux);
    }

    void asciiOnVt100WithoutColour()
    {
        TmuxSession tmux;
        // TERM in the command: tmux sets the pane's own TERM after applying -e.
        QVERIFY2(
            tmux.start(command(QStringLiteral("TERM=vt100 NO_COLOR=1")), 100, 30,
                       {QStringLiteral("HOME=") + m_dir.path(),
                        QStringLiteral("XDG_CONFIG_HOME=") + m_dir.filePath(QStringLiteral("empty-config")),
                        QStringLiteral("LANG=C"), QStringLiteral("LC_ALL=C")}),
            qPrintable(tmux.error()));
        QString s;
        QVERIFY2(tmux.waitForText(QStringLiteral("lr-sweep"), 10'000, &s), qPrintable(s));
        const QString lr = lineWith(s, QStringLiteral("lr-sweep"));
        // The ASCII sparkline, then the GPU-H column.
        QVERIFY2(QRegularExpression(QStringLiteral("[_.\\-~=+*#]{5,}\\s+(-|[0-9.]+)$")).match(lr).hasMatch(),
                 qPrintable(lr));
        for (const QChar c : s)
            QVERIFY2(c.unicode() < 0x80, qPrintable(s));
        QVERIFY(tmux.sendKeys({QStringLiteral("?")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("j/k move  Enter open"), 5'000, &s), qPrintable(s));
        quitCleanly(tmux, false);  // a vt100 has no alternate screen: the last screen stays
    }

    void unreachableClusterIsAStatusLineAndRetried()
    {
        // A port nobody listens on: taken, then freed.
        int port = 0;
        {
            QTcpServer server;
            QVERIFY(server.listen(QHostAddress::LocalHost));
            port = server.serverPort();
        }
        const QString config = m_dir.filePath(QStringLiteral("dead-config"));
        addProfile(config, QStringLiteral("dead"), port);
        if (QTest::currentTestFailed())
            return;

        TmuxSession tmux;
        QVERIFY2(tmux.start(command(), 100, 30, env(config)), qPrintable(tmux.error()));
        QString s;
        QVERIFY2(tmux.waitForText(QStringLiteral("connection problem:"), 15'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("cluster dead: UNREACHABLE")), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("lr-sweep")), qPrintable(s));  // the store side is unaffected
        // The keyboard stays live while the cluster is retried.
        QVERIFY(tmux.sendKeys({QStringLiteral("Enter")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("lr=0.0003"), 10'000, &s), qPrintable(s));
        quitCleanly(tmux);
    }

    void quitDoesNotWaitForASilentCluster()
    {
        // Accepts connections (the kernel does, from the backlog) and never says a word: the
        // poll waits for the SSH banner until the connect timeout (10 s).
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost));
        const QString config = m_dir.filePath(QStringLiteral("silent-config"));
        addProfile(config, QStringLiteral("silent"), silent.serverPort());
        if (QTest::currentTestFailed())
            return;

        TmuxSession tmux;
        QVERIFY2(tmux.start(command(), 100, 30, env(config)), qPrintable(tmux.error()));
        QString s;
        QVERIFY2(tmux.waitForText(QStringLiteral("cluster silent: connecting"), 10'000, &s), qPrintable(s));
        QThread::msleep(500);  // the poll is in connect() now
        QElapsedTimer quitting;
        quitting.start();
        quitCleanly(tmux);
        // Well under the 10 s the poll would hold it, with room for a loaded machine.
        QVERIFY2(quitting.elapsed() < 7'000, qPrintable(QString::number(quitting.elapsed())));
    }

    void refusesWithoutATerminal()
    {
        QProcess p;
        p.setProcessEnvironment(childEnvironment(m_dir.filePath(QStringLiteral("empty-config"))));
        p.start(qEnvironmentVariable("ORRERY_CLI"),
                {QStringLiteral("--db"), m_db, QStringLiteral("monitor"), QStringLiteral("--no-follow")});
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(10'000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("needs a terminal"));
        p.start(qEnvironmentVariable("ORRERY_CLI"),
                {QStringLiteral("--db"), m_db, QStringLiteral("monitor"), QStringLiteral("--no-follow"),
                 QStringLiteral("--refresh"), QStringLiteral("0")});
        QVERIFY(p.waitForFinished(10'000));
        QCOMPARE(p.exitCode(), 2);
    }
};

ORRERY_TEST_MAIN(TestMonitorTmux, QCoreApplication)
#include "tst_monitor_tmux.moc"
