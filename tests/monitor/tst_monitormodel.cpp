// SPDX-License-Identifier: GPL-3.0-or-later
// The terminal monitor's model without a terminal: the sparkline, trial counting, compact params,
// table layout, what a real store reads as, and the rendered screen (sizes, keys, notices).
#include "monitorfeeds.h"
#include "monitormodel.h"
#include "monitorstore.h"
#include "sparkline.h"
#include "testsupport.h"

#include "orrery/core/usage.h"
#include "orrery/remote/profile.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QTemporaryDir>
#include <QThread>

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

using namespace orrery::monitor;
using orrery::core::Trial;
using orrery::core::TrialState;

class TestMonitorModel : public QObject {
    Q_OBJECT

    static QString joined(const QList<ScreenLine> &lines)
    {
        QStringList texts;
        for (const ScreenLine &l : lines)
            texts.append(l.text);
        return texts.join(QLatin1Char('\n'));
    }

    static const ScreenLine *lineWith(const QList<ScreenLine> &lines, const QString &needle)
    {
        for (const ScreenLine &l : lines)
            if (l.text.contains(needle))
                return &l;
        return nullptr;
    }

    static ClusterSnapshot fixtureCluster()
    {
        ClusterSnapshot c;
        c.cluster = QStringLiteral("fixture");
        c.polled = true;
        c.takenMs = 1'000'000;
        orrery::remote::slurm::Node n1;
        n1.name = QStringLiteral("vm1");
        n1.partitions = {QStringLiteral("gpu")};
        n1.state = QStringLiteral("mixed");
        n1.cpusAllocated = 1;
        n1.cpusTotal = 4;
        n1.memoryMb = 16000;
        n1.memoryAllocatedMb = 1000;
        n1.gpusTotal = 4;
        n1.gpusUsed = 1;
        orrery::remote::slurm::Node n2 = n1;
        n2.name = QStringLiteral("vm2");
        n2.state = QStringLiteral("down*");
        n2.cpusAllocated = 0;
        n2.gpusUsed = 0;
        c.info.nodes = {n1, n2};
        orrery::remote::slurm::Partition p;
        p.name = QStringLiteral("gpu");
        p.isDefault = true;
        p.up = true;
        p.timeLimit = QStringLiteral("infinite");
        p.nodes = {QStringLiteral("vm1"), QStringLiteral("vm2")};
        p.cpusTotal = 8;
        p.cpusIdle = 7;
        p.gpusTotal = 8;
        p.gpusUsed = 1;
        c.info.partitions = {p};
        orrery::remote::slurm::Job j;
        j.jobId = QStringLiteral("42");
        j.arrayJobId = QStringLiteral("42");
        j.name = QStringLiteral("train-probe");
        j.state = QStringLiteral("RUNNING");
        j.reason = QStringLiteral("None");
        j.nodes = 1;
        j.nodeList = QStringLiteral("vm1");
        j.elapsed = QStringLiteral("0:05");
        c.queue = {j};
        return c;
    }

    static StoreSnapshot storeSnapshot(orrery::core::SweepId trialsOf = 0)
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.sqlite"));
        orrery::test::writeMonitorStore(path);
        auto store = orrery::core::TrackingStore::open(path);
        return readStore(*store, trialsOf, 16);
    }

    static std::optional<StoreSnapshot> nextStore(MonitorFeeds &feeds)
    {
        QDeadlineTimer deadline(10'000);
        while (!deadline.hasExpired()) {
            if (std::optional<StoreSnapshot> s = feeds.takeStore())
                return s;
            QThread::msleep(10);
        }
        return std::nullopt;
    }

    static bool hasSweep(const StoreSnapshot &s, const QString &name)
    {
        return std::any_of(s.sweeps.begin(), s.sweeps.end(),
                           [&](const SweepSummary &sw) { return sw.sweep.name == name; });
    }

private Q_SLOTS:
    void sparkline_rampUsesEveryLevel()
    {
        const std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8};
        QCOMPARE(sparkline(v, 8, Glyphs::Unicode), QStringLiteral("▁▂▃▄▅▆▇█"));
        QCOMPARE(sparkline(v, 8, Glyphs::Ascii), QStringLiteral("_.-~=+*#"));
    }

    void sparkline_moreValuesThanColumnsAreAveraged()
    {
        // 0,0 | 10,10 | 0,0 | 10,10 → low, high, low, high.
        const std::vector<double> v{0, 0, 10, 10, 0, 0, 10, 10};
        QCOMPARE(sparkline(v, 4, Glyphs::Unicode), QStringLiteral("▁█▁█"));
    }

    void sparkline_fewerValuesThanColumnsIsShorter()
    {
        const std::vector<double> v{3, 1};
        QCOMPARE(sparkline(v, 10, Glyphs::Unicode), QStringLiteral("█▁"));
    }

    void sparkline_flatSeriesSitsInTheMiddle()
    {
        const std::vector<double> v{2, 2, 2};
        QCOMPARE(sparkline(v, 3, Glyphs::Ascii), QStringLiteral("~~~"));
    }

    void sparkline_nonFiniteIsABlankAndOutOfScale()
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        const std::vector<double> v{0, nan, inf, 1};
        QCOMPARE(sparkline(v, 4, Glyphs::Unicode), QStringLiteral("▁  █"));
    }

    void sparkline_emptyOrNoWidth()
    {
        QCOMPARE(sparkline({}, 5, Glyphs::Unicode), QString());
        const std::vector<double> v{1, 2};
        QCOMPARE(sparkline(v, 0, Glyphs::Unicode), QString());
    }

    void trialCounts_latestAttemptWins()
    {
        auto t = [](int index, int attempt, TrialState state) {
            Trial trial;
            trial.index = index;
            trial.attempt = attempt;
            trial.setState(state);
            return trial;
        };
        const TrialCounts c = countTrials({t(0, 0, TrialState::Completed), t(1, 0, TrialState::Failed),
                                           t(1, 1, TrialState::Running), t(2, 0, TrialState::Pending),
                                           t(3, 0, TrialState::Lost), t(4, 0, TrialState::Stopped),
                                           t(5, 0, TrialState::Preempted)});
        QCOMPARE(c.total, 6);
        QCOMPARE(c.done, 2);  // completed, stopped early
        QCOMPARE(c.running, 1);
        QCOMPARE(c.queued, 2);  // pending, preempted (it is resubmitted)
        QCOMPARE(c.failed, 1);  // lost
    }

    // Trials being stopped early or cancelled still run until their executor says they ended:
    // they count as running (the monitor once counted them as queued).
    void trialCounts_stoppingAndCancellingAreRunning()
    {
        QList<Trial> trials;
        for (const TrialState s : {TrialState::Stopping, TrialState::Cancelling, TrialState::Queued}) {
            Trial trial;
            trial.index = int(trials.size());
            trial.setState(s);
            trials << trial;
        }
        const TrialCounts c = countTrials(trials);
        QCOMPARE(c.running, 2);
        QCOMPARE(c.queued, 1);
    }

    void compactParams_onlyWhatDiffersWithShortKeys()
    {
        using M = QMap<QString, QString>;
        const QStringList c = compactParams({M{{QStringLiteral("optim.lr"), QStringLiteral("0.001")},
                                               {QStringLiteral("seed"), QStringLiteral("7")}},
                                             M{{QStringLiteral("optim.lr"), QStringLiteral("0.01")},
                                               {QStringLiteral("seed"), QStringLiteral("7")}}});
        QCOMPARE(c, (QStringList{QStringLiteral("lr=0.001"), QStringLiteral("lr=0.01")}));
        // Same last part twice: the full keys stay.
        const QStringList ambiguous = compactParams(
            {M{{QStringLiteral("a.lr"), QStringLiteral("1")}, {QStringLiteral("b.lr"), QStringLiteral("1")}},
             M{{QStringLiteral("a.lr"), QStringLiteral("2")},
               {QStringLiteral("b.lr"), QStringLiteral("3")}}});
        QCOMPARE(ambiguous.front(), QStringLiteral("a.lr=1 b.lr=1"));
        // Nothing differs: everything is shown.
        QCOMPARE(compactParams({M{{QStringLiteral("x.y"), QStringLiteral("1")}}}),
                 QStringList{QStringLiteral("y=1")});
    }

    void layoutTable_shrinksFlexThenDropsColumns()
    {
        Table t;
        t.header = {QStringLiteral("NAME"), QStringLiteral("A"), QStringLiteral("B")};
        t.rows = {{QStringLiteral("a-very-long-name-indeed"), QStringLiteral("1"), QStringLiteral("x")}};
        t.flexColumn = 0;
        t.dropOrder = {2};
        QCOMPARE(layoutTable(t, 80, QStringLiteral("~")).at(1),
                 QStringLiteral("a-very-long-name-indeed  1  x"));
        QCOMPARE(layoutTable(t, 23, QStringLiteral("~")).at(1), QStringLiteral("a-very-long-name~  1  x"));
        // 8 + 1 + 1 and the gaps do not fit in 12: column B goes, and NAME shrinks less.
        QCOMPARE(layoutTable(t, 12, QStringLiteral("~")).at(1), QStringLiteral("a-very-l~  1"));
        for (const QString &line : layoutTable(t, 5, QStringLiteral("~")))
            QVERIFY(line.size() <= 5);
    }

    void readStore_countsBestAndHistory()
    {
        const StoreSnapshot s = storeSnapshot();
        QVERIFY(s.error.isEmpty());
        QCOMPARE(s.sweeps.size(), 2);
        const SweepSummary &lr = s.sweeps.front();  // active first
        QCOMPARE(lr.sweep.name, QStringLiteral("lr-sweep"));
        QVERIFY(lr.active);
        QCOMPARE(lr.counts.total, 5);
        QCOMPARE(lr.counts.done, 2);
        QCOMPARE(lr.counts.running, 1);
        QCOMPARE(lr.counts.queued, 1);
        QCOMPARE(lr.counts.failed, 1);
        QVERIFY(lr.best);
        QCOMPARE(formatValue(*lr.best), QStringLiteral("0.1234"));
        QCOMPARE(lr.bestRun, QStringLiteral("lr-0"));
        // 40 points into 16 buckets: downsampled, falling.
        QVERIFY(!lr.bestHistory.empty() && lr.bestHistory.size() <= 16 * 4);
        QVERIFY(lr.bestHistory.front() > lr.bestHistory.back());
        QCOMPARE(s.sweeps.at(1).sweep.name, QStringLiteral("old-sweep"));
        QVERIFY(!s.sweeps.at(1).active);
        QCOMPARE(formatValue(*s.sweeps.at(1).best), QStringLiteral("0.75"));
        QVERIFY(s.trials.isEmpty());
    }

    // Issue 40: the monitor prices a sweep on a cluster with a price as `sweep list` and the
    // window do (it showed GPU-hours and no cost).
    void readStore_costAtTheClustersPrice()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.sqlite"));
        orrery::remote::ClusterProfile profile;
        profile.name = QStringLiteral("priced");
        profile.host = QStringLiteral("login.example.org");
        profile.user = QStringLiteral("me");
        profile.gpuHourPrice = 2.5;
        orrery::remote::ProfileStore().save(profile);
        {
            auto store = orrery::core::TrackingStore::open(path);
            orrery::core::Sweep sw;
            sw.name = QStringLiteral("on-a-cluster");
            sw.experimentId = store->ensureExperiment(QStringLiteral("e"));
            sw.method = QStringLiteral("grid");
            sw.cluster = profile.name;
            sw.state = QStringLiteral("finished");
            sw.trialCount = 1;
            Trial t;
            t.sweepId = store->createSweep(sw);
            t.index = 0;
            t.gpus = 2;
            t.startedMs = 1'700'000'000'000;
            t.endedMs = t.startedMs + 3'600'000;  // 2 GPUs for an hour
            t.setState(TrialState::Completed);
            store->addTrial(t);
        }
        auto store = orrery::core::TrackingStore::open(path);
        const StoreSnapshot snap = readStore(*store, 0, 16);
        QCOMPARE(snap.sweeps.size(), 1);
        QVERIFY(snap.sweeps.front().price);
        const Table table = sweepTable(snap, 16, Glyphs::Unicode);
        const QString cell = table.rows.front().back();
        QVERIFY2(cell.contains(orrery::core::formatHours(2.0)) && cell.contains(QStringLiteral("5.00")),
                 qPrintable(cell));
        orrery::remote::ProfileStore().remove(profile.name);
    }

    void readStore_activeSweepStepsAndEta()
    {
        // An active sweep's STEPS cell: steps done of the trials' train.steps, and an ETA once the
        // kept tracker has seen the steps move between two reads.
        using namespace orrery::core;
        QTemporaryDir dir;
        auto store = TrackingStore::open(dir.filePath(QStringLiteral("p.sqlite")));
        const orrery::test::ActiveSweep active = orrery::test::writeActiveSweep(*store);
        const RunId run = active.run;

        QHash<SweepId, SweepProgressTracker> trackers;
        StoreSnapshot snap = readStore(*store, 0, 16, 50, &trackers);
        QCOMPARE(snap.sweeps.size(), 1);
        QVERIFY(snap.sweeps.front().progress);
        QCOMPARE(snap.sweeps.front().progress->stepsDone, 20);
        QCOMPARE(snap.sweeps.front().progress->stepsTotal, 200);  // the second trial, not yet submitted
        QVERIFY(!snap.sweeps.front().progress->etaMs);
        QThread::msleep(20);
        store->logMetrics(run, {{QStringLiteral("train/loss"), {40, 2000, 0.4}}});
        snap = readStore(*store, 0, 16, 50, &trackers);
        QVERIFY(snap.sweeps.front().progress->etaMs);
        const Table table = sweepTable(snap, 16, Glyphs::Unicode);
        const qsizetype column = table.header.indexOf(QStringLiteral("STEPS"));
        QVERIFY(column > 0);
        QVERIFY2(table.rows.front().at(column).startsWith(QStringLiteral("20% ETA ")),
                 qPrintable(table.rows.front().at(column)));
    }

    void readStore_trialsOfOneSweep()
    {
        const StoreSnapshot s = storeSnapshot(1);
        const orrery::core::SweepId lr = s.sweeps.front().sweep.id;
        const StoreSnapshot t = storeSnapshot(lr);
        QCOMPARE(t.trialsOf, lr);
        QCOMPARE(t.trials.size(), 5);
        QCOMPARE(t.trials[0].params, QStringLiteral("lr=0.001"));
        QCOMPARE(*t.trials[0].step, 40);
        QCOMPARE(formatValue(*t.trials[0].latest), QStringLiteral("0.1234"));
        QCOMPARE(t.trials[2].trial.attempt, 1);
        QCOMPARE(t.trials[2].trial.state, QStringLiteral("running"));
        QCOMPARE(formatValue(*t.trials[1].best), QStringLiteral("0.25"));
        QVERIFY(!t.trials[3].latest);  // pending: no run
        QVERIFY(!t.trials[3].step);
        // The trials' own params (the plan's), not their runs' logged ones: a pending trial
        // without a run shows its too.
        QCOMPARE(t.trials[3].params, QStringLiteral("lr=0.003"));
        QCOMPARE(t.trials[2].params, QStringLiteral("lr=0.0001"));
    }

    void feeds_hookRunsBeforeEachStoreRead()
    {
        // The hook stands in for core::SweepRunner's follow step: it writes on its own connection,
        // and the read of the same refresh must already see what it wrote.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.sqlite"));
        orrery::test::writeMonitorStore(path);
        std::atomic<int> calls{0};
        FeedOptions options;
        options.dbPath = path;
        options.refresh = std::chrono::hours(1);  // only refreshNow() ticks again
        options.clusterNotice = QStringLiteral("no cluster here");
        options.beforeRefresh = [&] {
            auto store = orrery::core::TrackingStore::open(path);
            orrery::core::Sweep sw;
            sw.name = QStringLiteral("hook-%1").arg(++calls);
            sw.experimentId = store->ensureExperiment(QStringLiteral("moving-shapes"));
            store->createSweep(sw);
            if (calls == 2)
                throw std::runtime_error("follow failed");
        };
        MonitorFeeds feeds(options);
        const std::optional<ClusterSnapshot> cluster = feeds.takeCluster();
        QVERIFY(cluster && cluster->cluster.isEmpty());
        QCOMPARE(cluster->notice, QStringLiteral("no cluster here"));

        std::optional<StoreSnapshot> s = nextStore(feeds);
        QVERIFY(s);
        QCOMPARE(calls.load(), 1);
        QVERIFY(hasSweep(*s, QStringLiteral("hook-1")));
        QVERIFY(s->hookError.isEmpty());

        orrery::core::SweepId lr = 0;
        for (const SweepSummary &sw : s->sweeps)
            if (sw.sweep.name == QLatin1String("lr-sweep"))
                lr = sw.sweep.id;
        QVERIFY(s->trials.isEmpty());
        feeds.setTrialsOf(lr);  // its trials come along from the next read on
        feeds.refreshNow();
        s = nextStore(feeds);
        QVERIFY(s);
        QCOMPARE(calls.load(), 2);
        QVERIFY(hasSweep(*s, QStringLiteral("hook-2")));
        QCOMPARE(s->hookError, QStringLiteral("follow failed"));  // shown; the read still happened
        QVERIFY(s->error.isEmpty());
        QCOMPARE(s->trialsOf, lr);
        QCOMPARE(s->trials.size(), 5);
    }

    void render_80x24_showsBothPanels()
    {
        MonitorModel m({});
        m.setCluster(fixtureCluster());
        m.setStore(storeSnapshot());
        const QList<ScreenLine> screen = m.render(80, 24, 1'003'000);
        QCOMPARE(screen.size(), 24);
        for (const ScreenLine &l : screen)
            QVERIFY2(l.text.size() == 80, qPrintable(l.text));
        const QString text = joined(screen);
        QVERIFY2(text.contains(QLatin1String("cluster fixture: updated 3 s ago")), qPrintable(text));
        const ScreenLine *gpu = lineWith(screen, QStringLiteral("gpu*"));
        QVERIFY2(gpu && gpu->text.contains(QLatin1String("1/2")) &&
                     gpu->text.contains(QLatin1String("7/8")) && gpu->text.contains(QLatin1String("7/8")),
                 qPrintable(text));
        QVERIFY(lineWith(screen, QStringLiteral("down*"))->text.startsWith(QLatin1String("vm2 ")));
        const ScreenLine *job = lineWith(screen, QStringLiteral("train-probe"));
        QVERIFY2(job && job->text.contains(QLatin1String("RUNNING")) &&
                     job->text.contains(QLatin1String("1 vm1")),
                 qPrintable(text));
        const ScreenLine *lr = lineWith(screen, QStringLiteral("lr-sweep"));
        QVERIFY2(lr && lr->text.contains(QLatin1String("2/1/1/1 of 5")) &&
                     lr->text.contains(QLatin1String("0.1234")),
                 qPrintable(text));
        QCOMPARE(lr->style, Style::Selected);  // the sweeps panel has the keyboard at first
        QVERIFY(lr->text.contains(QChar(0x2581)) || lr->text.contains(QChar(0x2588)));  // ▁ / █
        QVERIFY(screen.back().text.contains(QLatin1String("q quit")));
    }

    void render_keysMoveOpenAndGoBack()
    {
        MonitorModel m({});
        m.setStore(storeSnapshot());
        const orrery::core::SweepId lr = m.store().sweeps.front().sweep.id;
        QCOMPARE(m.wantedTrials(), lr);
        QCOMPARE(m.press(Key::Down), MonitorModel::Effect::Redraw);
        QCOMPARE(lineWith(m.render(100, 30, 0), QStringLiteral("old-sweep"))->style, Style::Selected);
        QCOMPARE(m.press(Key::Up), MonitorModel::Effect::Redraw);
        // The trials are not read yet: Enter asks for a refresh and shows that it waits.
        QCOMPARE(m.press(Key::Enter), MonitorModel::Effect::RefreshNow);
        QVERIFY(m.showingTrials());
        QVERIFY(lineWith(m.render(100, 30, 0), QStringLiteral("reading the trials")));
        m.setStore(storeSnapshot(lr));
        const QList<ScreenLine> trials = m.render(100, 30, 0);
        QVERIFY2(lineWith(trials, QStringLiteral("Trials of lr-sweep (eval/loss, minimize)")),
                 qPrintable(joined(trials)));
        const ScreenLine *first = lineWith(trials, QStringLiteral("lr=0.001"));
        QVERIFY2(first && first->style == Style::Selected, qPrintable(joined(trials)));
        QVERIFY(lineWith(trials, QStringLiteral("lr=0.0001"))->text.contains(QLatin1String("running")));
        QCOMPARE(m.press(Key::End), MonitorModel::Effect::Redraw);
        QCOMPARE(lineWith(m.render(100, 30, 0), QStringLiteral("lr=0.01 "))->style, Style::Selected);
        QCOMPARE(m.press(Key::Back), MonitorModel::Effect::Redraw);
        QVERIFY(!m.showingTrials());
        QVERIFY(lineWith(m.render(100, 30, 0), QStringLiteral("TRIALS d/r/q/f")));
        // Tab: the cluster panel takes the keyboard; Enter zooms it, Esc unzooms.
        QCOMPARE(m.press(Key::Tab), MonitorModel::Effect::Redraw);
        QCOMPARE(m.focus(), Panel::Cluster);
        m.press(Key::Enter);
        QVERIFY(m.clusterZoomed());
        m.press(Key::Back);
        QVERIFY(!m.clusterZoomed());
        QCOMPARE(m.press(Key::Refresh), MonitorModel::Effect::RefreshNow);
        QCOMPARE(m.press(Key::Quit), MonitorModel::Effect::Quit);
    }

    void keys_cancelAsksFirst()
    {
        MonitorModel m({});
        m.setStore(storeSnapshot());
        const orrery::core::SweepId lr = m.store().sweeps.front().sweep.id;
        QCOMPARE(m.press(Key::Cancel), MonitorModel::Effect::Redraw);
        QCOMPARE(m.prompt(), QStringLiteral("Cancel sweep lr-sweep (2 active trials)? y/n"));
        QVERIFY(m.render(80, 24, 0).back().text.contains(m.prompt()));
        // n (any key but y) aborts, says so, and asks nothing of the store worker.
        QCOMPARE(m.press(Key::Other), MonitorModel::Effect::Redraw);
        QVERIFY(m.prompt().isEmpty());
        QCOMPARE(m.cancelRequest(), orrery::core::SweepId(0));
        QVERIFY(m.render(80, 24, 0).back().text.contains(QLatin1String("not cancelled")));
        // Esc aborts too, and only the prompt: the view stays.
        m.press(Key::Cancel);
        QCOMPARE(m.press(Key::Back), MonitorModel::Effect::Redraw);
        QVERIFY(m.prompt().isEmpty());
        QCOMPARE(m.cancelRequest(), orrery::core::SweepId(0));
        // The message lasts until the next key.
        m.press(Key::Down);
        m.press(Key::Up);
        QVERIFY(m.render(80, 24, 0).back().text.contains(QLatin1String("q quit")));
        // y: the effect that asks for the cancel, of that sweep.
        m.press(Key::Cancel);
        QCOMPARE(m.press(Key::Yes), MonitorModel::Effect::CancelSweep);
        QCOMPARE(m.cancelRequest(), lr);
        QVERIFY(m.prompt().isEmpty());
        // Its outcome comes with a snapshot and shows on the status line (an error as one).
        StoreSnapshot done = storeSnapshot();
        done.actionMessage = QStringLiteral("ssh: no route to host");
        done.actionFailed = true;
        m.setStore(done);
        QCOMPARE(m.render(80, 24, 0).back().style, Style::Error);
        QVERIFY(m.render(80, 24, 0).back().text.contains(QLatin1String("no route to host")));
        // From the sweep's trials too.
        m.press(Key::Enter);
        m.setStore(storeSnapshot(lr));
        m.press(Key::Down);
        QCOMPARE(m.press(Key::Cancel), MonitorModel::Effect::Redraw);
        QVERIFY(m.prompt().contains(QLatin1String("lr-sweep")));
        QCOMPARE(m.press(Key::Quit), MonitorModel::Effect::Redraw);  // an answer, not a quit
        m.press(Key::Back);
        // A finished sweep has nothing to cancel: no question.
        m.press(Key::Down);
        QCOMPARE(m.press(Key::Cancel), MonitorModel::Effect::Redraw);
        QVERIFY(m.prompt().isEmpty());
        QVERIFY(m.render(80, 24, 0).back().text.contains(QLatin1String("old-sweep is completed")));
        QCOMPARE(m.press(Key::Yes), MonitorModel::Effect::Redraw);
        QCOMPARE(m.cancelRequest(), lr);  // still the earlier one: nothing new asked
        // The cluster panel has no sweep to cancel.
        m.press(Key::Tab);
        QCOMPARE(m.press(Key::Cancel), MonitorModel::Effect::None);
        QVERIFY(m.prompt().isEmpty());
    }

    void sanitizeLogLine_controlsTabsAndWidth()
    {
        const QString e = QStringLiteral("~");
        QCOMPARE(sanitizeLogLine(QStringLiteral("a\tb"), 80, e), QStringLiteral("a       b"));
        QCOMPARE(sanitizeLogLine(QStringLiteral("12345678\tb"), 80, e), QStringLiteral("12345678        b"));
        QCOMPARE(sanitizeLogLine(QStringLiteral(" 50%\r100%\r\r"), 80, e), QStringLiteral("100%"));
        QCOMPARE(sanitizeLogLine(QStringLiteral("\x1b[31mred\x1b[0m"), 80, e),
                 QStringLiteral("?[31mred?[0m"));
        QCOMPARE(sanitizeLogLine(QStringLiteral("\x1b]0;title\x07x\x7f"), 80, e),
                 QStringLiteral("?]0;title?x?"));
        QCOMPARE(sanitizeLogLine(QString(QChar(0x9b)) + QStringLiteral("2J"), 80, e), QStringLiteral("?2J"));
        QCOMPARE(sanitizeLogLine(QStringLiteral("é ▁ ok"), 80, e), QStringLiteral("é ▁ ok"));
        QCOMPARE(sanitizeLogLine(QStringLiteral("abcdefghij"), 6, e), QStringLiteral("abcde~"));
        QCOMPARE(sanitizeLogLine(QString(100'000, QLatin1Char('x')), 10, e).size(), 10);
        QVERIFY(sanitizeLogLine(QStringLiteral("x"), 0, e).isEmpty());
    }

    void logs_tailFitsTheScreenSafely()
    {
        MonitorModel m({});
        m.setStore(storeSnapshot());
        const orrery::core::SweepId lr = m.store().sweeps.front().sweep.id;
        // In the sweeps table, l only says how to get to a trial.
        QCOMPARE(m.press(Key::Logs), MonitorModel::Effect::Redraw);
        QVERIFY(!m.showingLogs());
        QVERIFY(m.render(80, 24, 0).back().text.contains(QLatin1String("Enter")));
        m.press(Key::Enter);
        m.setStore(storeSnapshot(lr));
        m.press(Key::Down);
        const int trial = m.store().trials[1].trial.index;
        QCOMPARE(m.press(Key::Logs), MonitorModel::Effect::RefreshNow);  // read at once
        QVERIFY(m.showingLogs());
        QCOMPARE(*m.wantedLogs(), (orrery::core::LogRequest{lr, trial}));
        QCOMPARE(m.wantedTrials(), lr);
        QVERIFY(lineWith(m.render(80, 24, 0), QStringLiteral("reading the logs")));

        StoreSnapshot s = storeSnapshot(lr);
        s.logs.of = {lr, trial};
        s.logs.attempt = 1;
        s.logs.state = QStringLiteral("running");
        orrery::core::LogFile out{QStringLiteral("/runs/1/stdout.log"), true, {}};
        for (int i = 0; i < 99; ++i)
            out.lines.append(QStringLiteral("line %1").arg(i, 3, 10, QLatin1Char('0')));
        out.lines.append(QStringLiteral("\x1b[31mred\x1b[0m\tdone\r"));
        out.lines.append(QString(200, QLatin1Char('w')));
        const orrery::core::LogFile errors{QStringLiteral("/runs/1/stderr.log"),
                                           true,
                                           {QStringLiteral("warning: one"), QStringLiteral("warning: two")}};
        s.logs.files = {out, errors};
        m.setStore(s);
        const QList<ScreenLine> screen = m.render(60, 24, 0);
        const QString text = joined(screen);
        QCOMPARE(screen.size(), 24);
        for (const ScreenLine &l : screen) {
            QCOMPARE(l.text.size(), 60);
            for (const QChar c : l.text)
                QVERIFY2(c.unicode() >= 0x20 && c.unicode() != 0x7f, qPrintable(l.text));
        }
        QVERIFY2(
            lineWith(screen, QStringLiteral("Logs of trial %1 of lr-sweep (attempt 1, running)").arg(trial)),
            qPrintable(text));
        // 24 rows: title, heading, help; two file headings; stderr's 2 lines, stdout the other 17.
        QCOMPARE(lineWith(screen, QStringLiteral("==> /runs/1/stdout.log <=="))->style, Style::ColumnHeader);
        QVERIFY(lineWith(screen, QStringLiteral("==> /runs/1/stderr.log <==")));
        QVERIFY2(lineWith(screen, QStringLiteral("line 084")) &&
                     !lineWith(screen, QStringLiteral("line 083")),
                 qPrintable(text));
        QVERIFY2(lineWith(screen, QStringLiteral("?[31mred?[0m    done")), qPrintable(text));
        QVERIFY(lineWith(screen, QStringLiteral("wwwwww…")));
        QVERIFY(lineWith(screen, QStringLiteral("warning: one")) &&
                lineWith(screen, QStringLiteral("warning: two")));
        // A short screen keeps the newest lines of each.
        const QList<ScreenLine> small = m.render(60, 10, 0);
        QVERIFY2(lineWith(small, QStringLiteral("wwww")) && lineWith(small, QStringLiteral("warning: two")) &&
                     !lineWith(small, QStringLiteral("line 097")),
                 qPrintable(joined(small)));
        // A read of another trial (a late snapshot) keeps this tail; an error is said.
        StoreSnapshot other = storeSnapshot(lr);
        m.setStore(other);
        QVERIFY(lineWith(m.render(60, 24, 0), QStringLiteral("warning: two")));
        other.logs.of = {lr, trial};
        other.logs.error = QStringLiteral("ssh: connection lost");
        m.setStore(other);
        QCOMPARE(lineWith(m.render(60, 24, 0), QStringLiteral("logs: ssh: connection lost"))->style,
                 Style::Error);
        // Keys other than these wait; Esc goes back to the trials.
        QCOMPARE(m.press(Key::Down), MonitorModel::Effect::Redraw);
        QVERIFY(m.showingLogs());
        QCOMPARE(m.press(Key::Back), MonitorModel::Effect::Redraw);
        QVERIFY(!m.showingLogs());
        QVERIFY(!m.wantedLogs());
        QVERIFY(m.showingTrials());
    }

    void render_noClusterConfiguredSaysHowToAddOne()
    {
        MonitorModel m({});
        ClusterSnapshot none;
        none.notice =
            QStringLiteral("No cluster is configured. Add one with\n  orrery cluster add NAME --host HOST");
        m.setCluster(none);
        const QList<ScreenLine> screen = m.render(80, 24, 0);
        QVERIFY(lineWith(screen, QStringLiteral("No cluster is configured")));
        QCOMPARE(lineWith(screen, QStringLiteral("orrery cluster add"))->style, Style::Dim);
        QVERIFY(lineWith(screen, QStringLiteral("reading the store")));
    }

    // The store's suspect nodes are marked in the cluster panel's node table, with why.
    void render_suspectNodesMarked()
    {
        MonitorModel m({});
        m.setCluster(fixtureCluster());
        StoreSnapshot s = storeSnapshot();
        QVERIFY(!joined(m.render(160, 40, 0)).contains(QLatin1String("ORRERY")));
        s.suspects = {orrery::core::SuspectNode{QStringLiteral("fixture"), QStringLiteral("vm2"),
                                                QStringLiteral("NODE_FAIL (trial 3 of sweep a)"),
                                                QStringLiteral("node-fail"), 1, 2}};
        m.setStore(s);
        const QList<ScreenLine> screen = m.render(160, 40, 0);
        const ScreenLine *vm2 = lineWith(screen, QStringLiteral("suspect (node-fail): NODE_FAIL (trial 3"));
        QVERIFY2(vm2 && vm2->text.startsWith(QLatin1String("vm2")), qPrintable(joined(screen)));
        const ScreenLine *vm1 = lineWith(screen, QStringLiteral("vm1 "));
        QVERIFY2(vm1 && !vm1->text.contains(QLatin1String("suspect")), qPrintable(joined(screen)));
    }

    void render_connectionProblemKeepsOldData()
    {
        MonitorModel m({});
        ClusterSnapshot c = fixtureCluster();
        c.error = QStringLiteral("127.0.0.1:2222: connection refused\nmore detail");
        c.failures = 3;
        m.setCluster(c);
        const QList<ScreenLine> screen = m.render(120, 30, 0);
        const ScreenLine *problem =
            lineWith(screen, QStringLiteral("connection problem: 127.0.0.1:2222: connection refused"));
        QVERIFY2(problem && problem->style == Style::Error, qPrintable(joined(screen)));
        QVERIFY(!joined(screen).contains(QLatin1String("more detail")));
        QVERIFY(lineWith(screen, QStringLiteral("UNREACHABLE")));
        QVERIFY(lineWith(screen, QStringLiteral("train-probe")));  // the last data stays
    }

    void render_smallTerminalsDegrade()
    {
        MonitorModel m({Glyphs::Ascii, 5});
        m.setCluster(fixtureCluster());
        m.setStore(storeSnapshot());
        for (const auto &[w, h] : {std::pair{80, 24}, {60, 12}, {40, 8}, {20, 4}, {10, 3}, {5, 2}, {1, 1}}) {
            const QList<ScreenLine> screen = m.render(w, h, 0);
            QCOMPARE(screen.size(), h);
            for (const ScreenLine &l : screen) {
                QVERIFY2(l.text.size() <= w, qPrintable(l.text));
                for (const QChar c : l.text)
                    QVERIFY2(c.unicode() < 0x7f, qPrintable(l.text));  // ASCII glyphs only
            }
        }
        QVERIFY(m.render(0, 0, 0).isEmpty());
        // Too low for two panels: the focused one.
        QVERIFY(!lineWith(m.render(40, 6, 0), QStringLiteral("lr-sweep"))->text.isEmpty());
        m.press(Key::Tab);
        QVERIFY(lineWith(m.render(40, 6, 0), QStringLiteral("PARTITION")));
        QVERIFY(!lineWith(m.render(40, 6, 0), QStringLiteral("lr-sweep")));
        m.press(Key::Tab);
        // The help line fits in 80 columns, q included.
        m.press(Key::Help);
        QVERIFY(m.render(80, 24, 0).back().text.contains(QLatin1String("c cancel  r refresh  q quit")));
        m.press(Key::Help);
        QVERIFY(
            m.render(80, 24, 0).back().text.contains(QLatin1String("q quit  ? help  Enter details  l logs")));
        // At 40 columns the sweep row still names the sweep and its counts.
        const ScreenLine *lr = lineWith(m.render(40, 24, 0), QStringLiteral("lr-sweep"));
        QVERIFY(lr && lr->text.contains(QLatin1String("2/1/1/1 of 5")));
    }
};

ORRERY_TEST_MAIN(TestMonitorModel, QCoreApplication)
#include "tst_monitormodel.moc"
