// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where the terminal monitor's snapshots come from: two worker threads, so neither a slow
// cluster nor a slow follow step ever holds up the keyboard.
//  - the store worker: calls the beforeRefresh hook (core::SweepRunner's tick goes there), then
//    reads the tracking store (readStore) on its own connection;
//  - the cluster worker: one `sinfo` and one `squeue --me` per tick over its own
//    remote::Connection; a failure is published as the snapshot's error and retried next tick.
// Each publishes its latest snapshot into a mailbox the UI thread takes from when it likes. The
// worker, the mailbox and the log tailer are the generic helpers of app/common (orrery_appcommon),
// which the GUI links too; what is the monitor's is here.
#pragma once

#include "mailbox.h"
#include "monitormodel.h"
#include "periodicworker.h"

#include "orrery/remote/profile.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace orrery::monitor {

struct FeedOptions {
    QString dbPath;
    // The cluster to poll; nullopt: no cluster panel data (`clusterNotice` says why).
    std::optional<remote::ClusterProfile> cluster;
    QString clusterNotice;
    std::chrono::milliseconds refresh{5000};
    // Called on the store worker's thread before every store read, with the store closed to the
    // caller: the place for core::SweepRunner's follow step (read new events.jsonl lines of
    // active sweeps, ingest them, update trial states), so that one refresh shows what it just
    // ingested. It may block on SSH; the keyboard stays live. It must open its own
    // TrackingStore (one connection per thread). What it throws is shown on the status line and
    // the read goes on.
    std::function<void()> beforeRefresh;
    // Called on the store worker's thread after each store read while the log view is open
    // (setLogsOf): the tail of that trial's logs (core::LogTailer). What it throws becomes
    // the tail's error.
    std::function<core::LogTail(const core::LogRequest &)> readLogs;
};

// Owns both workers. Snapshots are taken on the UI thread; the setters are callable from it too.
class MonitorFeeds {
public:
    explicit MonitorFeeds(FeedOptions options);
    ~MonitorFeeds();  // stops the workers (waits for a poll in progress to end)

    void refreshNow();
    // What the next store read loads beside the sweeps (the model's wantedTrials / sparkWidth).
    void setTrialsOf(core::SweepId sweep);
    void setSparkWidth(int width);
    // The trial whose log tail each store read also loads (the model's wantedLogs); nullopt: none.
    void setLogsOf(std::optional<core::LogRequest> request);
    // Runs `action` on the store worker's thread before its next read (at once: the worker is
    // woken), so that an action that blocks (a cancel over SSH) never holds up the keyboard. What
    // it returns, or the message of what it throws, comes back as the next snapshot's
    // actionMessage (actionFailed when it threw).
    void runAction(std::function<QString()> action);

    std::optional<StoreSnapshot> takeStore() { return m_storeBox.take(); }
    std::optional<ClusterSnapshot> takeCluster() { return m_clusterBox.take(); }

private:
    void readStoreOnce();
    void pollClusterOnce();

    FeedOptions m_options;
    std::atomic<core::SweepId> m_trialsOf{0};
    std::atomic<int> m_sparkWidth{16};
    std::mutex m_requestMutex;  // guards the two below
    std::optional<core::LogRequest> m_logsOf;
    std::vector<std::function<QString()>> m_actions;
    appcommon::Mailbox<StoreSnapshot> m_storeBox;
    appcommon::Mailbox<ClusterSnapshot> m_clusterBox;

    // Owned by the store worker's thread.
    std::unique_ptr<core::TrackingStore> m_store;
    QHash<core::SweepId, core::SweepProgressTracker> m_progress;  // rates between reads
    // Owned by the cluster worker's thread.
    struct ClusterState;
    std::unique_ptr<ClusterState> m_clusterState;

    // Last: started after everything they use, stopped (destroyed) first.
    std::unique_ptr<appcommon::PeriodicWorker> m_storeWorker;
    std::unique_ptr<appcommon::PeriodicWorker> m_clusterWorker;
};

}  // namespace orrery::monitor
