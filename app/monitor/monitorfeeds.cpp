// SPDX-License-Identifier: GPL-3.0-or-later
#include "monitorfeeds.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"
#include "orrery/remote/slurm.h"

#include <QDateTime>

#include <limits>

namespace orrery::monitor {

// --- PeriodicWorker -------------------------------------------------------------------------

PeriodicWorker::PeriodicWorker(std::chrono::milliseconds interval, std::function<void()> work)
    : m_interval(interval), m_work(std::move(work)), m_thread([this] { loop(); })
{ }

PeriodicWorker::~PeriodicWorker()
{
    requestStop();
    m_thread.join();
}

void PeriodicWorker::wake()
{
    {
        std::lock_guard lock(m_mutex);
        m_woken = true;
    }
    m_cv.notify_one();
}

void PeriodicWorker::requestStop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_one();
}

void PeriodicWorker::loop()
{
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        m_woken = false;
        lock.unlock();
        m_work();
        lock.lock();
        m_cv.wait_for(lock, m_interval, [this] { return m_stop || m_woken; });
    }
}

// --- LogTailer -----------------------------------------------------------------------------

LogTail LogTailer::read(core::Executor &executor, const core::Sweep &sweep, const core::Trial &trial)
{
    const LogRequest of{sweep.id, trial.index};
    if (of != m_of || trial.attempt != m_attempt) {
        m_of = of;
        m_attempt = trial.attempt;
        m_files.clear();
        for (const QString &path : executor.logPaths(sweep.rootDir, trial.task, trial.runDir))
            m_files.append({path, false, -1, {}});
    }
    constexpr qint64 kPastTheEnd = std::numeric_limits<qint64>::max() / 2;  // asks the size only
    QList<core::FileRead> reads;
    for (const File &f : m_files)
        reads.append({f.path, f.end < 0 ? kPastTheEnd : f.end, kTailBytes});
    const QList<core::FileChunk> chunks = executor.readFiles(reads);
    QList<core::FileRead> again;
    QList<int> againOf;
    for (qsizetype i = 0; i < m_files.size() && i < chunks.size(); ++i) {
        File &f = m_files[i];
        const core::FileChunk &c = chunks[i];
        f.exists = c.exists;
        if (!c.exists) {
            f.end = -1;
            f.tail.clear();
        } else if (f.end >= 0 && c.size >= f.end && c.size <= f.end + c.data.size()) {
            f.tail += c.data;  // all that is new
            f.end += c.data.size();
        } else {  // first read, more than a read behind, or rewritten: the tail again
            again.append({f.path, std::max<qint64>(0, c.size - kTailBytes), kTailBytes});
            againOf.append(int(i));
        }
    }
    if (!again.isEmpty()) {
        const QList<core::FileChunk> tails = executor.readFiles(again);
        for (qsizetype j = 0; j < again.size() && j < tails.size(); ++j) {
            File &f = m_files[againOf[j]];
            f.exists = tails[j].exists;
            f.tail = tails[j].data;
            f.end = tails[j].exists ? again[j].offset + tails[j].data.size() : -1;
        }
    }

    LogTail out;
    out.of = of;
    out.attempt = trial.attempt;
    out.state = trial.state;
    for (File &f : m_files) {
        if (f.tail.size() > kTailBytes)
            f.tail = f.tail.right(kTailBytes);
        LogFile file;
        file.path = f.path;
        file.exists = f.exists;
        QList<QByteArray> lines = f.tail.split('\n');
        if (!lines.isEmpty() && lines.back().isEmpty())
            lines.removeLast();  // the newline that ends the last line
        if (!lines.isEmpty() && f.end - f.tail.size() > 0)
            lines.removeFirst();  // starts in the middle of a line (or of a character)
        for (qsizetype k = std::max<qsizetype>(0, lines.size() - kMaxLines); k < lines.size(); ++k)
            file.lines.append(QString::fromUtf8(lines[k]));
        out.files.append(std::move(file));
    }
    return out;
}

// --- MonitorFeeds ---------------------------------------------------------------------------

struct MonitorFeeds::ClusterState {
    std::unique_ptr<remote::Connection> connection;
    std::unique_ptr<remote::SlurmClient> client;
    ClusterSnapshot last;
};

MonitorFeeds::MonitorFeeds(FeedOptions options)
    : m_options(std::move(options)), m_clusterState(std::make_unique<ClusterState>())
{
    m_clusterState->last.notice = m_options.clusterNotice;
    if (m_options.cluster)
        m_clusterState->last.cluster = m_options.cluster->name;
    m_clusterBox.put(m_clusterState->last);
    m_storeWorker = std::make_unique<PeriodicWorker>(m_options.refresh, [this] { readStoreOnce(); });
    if (m_options.cluster)
        m_clusterWorker = std::make_unique<PeriodicWorker>(m_options.refresh, [this] { pollClusterOnce(); });
}

MonitorFeeds::~MonitorFeeds()
{
    // Both asked first, so a slow poll on one does not delay telling the other.
    m_storeWorker->requestStop();
    if (m_clusterWorker)
        m_clusterWorker->requestStop();
    m_storeWorker.reset();
    m_clusterWorker.reset();
}

void MonitorFeeds::refreshNow()
{
    m_storeWorker->wake();
    if (m_clusterWorker)
        m_clusterWorker->wake();
}

void MonitorFeeds::setTrialsOf(core::SweepId sweep)
{
    m_trialsOf = sweep;
}

void MonitorFeeds::setSparkWidth(int width)
{
    m_sparkWidth = width;
}

void MonitorFeeds::setLogsOf(std::optional<LogRequest> request)
{
    std::lock_guard lock(m_requestMutex);
    m_logsOf = request;
}

void MonitorFeeds::runAction(std::function<QString()> action)
{
    {
        std::lock_guard lock(m_requestMutex);
        m_actions.push_back(std::move(action));
    }
    m_storeWorker->wake();
}

void MonitorFeeds::readStoreOnce()
{
    std::vector<std::function<QString()>> actions;
    {
        std::lock_guard lock(m_requestMutex);
        actions.swap(m_actions);
    }
    QStringList actionMessages;
    bool actionFailed = false;
    for (const std::function<QString()> &action : actions) {
        try {
            actionMessages.append(action());
        } catch (const std::exception &e) {
            actionMessages.append(QString::fromUtf8(e.what()));
            actionFailed = true;
        }
    }

    StoreSnapshot snapshot;
    QString hookError;
    if (m_options.beforeRefresh) {
        try {
            m_options.beforeRefresh();
        } catch (const std::exception &e) {
            hookError = QString::fromUtf8(e.what());
        }
    }
    try {
        if (!m_store)
            m_store = core::TrackingStore::open(m_options.dbPath);
        snapshot = readStore(*m_store, m_trialsOf.load(), m_sparkWidth.load());
    } catch (const std::exception &e) {
        snapshot = {};
        snapshot.valid = true;
        snapshot.takenMs = QDateTime::currentMSecsSinceEpoch();
        snapshot.error = QStringLiteral("%1: %2").arg(m_options.dbPath, QString::fromUtf8(e.what()));
        m_store.reset();  // reopened next tick
    }
    snapshot.hookError = hookError;
    snapshot.actionMessage = actionMessages.join(QStringLiteral("; "));
    snapshot.actionFailed = actionFailed;
    std::optional<LogRequest> logsOf;
    {
        std::lock_guard lock(m_requestMutex);
        logsOf = m_logsOf;
    }
    if (logsOf && m_options.readLogs) {
        try {
            snapshot.logs = m_options.readLogs(*logsOf);
        } catch (const std::exception &e) {
            snapshot.logs = {};
            snapshot.logs.error = QString::fromUtf8(e.what());
        }
        snapshot.logs.of = *logsOf;
    }
    if (const std::optional<StoreSnapshot> previous = m_storeBox.take();
        previous && !previous->actionMessage.isEmpty() && snapshot.actionMessage.isEmpty()) {
        // The UI has not taken the snapshot that said how an action went: keep saying it.
        snapshot.actionMessage = previous->actionMessage;
        snapshot.actionFailed = previous->actionFailed;
    }
    m_storeBox.put(std::move(snapshot));
}

void MonitorFeeds::pollClusterOnce()
{
    ClusterState &st = *m_clusterState;
    try {
        if (!st.connection) {
            // No callbacks: the monitor never prompts (the screen is curses'); an unknown host key
            // or a key that needs a passphrase is reported, and `orrery cluster test` settles it.
            remote::ConnectionOptions options;
            options.reconnectAttempts = 2;  // the next tick retries anyway
            st.connection = std::make_unique<remote::Connection>(m_options.cluster->endpoint(),
                                                                 remote::AuthCallbacks{}, options);
            st.client = std::make_unique<remote::SlurmClient>(*st.connection);
        }
        remote::slurm::ClusterInfo info = st.client->clusterInfo();
        QList<remote::slurm::Job> queue = st.client->myQueue();
        st.last.info = std::move(info);
        st.last.queue = std::move(queue);
        st.last.polled = true;
        st.last.takenMs = QDateTime::currentMSecsSinceEpoch();
        st.last.error.clear();
        st.last.failures = 0;
    } catch (const std::exception &e) {
        st.last.error = QString::fromUtf8(e.what());
        st.last.errorMs = QDateTime::currentMSecsSinceEpoch();
        ++st.last.failures;
        if (const auto *remoteError = dynamic_cast<const remote::RemoteError *>(&e); remoteError &&
            (remoteError->kind() == remote::RemoteError::Kind::HostKeyUnknown ||
             remoteError->kind() == remote::RemoteError::Kind::HostKeyChanged ||
             remoteError->kind() == remote::RemoteError::Kind::Auth))
            st.last.error +=
                QStringLiteral(" (`orrery cluster test %1` settles it)").arg(m_options.cluster->name);
    }
    m_clusterBox.put(st.last);
}

}  // namespace orrery::monitor
