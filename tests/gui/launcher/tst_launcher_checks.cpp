// SPDX-License-Identifier: GPL-3.0-or-later
// The launcher's checks (issue 31), offscreen on the window's real launcher and the real
// orrery-train: the preview never shows an earlier spec's trials while the editor shows problems;
// the trainer's rules across keys (model.channels a multiple of 8) are caught as one types, at the
// spec's line, and a refused submission names the spec as the user knows it; a metric the bundled
// trainer never logs is flagged in the launcher and by `orrery sweep plan`, but not for a command
// sweep; the trainer's metric names (core::trainerMetricNames) are the ones docs/trainer.md names.
// And the Cluster tab with no cluster profile: what it says, "Add cluster…", this machine.
#include "testsupport.h"

#include "clusterview.h"
#include "connectionmanager.h"
#include "launchdialogs.h"
#include "launcher.h"
#include "mainwindow.h"

#include "orrery/core/store.h"
#include "orrery/core/trainermetrics.h"

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>

using orrery::gui::ClusterView;
using orrery::gui::ConnectionManager;
using orrery::gui::Launcher;
using orrery::gui::MainWindow;

namespace {

// A grid of the bundled trainer on its defaults: every key valid alone.
const char kGoodSpec[] = "name: checks\n"
                         "method: grid\n"
                         "metric: {name: eval/loss, goal: minimize}\n"
                         "parameters:\n"
                         "  optim.lr: {values: [1e-3, 3e-3]}\n"
                         "  train.steps: {value: 20}\n";

// 30 is a fine int for model.channels alone; the trainer's GroupNorm wants a multiple of 8.
const char kChannelsSpec[] = "name: channels\n"
                             "method: grid\n"
                             "parameters:\n"
                             "  optim.lr: {value: 1e-3}\n"
                             "  model.channels: {values: [30, 32]}\n";
constexpr int kChannelsLine = 5;

QStringList items(const QListWidget *list)
{
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        out << list->item(i)->text();
    return out;
}

}  // namespace

class TestLauncherChecks : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    std::unique_ptr<MainWindow> m_window;

    // A new launcher of the window, its schema loaded (the trainer's --print-schema), on `text`,
    // validated by the schema.
    Launcher *launcherWith(const QByteArray &text)
    {
        // A new launcher each time: an open one is raised instead, with the verdicts it remembers.
        delete m_window->findChild<Launcher *>();
        Launcher *launcher = m_window->launchDialogs()->openLauncher();
        launcher->setSpecPath(m_home.filePath(QStringLiteral("never-saved/sweep.yaml")));
        [&] { QTRY_VERIFY_WITH_TIMEOUT(launcher->schemaReady(), 60'000); }();
        launcher->editor()->setPlainText(QString::fromUtf8(text));
        launcher->validateNow();
        return launcher;
    }

private Q_SLOTS:
    void initTestCase()
    {
        // Cluster profiles live in the config directory: this test's own, with none in it.
        QVERIFY(m_home.isValid());
        qputenv("HOME", QFile::encodeName(m_home.path()));
        m_window = std::make_unique<MainWindow>(m_home.filePath(QStringLiteral("orrery.sqlite")));
        m_window->setFollowing(false);
    }

    void cleanupTestCase() { m_window.reset(); }

    // Every metric docs/trainer.md names is one core knows, and every one core lists is in
    // docs/trainer.md: the trainer shares no code with core, so the docs are the contract.
    void trainerMetricNamesAreTheDocumentedOnes()
    {
        QFile doc(orrery::test::sourceFile(QStringLiteral("docs/trainer.md")));
        QVERIFY(doc.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(doc.readAll());
        static const QRegularExpression named(
            QStringLiteral("`((?:train|eval|perf)/[a-z0-9_.]+|(?:node|gpu)<[nr]>/[a-z_]+)`"));
        QStringList documented;
        for (auto it = named.globalMatch(text); it.hasNext();)
            documented << it.next().captured(1);
        documented.removeDuplicates();
        QVERIFY2(documented.size() >= 15, qPrintable(documented.join(QLatin1Char(' '))));
        for (const QString &name : std::as_const(documented))
            QVERIFY2(orrery::core::isTrainerMetric(name) || orrery::core::trainerMetricNames().contains(name),
                     qPrintable(name));
        for (const QString &name : orrery::core::trainerMetricNames()) {
            const QString asWritten = QString(name).replace(QStringLiteral("<t>"), QStringLiteral("0.1"));
            QVERIFY2(text.contains(QLatin1Char('`') + asWritten + QLatin1Char('`')), qPrintable(name));
        }
        QVERIFY(orrery::core::isTrainerMetric(QStringLiteral("eval/loss_t0.9")));
        QVERIFY(orrery::core::isTrainerMetric(QStringLiteral("gpu3/power_w")));
        QVERIFY(!orrery::core::isTrainerMetric(QStringLiteral("eval/los")));
        QCOMPARE(orrery::core::trainerMetricWarning(QStringLiteral("eval/los")),
                 QStringLiteral("eval/los is not a metric orrery-train logs; did you mean eval/loss?"));
        QCOMPARE(orrery::core::trainerMetricWarning(QStringLiteral("eval/loss")), QString());
    }

    // Issue 31: the preview kept the previous spec's trials while the editor showed problems.
    void previewNeverShowsAnEarlierSpec()
    {
        Launcher *launcher = launcherWith(kGoodSpec);
        QVERIFY2(launcher->isValid(), qPrintable(items(launcher->problemList()).join(QLatin1Char('\n'))));
        launcher->preview();
        QCOMPARE(launcher->trialTable()->rowCount(), 2);

        launcher->editor()->setPlainText(
            QString::fromUtf8(kGoodSpec).replace(QStringLiteral("optim.lr"), QStringLiteral("optim.lrr")));
        launcher->validateNow();
        QVERIFY(!launcher->isValid());
        QCOMPARE(launcher->trialTable()->rowCount(), 0);
        QVERIFY2(launcher->previewNote().contains(QLatin1String("1 problem")),
                 qPrintable(launcher->previewNote()));
        QVERIFY2(launcher->scriptText().startsWith(QLatin1String("line 5: unknown trainer key 'optim.lrr'")),
                 qPrintable(launcher->scriptText()));

        // Fixed: the preview follows the editor again.
        launcher->editor()->setPlainText(
            QString::fromUtf8(kGoodSpec).replace(QStringLiteral("3e-3"), QStringLiteral("3e-3, 1e-2")));
        launcher->validateNow();
        QCOMPARE(launcher->trialTable()->rowCount(), 3);
        QVERIFY(!launcher->previewNote().contains(QLatin1String("problem")));
    }

    // Issue 31: `metric: {name: eval/los}` was never flagged. A warning (with the real name) in the
    // launcher and from `orrery sweep plan`; none for a command sweep, whose program logs anything.
    void metricTheTrainerNeverLogsIsFlagged()
    {
        const QByteArray spec = QByteArray(kGoodSpec).replace("eval/loss", "eval/los");
        Launcher *launcher = launcherWith(spec);
        QVERIFY(launcher->isValid());  // said, never blocking
        const QString warning = QStringLiteral(
            "line 3: warning: eval/los is not a metric orrery-train logs; did you mean eval/loss?");
        QVERIFY2(items(launcher->problemList()).contains(warning),
                 qPrintable(items(launcher->problemList()).join(QLatin1Char('\n'))));

        const QByteArray command = "name: mine\n"
                                   "command: [python3, train.py]\n"
                                   "method: grid\n"
                                   "metric: {name: eval/los, goal: minimize}\n"
                                   "parameters:\n"
                                   "  lr: {values: [1, 2]}\n";
        launcher->editor()->setPlainText(QString::fromUtf8(command));
        launcher->validateNow();
        QVERIFY2(launcher->isValid(), qPrintable(items(launcher->problemList()).join(QLatin1Char('\n'))));
        QVERIFY2(!items(launcher->problemList()).join(QLatin1Char('\n')).contains(QLatin1String("eval/los")),
                 qPrintable(items(launcher->problemList()).join(QLatin1Char('\n'))));

        // `orrery sweep plan`: the same warning at the file's line, on stderr; the plan goes on.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("typo.yaml"));
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(spec);
        }
        QProcess cli;
        cli.start(qEnvironmentVariable("ORRERY_CLI"),
                  {QStringLiteral("sweep"), QStringLiteral("plan"), file});
        QVERIFY(cli.waitForFinished(120'000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY2(err.contains(file +
                              QStringLiteral(":3: warning: eval/los is not a metric orrery-train logs; "
                                             "did you mean eval/loss?")),
                 qPrintable(err));
    }

    // Issue 31: `model.channels: [30, 32]` passed the live check and Preview and was refused only
    // at Submit. The trainer's verdict now comes to the live check, at the parameter's line.
    void trainerRulesAcrossKeysAreCaughtAsOneTypes()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        Launcher *launcher = launcherWith(kChannelsSpec);
        launcher->preview();
        QTRY_VERIFY_WITH_TIMEOUT(!launcher->trainerCheckPending(), 180'000);
        QVERIFY(!launcher->isValid());
        const QStringList problems = items(launcher->problemList());
        QVERIFY2(
            problems.size() == 1 &&
                problems.front().startsWith(
                    QStringLiteral("line %1: trial 0: the trainer refuses its config: model.channels must be "
                                   "a multiple of 8")
                        .arg(kChannelsLine)),
            qPrintable(problems.join(QLatin1Char('\n'))));
        QVERIFY(launcher->underlinedLines().contains(kChannelsLine));
        QVERIFY(!launcher->findChild<QPushButton *>(QStringLiteral("submitButton"))->isEnabled());
        // The preview said so too, instead of two trials the trainer refuses one of.
        QCOMPARE(launcher->trialTable()->rowCount(), 0);
        QVERIFY2(launcher->previewNote().contains(QLatin1String("problem")),
                 qPrintable(launcher->previewNote()));
        QVERIFY2(!launcher->scriptText().contains(QLatin1String("/tmp/")),
                 qPrintable(launcher->scriptText()));
    }

    // The refusal at Submit named a file that did not exist: now the spec's own file when the
    // editor holds what is saved there, else "the editor's unsaved text" — never a temporary file.
    void submitNamesTheSpecAsTheUserKnowsIt()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        Launcher *launcher = launcherWith(kChannelsSpec);
        QSignalSpy failed(launcher, &Launcher::submitFailed);
        QSignalSpy submitted(launcher, &Launcher::submitted);
        launcher->submit();  // before the live check's verdict: submit checks with the trainer itself
        QVERIFY(launcher->isSubmitting());
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty() || !submitted.isEmpty(), 180'000);
        QVERIFY2(submitted.isEmpty(), "a config the trainer refuses was submitted");
        const QString message = failed.front().at(0).toString();
        QVERIFY2(message.startsWith(QLatin1String("Not submitted: the editor's unsaved text has 1 problem")),
                 qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("line %1: trial 0: the trainer refuses its config: "
                                                 "model.channels must be a multiple of 8")
                                      .arg(kChannelsLine)),
                 qPrintable(message));
        QVERIFY2(!message.contains(m_home.path()) && !message.contains(QLatin1String("trial-0.yaml")),
                 qPrintable(message));

        const QString saved = m_home.filePath(QStringLiteral("channels.yaml"));
        {
            QFile f(saved);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kChannelsSpec);
        }
        QVERIFY(launcher->loadFile(saved));
        QCOMPARE(launcher->specLabel(), QDir::toNativeSeparators(saved));
        launcher->editor()->appendPlainText(QStringLiteral("# edited"));
        QCOMPARE(launcher->specLabel(), QStringLiteral("the editor's unsaved text"));
    }

    // Issue 31: with no profile the Cluster tab showed empty tables and a Refresh that did nothing.
    void clusterTabWithoutAClusterShowsThisMachine()
    {
        ClusterView *view = m_window->clusterView();
        view->reloadProfiles();
        QVERIFY(view->cluster().isEmpty());
        QSignalSpy machine(view, &ClusterView::machineShown);
        m_window->show();
        m_window->tabs()->setCurrentWidget(view);
        QVERIFY(machine.count() > 0 || machine.wait(30'000));
        QVERIFY(view->localPanel()->isVisible());
        QVERIFY(!view->partitionsTable()->isVisible());
        QVERIFY(!view->queueTable()->isVisible());
        const QStringList texts = [view] {
            QStringList t;
            for (const QLabel *l : view->localPanel()->findChildren<QLabel *>())
                t << l->text();
            return t;
        }();
        QVERIFY2(texts.join(QLatin1Char('\n')).contains(QLatin1String("No cluster is configured")),
                 qPrintable(texts.join(QLatin1Char('\n'))));
        QVERIFY2(texts.join(QLatin1Char('\n')).contains(QLatin1String("Sweeps run on this machine")),
                 qPrintable(texts.join(QLatin1Char('\n'))));

        // The figures are this machine's.
        const auto label = [view](const char *name) {
            return view->localPanel()->findChild<QLabel *>(QLatin1String(name))->text();
        };
        QCOMPARE(label("machineCores"), QString::number(QThread::idealThreadCount()));
        QVERIFY2(QRegularExpression(QStringLiteral("^[0-9.]+ GB \\([0-9.]+ GB available\\)$"))
                     .match(label("machineMemory"))
                     .hasMatch(),
                 qPrintable(label("machineMemory")));
        const bool smi = !QStandardPaths::findExecutable(QStringLiteral("nvidia-smi")).isEmpty();
        if (!smi)
            QCOMPARE(label("machineGpus"), QStringLiteral("none (no nvidia-smi on this machine)"));
        QVERIFY2(QRegularExpression(QStringLiteral("^[0-9.]+  [0-9.]+  [0-9.]+$"))
                     .match(label("machineLoad"))
                     .hasMatch(),
                 qPrintable(label("machineLoad")));

        // Refresh reads it again.
        const int reads = view->machineReads();
        QPushButton *refresh = nullptr;
        for (QPushButton *b : view->findChildren<QPushButton *>())
            if (b->text() == QLatin1String("Refresh"))
                refresh = b;
        QVERIFY(refresh);
        QTRY_VERIFY_WITH_TIMEOUT((refresh->click(), view->machineReads() > reads), 30'000);

        // "Add cluster…" opens the connection manager.
        QVERIFY(!m_window->findChild<ConnectionManager *>());
        view->localPanel()->findChild<QPushButton *>(QStringLiteral("addClusterButton"))->click();
        auto *manager = m_window->findChild<ConnectionManager *>();
        QVERIFY(manager && manager->isVisible());
        manager->close();
    }
    // Issue 41: a sweep launched again is a new sweep of its spec as it was submitted ("Open in
    // launcher" shows that spec to edit, on its cluster), and Ctrl+L opens the last edited spec,
    // not the template.
    void launchAgainAndTheLastSpecKept()
    {
        const QString dir = m_home.filePath(QStringLiteral("again"));
        QVERIFY(QDir().mkpath(dir));
        const QString spec = QStringLiteral(
            "name: again\nmethod: grid\ncommand: [sh, -c, 'echo loss=$0', '{{x}}']\n"
            "metric: {name: loss, goal: minimize}\nmetrics:\n  - {name: loss, regex: 'loss=([0-9.]+)'}\n"
            "parameters:\n  x: {values: [1, 2]}\n");
        Launcher *launcher = launcherWith(spec.toUtf8());
        launcher->setSpecPath(QDir(dir).filePath(QStringLiteral("again.yaml")));
        QSignalSpy submitted(launcher, &Launcher::submitted);
        launcher->submit();
        QTRY_VERIFY_WITH_TIMEOUT(!submitted.isEmpty(), 120'000);
        const qint64 first = submitted.front().at(0).toLongLong();
        QTRY_VERIFY(!m_window->findChild<Launcher *>());  // a submitted launcher closes itself

        // Ctrl+L again: the spec just submitted, where it was.
        Launcher *reopened = m_window->launchDialogs()->openLauncher();
        QCOMPARE(reopened->editor()->toPlainText(), spec);
        QCOMPARE(reopened->specPath(), QDir(dir).filePath(QStringLiteral("again.yaml")));
        reopened->editor()->setPlainText(QStringLiteral("name: half-written\n"));
        reopened->reject();  // closed as a user closes it: the half-written text is kept
        QTRY_VERIFY(!m_window->findChild<Launcher *>());

        // Open in launcher: the recorded spec, whatever the editor held.
        Launcher *opened = m_window->launchDialogs()->openSweepInLauncher(first, false);
        QCOMPARE(opened->editor()->toPlainText(), QStringLiteral("name: half-written\n"));
        QTRY_COMPARE_WITH_TIMEOUT(opened->editor()->toPlainText(), spec, 10'000);
        QCOMPARE(opened->target(), QString());
        delete opened;

        // Launch again: submitted as a new sweep once its checks pass.
        Launcher *again = m_window->launchDialogs()->openSweepInLauncher(first, true);
        QSignalSpy again2(again, &Launcher::submitted);
        QSignalSpy againFailed(again, &Launcher::submitFailed);
        QTRY_VERIFY_WITH_TIMEOUT(!again2.isEmpty() || !againFailed.isEmpty(), 120'000);
        QVERIFY2(againFailed.isEmpty(), qPrintable(againFailed.value(0).value(0).toString()));
        const qint64 second = again2.front().at(0).toLongLong();
        QTRY_VERIFY(!m_window->findChild<Launcher *>());
        QVERIFY(second != first);
        auto store = orrery::core::TrackingStore::open(m_home.filePath(QStringLiteral("orrery.sqlite")),
                                                       orrery::core::TrackingStore::Mode::ReadOnly);
        QCOMPARE(store->sweep(second)->spec, store->sweep(first)->spec);
        QCOMPARE(store->sweep(second)->name, QStringLiteral("again"));
        QCOMPARE(store->trials(second).size(), 2);
    }
};

ORRERY_TEST_MAIN(TestLauncherChecks, QApplication)
#include "tst_launcher_checks.moc"
