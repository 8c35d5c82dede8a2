// SPDX-License-Identifier: GPL-3.0-or-later
// Hangs ended (docs/sweeps.md "Hangs"), on this machine's real executor (child processes under
// the real `orrery sweep supervise`) and a real SQLite store: a command that prints steps and then
// sleeps forever, and one that a test stops with a real SIGSTOP (and that ignores SIGTERM, so
// only the runner's kill ends it), are marked hung, ended and resumed; the resumed attempt sees
// ORRERY_RESUME=1 and completes. A hang uses no retry (`retries: 0`). The runner's notices for it
// are checked as they come out of the ticks.
#include "sweepsupport.h"
#include "testsupport.h"

#include "orrery/core/notice.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprules.h"
#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <functional>

using namespace orrery;
using remote::SweepOperations;

class TestSweepHang : public QObject {
    Q_OBJECT
    QTemporaryDir m_home;
    std::optional<core::TrainerSchema> m_schema;
    int m_specs = 0;

    // One trial of `script` (sh) with hang_timeout `timeout`.
    remote::CheckedSpec spec(const QString &script, const QString &timeout)
    {
        const QString path = m_home.filePath(QStringLiteral("hang%1.yaml").arg(++m_specs));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(path));
        f.write(QStringLiteral("name: hang%1\nexperiment: hangs\nmethod: grid\nretries: 0\n"
                               "hang_timeout: %2\n"
                               "command: [sh, -c, '%3', '{{x}}']\n"
                               "parameters:\n  x: {values: [0]}\n")
                    .arg(m_specs)
                    .arg(timeout, script)
                    .toUtf8());
        f.close();
        return SweepOperations::checkSpecFile(path, *m_schema, false);
    }

    SweepOperations::Options options()
    {
        SweepOperations::Options o;
        o.schema = m_schema;
        o.settle = remote::Settle::Wait;
        return o;
    }

    struct Followed {
        QList<core::Notice> notices;
        QStringList events;
    };
    // Ticks every 250 ms until the sweep ends (or `limitMs` passes), calling `each` after each tick.
    static Followed follow(SweepOperations &ops, core::SweepId sweep, qint64 limitMs,
                           const std::function<void()> &each = {})
    {
        Followed f;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < limitMs) {
            const core::TickReport r = ops.tick(sweep);
            f.notices << r.notices;
            f.events << r.events;
            if (each)
                each();
            const auto sw = ops.store().sweep(sweep);
            if (sw && !core::isActive(sw->sweepState()))
                break;
            QThread::msleep(250);
        }
        return f;
    }

    static QList<core::Trial> attempts(core::TrackingStore &store, core::SweepId sweep)
    {
        return store.trials(sweep);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI (the orrery binary) is not set");
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qputenv("XDG_DATA_HOME", m_home.filePath(QStringLiteral("data")).toUtf8());
        qputenv("XDG_CONFIG_HOME", m_home.filePath(QStringLiteral("config")).toUtf8());
        m_schema = orrery::test::trainerSchema();
    }

    // Steps, then a sleep that never ends: no output growth for the hang_timeout → hung, ended
    // (SIGTERM ends the sleep), resumed, and the resumed attempt completes.
    void aSleepingCommandIsEndedAndResumed()
    {
        const QString script =
            QStringLiteral("if [ \"$ORRERY_RESUME\" = 1 ]; then echo resumed; exit 0; fi; "
                           "for i in 1 2 3; do echo step $i; sleep 0.3; done; exec sleep 1000");
        auto db = core::TrackingStore::open(m_home.filePath(QStringLiteral("hang.sqlite")));
        SweepOperations ops(*db, options());
        const auto checked = spec(script, QStringLiteral("3s"));
        QVERIFY(!checked.warnings().isEmpty());  // under a minute: warned, allowed
        const core::SweepId id = ops.submit(checked, {});
        const Followed f = follow(ops, id, 60000);
        const QList<core::Trial> all = attempts(*db, id);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].trialState(), core::TrialState::Failed);
        QVERIFY2(all[0].exitReason.startsWith(QStringLiteral("hung: no progress for ")),
                 qPrintable(all[0].exitReason));
        QVERIFY2(all[0].exitReason.contains(QStringLiteral("(hang_timeout 3s)")),
                 qPrintable(all[0].exitReason));
        QVERIFY(all[0].progressMs >= all[0].startedMs);
        QCOMPARE(all[1].trialState(), core::TrialState::Completed);
        QCOMPARE(all[1].progressMs >= all[1].startedMs || all[1].progressMs == 0, true);
        // Ended and resumed within hang_timeout + one tick (the tick is 250 ms here; the launch
        // of the next attempt and the progress's grain of a quarter of the timeout make the rest).
        const qint64 detected = all[1].submittedMs - all[0].progressMs;
        qInfo("last progress → resubmitted: %lld ms (hang_timeout 3000 ms)", detected);
        QVERIFY2(detected <= 3000 + 250 + 2500, qPrintable(QString::number(detected)));
        QVERIFY2(f.events.join(QLatin1Char('\n')).contains(QStringLiteral("trial 0 hung: no progress for")),
                 qPrintable(f.events.join(QLatin1Char('\n'))));
        QCOMPARE(ops.store().sweep(id)->sweepState(), core::SweepState::Finished);
        // One notice for the hang (resubmitted), one for the sweep's end.
        QCOMPARE(f.notices.size(), 2);
        QCOMPARE(f.notices[0].kind, core::Notice::Kind::TrialHung);
        QCOMPARE(f.notices[0].trial, std::optional<int>(0));
        QVERIFY2(f.notices[0].message.contains(QStringLiteral("resubmitted (attempt 2)")),
                 qPrintable(f.notices[0].message));
        QCOMPARE(f.notices[1].kind, core::Notice::Kind::SweepEnded);
        QCOMPARE(f.notices[1].state, QStringLiteral("finished"));
    }

    // A real process stopped with SIGSTOP that ignores SIGTERM: the cancel does not end it, the
    // runner's kill (SIGCONT + SIGKILL to its group) does, kHangKillGraceMs later.
    void aStoppedProcessIsKilledAndResumed()
    {
        const QString script =
            QStringLiteral("if [ \"$ORRERY_RESUME\" = 1 ]; then echo resumed; exit 0; fi; "
                           "trap \"\" TERM; echo $$ > \"$ORRERY_RUN_DIR/pid\"; "
                           "i=0; while true; do i=$((i+1)); echo step $i; sleep 0.2; done");
        auto db = core::TrackingStore::open(m_home.filePath(QStringLiteral("stop.sqlite")));
        SweepOperations ops(*db, options());
        const core::SweepId id = ops.submit(spec(script, QStringLiteral("3s")), {});
        qint64 stoppedAt = 0;
        const Followed f = follow(ops, id, 90000, [&] {
            if (stoppedAt != 0)
                return;
            const QList<core::Trial> all = attempts(*db, id);
            if (all.isEmpty() || all[0].trialState() != core::TrialState::Running)
                return;
            QFile pidFile(QDir(all[0].runDir).filePath(QStringLiteral("pid")));
            if (!pidFile.open(QIODevice::ReadOnly))
                return;
            const pid_t pid = pid_t(pidFile.readAll().trimmed().toLongLong());
            // Let it make progress for a second first, so the hang is one after progress.
            if (pid > 0 && QDateTime::currentMSecsSinceEpoch() - all[0].startedMs > 1500) {
                QCOMPARE(::kill(pid, SIGSTOP), 0);
                stoppedAt = QDateTime::currentMSecsSinceEpoch();
            }
        });
        QVERIFY(stoppedAt > 0);
        const QList<core::Trial> all = attempts(*db, id);
        QCOMPARE(all.size(), 2);
        QVERIFY2(all[0].exitReason.startsWith(QStringLiteral("hung: no progress for ")),
                 qPrintable(all[0].exitReason));
        QCOMPARE(all[1].trialState(), core::TrialState::Completed);
        const QString events = f.events.join(QLatin1Char('\n'));
        QVERIFY2(events.contains(QStringLiteral("did not end on SIGTERM")), qPrintable(events));
        // Stopped → hung after the timeout → killed after the grace → resumed, each within a tick.
        const qint64 took = all[1].submittedMs - stoppedAt;
        qInfo("SIGSTOP → resubmitted: %lld ms (hang_timeout 3000 ms + kill grace %lld ms)", took,
              core::kHangKillGraceMs);
        QVERIFY2(took <= 3000 + core::kHangKillGraceMs + 4 * 250 + 2500, qPrintable(QString::number(took)));
    }

    // A trial that fails for good gives one trial_failed notice, then the sweep's end one; a
    // follower that only reads (another holds the lease) gives none.
    void aFailureForGoodIsNoticedOnce()
    {
        auto db = core::TrackingStore::open(m_home.filePath(QStringLiteral("fail.sqlite")));
        SweepOperations ops(*db, options());
        const core::SweepId id =
            ops.submit(spec(QStringLiteral("echo broken >&2; exit 3"), QStringLiteral("auto")), {});
        auto other = core::TrackingStore::open(m_home.filePath(QStringLiteral("fail.sqlite")));
        SweepOperations::Options readerOptions = options();
        readerOptions.follower.id = QStringLiteral("another-follower");
        SweepOperations reader(*other, readerOptions);
        QList<core::Notice> readOnly;
        const Followed f = follow(ops, id, 30000, [&] { readOnly << reader.tick(id).notices; });
        QCOMPARE(f.notices.size(), 2);
        QCOMPARE(f.notices[0].kind, core::Notice::Kind::TrialFailed);
        QVERIFY2(f.notices[0].message.contains(QStringLiteral("no retries")),
                 qPrintable(f.notices[0].message));
        QCOMPARE(f.notices[1].kind, core::Notice::Kind::SweepEnded);
        QCOMPARE(f.notices[1].state, QStringLiteral("failed"));
        QVERIFY(readOnly.isEmpty());
    }
};

ORRERY_TEST_MAIN(TestSweepHang, QCoreApplication)
#include "tst_sweep_hang.moc"
