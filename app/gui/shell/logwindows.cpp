// SPDX-License-Identifier: GPL-3.0-or-later
#include "logwindows.h"

#include "blockingpool.h"
#include "clusterhub.h"
#include "logview.h"
#include "postifalive.h"
#include "storereader.h"

#include "orrery/remote/logreader.h"
#include "orrery/remote/sweepoperations.h"

#include <QFileInfo>
#include <QPointer>
#include <QWidget>
#include <QtConcurrent>

#include <memory>

namespace orrery::gui {

namespace {

// The executor's log paths as the view's tabs: stdout, stderr, then any other by its file name.
QList<QPair<QString, QString>> logTabs(const QStringList &paths)
{
    QList<QPair<QString, QString>> files;
    for (int i = 0; i < paths.size(); ++i)
        files.append({i == 0       ? LogWindows::tr("stdout")
                          : i == 1 ? LogWindows::tr("stderr")
                                   : QFileInfo(paths[i]).fileName(),
                      paths[i]});
    return files;
}

// Where a trial's attempt's logs are (SweepOperations::logs, the CLI's `sweep logs` too) and
// its attempts for the chooser. On a pool thread: a cluster's executor connects.
struct TrialLogsFound {
    QString title, cluster, error;
    QStringList paths;
    bool failed = false;  // the attempt failed: its error is in stderr
    QList<int> attempts;  // attempt numbers, oldest first
    QStringList labels;  // "attempt 1 · failed: exit 3 · node2"
    int shown = 0;  // index into attempts
};

TrialLogsFound findTrialLogs(const QString &database, const remote::Executors::ConnectionSource &connections,
                             core::SweepId sweep, int trial, int attempt)
{
    try {
        auto store = core::TrackingStore::open(database, core::TrackingStore::Mode::ReadOnly);
        remote::SweepOperations::Options options;
        options.connections = connections;
        remote::SweepOperations ops(*store, options);
        const remote::TrialLogs logs = ops.logs(sweep, trial, attempt);
        TrialLogsFound f{logs.title, logs.sweep.cluster, {}, logs.paths, false, {}, {}, 0};
        f.failed = core::phaseOf(logs.attempt.trialState()) == core::Phase::Failed;
        for (const core::Trial &t : store->trials(sweep)) {
            if (t.index != trial)
                continue;
            if (t.attempt == logs.attempt.attempt)
                f.shown = int(f.attempts.size());
            f.attempts.append(t.attempt);
            QString label = LogWindows::tr("attempt %1 · %2").arg(t.attempt).arg(t.state);
            if (!t.exitReason.isEmpty())
                label += QStringLiteral(": ") + t.exitReason;
            if (!t.nodes.isEmpty())
                label += QStringLiteral(" · ") + t.nodes;
            f.labels.append(label);
        }
        return f;
    } catch (const std::exception &e) {
        TrialLogsFound f;
        f.error = QString::fromUtf8(e.what());
        return f;
    }
}

}  // namespace

LogWindows::LogWindows(QWidget *window, StoreReader *reader, ClusterHub *hub)
    : QObject(window), m_window(window), m_reader(reader), m_hub(hub)
{ }

LogView *LogWindows::show(const QString &title, const QString &cluster,
                          const QList<QPair<QString, QString>> &paths, const QString &emptyHint)
{
    // Read through the executor's batched read (this machine's files, or the cluster's on the
    // window's connection), connecting at the first read on a pool thread.
    auto reader = std::make_shared<remote::LogReader>(cluster, m_hub->connectionSource());
    const LogSource source = [reader](const QList<core::LogReadJob> &jobs) { return reader->read(jobs); };
    QList<LogView::File> files;
    for (const auto &[label, path] : paths)
        files.append({label, path, emptyHint});
    auto *view = new LogView(title, source, files, m_window);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->setWindowTitle(title);
    view->resize(900, 600);
    view->show();
    return view;
}

void LogWindows::openTrialLogs(core::SweepId sweep, int trial, int attempt)
{
    // Where the logs are is the executor's to say (a local run directory, or the sweep's logs/
    // on the cluster): found on a pool thread, since a cluster's executor connects.
    const QString database = m_reader->path();
    const auto connections = m_hub->connectionSource();
    Q_EMIT activity(tr("Finding the logs of trial %1…").arg(trial), true);
    // The bundled trainer logs to events.jsonl, so its stdout and stderr are often empty: say
    // where its progress is instead of a blank page.
    const QString emptyHint =
        tr("Orrery's trainer writes its metrics and progress to events.jsonl, not here:\n"
           "select the run and open the Compare tab (Ctrl+2).\n"
           "A command sweep's program shows here what it prints.");
    const QFuture<TrialLogsFound> found = QtConcurrent::run(
        blockingPool(), [=] { return findTrialLogs(database, connections, sweep, trial, attempt); });
    thenIfAlive(found, this, [this, database, connections, sweep, trial, emptyHint](const TrialLogsFound &f) {
        Q_EMIT activity({}, false);
        if (!f.error.isEmpty()) {
            Q_EMIT message(f.error, 10'000);
            Q_EMIT failed(f.error);
            return;
        }
        LogView *view = show(f.title, f.cluster, logTabs(f.paths), emptyHint);
        if (!view)
            return;
        // A failed attempt's error is in stderr: open there.
        view->setCurrentFile(f.failed && f.paths.size() > 1 ? 1 : 0);
        view->setAttempts(f.labels, f.shown);
        followAttempts(view, database, connections, sweep, trial, f.attempts);
        Q_EMIT opened(view);
    });
}

void LogWindows::followAttempts(LogView *view, const QString &database,
                                const remote::Executors::ConnectionSource &connections, core::SweepId sweep,
                                int trial, const QList<int> &attempts)
{
    QPointer<LogView> target(view);
    connect(view, &LogView::attemptChosen, this,
            [this, target, database, connections, sweep, trial, attempts](int index) {
                const int chosen = attempts.value(index, -1);
                const QFuture<TrialLogsFound> found = QtConcurrent::run(blockingPool(), [=] {
                    return findTrialLogs(database, connections, sweep, trial, chosen);
                });
                thenIfAlive(found, this, [this, target](const TrialLogsFound &g) {
                    if (!target)
                        return;
                    if (!g.error.isEmpty()) {
                        Q_EMIT message(g.error, 10'000);
                        return;
                    }
                    QList<LogView::File> files;
                    for (const auto &[label, path] : logTabs(g.paths))
                        files.append({label, path, target->file(0).emptyHint});
                    target->setWindowTitle(g.title);
                    target->setFiles(files, g.failed && files.size() > 1 ? 1 : 0);
                    target->setAttempts(g.labels, g.shown);
                });
            });
}

void LogWindows::openJobLogs(const QString &cluster, const QString &jobId)
{
    QString problem;
    const auto connection = m_hub->connection(cluster, &problem);
    if (!connection) {
        Q_EMIT message(problem, 10'000);
        Q_EMIT failed(problem);
        return;
    }
    Q_EMIT activity(tr("Asking %1 where job %2 writes…").arg(cluster, jobId), true);
    struct Found {
        QStringList paths;
        QString error;
    };
    const QFuture<Found> found = QtConcurrent::run(blockingPool(), [connection, jobId]() -> Found {
        try {
            return {remote::jobLogPaths(*connection, jobId), {}};
        } catch (const std::exception &e) {
            return {{}, QString::fromUtf8(e.what())};
        }
    });
    thenIfAlive(found, this, [this, cluster, jobId](const Found &f) {
        Q_EMIT activity({}, false);
        if (!f.error.isEmpty()) {
            Q_EMIT message(f.error, 10'000);
            Q_EMIT failed(f.error);
            return;
        }
        if (LogView *view = show(tr("job %1 on %2").arg(jobId, cluster), cluster, logTabs(f.paths)))
            Q_EMIT opened(view);
    });
}

}  // namespace orrery::gui
