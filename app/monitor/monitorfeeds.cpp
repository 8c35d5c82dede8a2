// SPDX-License-Identifier: GPL-3.0-or-later
#include "monitorfeeds.h"

#include "orrery/remote/clusterstatus.h"

#include <QDateTime>

namespace orrery::monitor {

// --- MonitorFeeds ---------------------------------------------------------------------------

struct MonitorFeeds::ClusterState {
    std::unique_ptr<remote::ClusterWatch> watch;  // its connection, kept between polls
    ClusterSnapshot last;
};

MonitorFeeds::MonitorFeeds(FeedOptions options)
    : m_options(std::move(options)), m_clusterState(std::make_unique<ClusterState>())
{
    m_clusterState->last.notice = m_options.clusterNotice;
    if (m_options.cluster)
        m_clusterState->last.cluster = m_options.cluster->name;
    m_clusterBox.put(m_clusterState->last);
    m_storeWorker =
        std::make_unique<appcommon::PeriodicWorker>(m_options.refresh, [this] { readStoreOnce(); });
    if (m_options.cluster)
        m_clusterWorker =
            std::make_unique<appcommon::PeriodicWorker>(m_options.refresh, [this] { pollClusterOnce(); });
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

void MonitorFeeds::setLogsOf(std::optional<core::LogRequest> request)
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
        snapshot = readStore(*m_store, m_trialsOf.load(), m_sparkWidth.load(), 50, &m_progress);
        if (m_options.cluster)
            snapshot.suspects = m_store->suspectNodes(m_options.cluster->name);
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
    std::optional<core::LogRequest> logsOf;
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
    if (!st.watch) {
        // No prompts: the monitor never asks (the screen is curses'); an unknown host key or a
        // key that needs a passphrase is reported, and `orrery cluster test` settles it.
        remote::ConnectionOptions options;
        options.reconnectAttempts = 2;  // the next tick retries anyway
        st.watch =
            std::make_unique<remote::ClusterWatch>(*m_options.cluster, remote::AuthCallbacks{}, options);
    }
    remote::ClusterStatus status = st.watch->poll(remote::QueueScope::Mine);
    if (status.ok()) {
        st.last.info = std::move(status.info);
        st.last.queue = std::move(status.queue);
        st.last.polled = true;
        st.last.takenMs = QDateTime::currentMSecsSinceEpoch();
        st.last.error.clear();
        st.last.failures = 0;
    } else {
        st.last.error = status.error + remote::settleHint(status.failure, m_options.cluster->name);
        st.last.errorMs = QDateTime::currentMSecsSinceEpoch();
        ++st.last.failures;
    }
    m_clusterBox.put(st.last);
}

}  // namespace orrery::monitor
