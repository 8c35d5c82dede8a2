// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where the terminal monitor's snapshots come from: two worker threads, so neither a slow
// cluster nor a slow follow step ever holds up the keyboard.
//  - the store worker: calls the beforeRefresh hook (core::SweepRunner's tick goes there), then
//    reads the tracking store (readStore) on its own connection;
//  - the cluster worker: one `sinfo` and one `squeue --me` per tick over its own
//    remote::Connection; a failure is published as the snapshot's error and retried next tick.
// Each publishes its latest snapshot into a mailbox the UI thread takes from when it likes.
#pragma once

#include "monitormodel.h"

#include "orrery/core/executor.h"
#include "orrery/remote/profile.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace orrery::monitor {

// Runs `work` on a thread of its own: at once, then `interval` after each run ends, and at once
// again whenever wake() is called (wakes during a run are kept for after it). Owns the thread:
// the destructor asks it to stop and waits for the run in progress to end.
class PeriodicWorker {
public:
    PeriodicWorker(std::chrono::milliseconds interval, std::function<void()> work);
    ~PeriodicWorker();
    PeriodicWorker(const PeriodicWorker &) = delete;
    PeriodicWorker &operator=(const PeriodicWorker &) = delete;

    void wake();
    // Asks the thread to stop after the run in progress; does not wait (the destructor does).
    void requestStop();

private:
    void loop();

    std::chrono::milliseconds m_interval;
    std::function<void()> m_work;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_woken = false;
    bool m_stop = false;
    std::thread m_thread;  // last: started once everything above exists
};

// The latest value a producer thread put, for a consumer thread to take once.
template<typename T>
class Mailbox {
public:
    void put(T value)
    {
        std::lock_guard lock(m_mutex);
        m_value = std::move(value);
    }
    std::optional<T> take()
    {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_value, std::nullopt);
    }

private:
    std::mutex m_mutex;
    std::optional<T> m_value;
};

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
    // (setLogsOf): the tail of that trial's logs (LogTailer). What it throws becomes the tail's
    // error.
    std::function<LogTail(const LogRequest &)> readLogs;
};

// The tail of a trial's standard output and error, kept between reads so that a live tail reads
// only what is new: the first read of a file asks its size (an offset past its end), then reads
// its last kTailBytes; later reads ask from where the last one ended, and read the tail again
// when the file grew by more than a read or shrank (rewritten). One trial at a time: another
// trial or attempt starts over. Not thread-safe: the store worker's.
class LogTailer {
public:
    static constexpr qint64 kTailBytes = 64 * 1024;
    static constexpr int kMaxLines = 1000;  // per file: more than any screen is high

    LogTail read(core::Executor &executor, const core::Sweep &sweep, const core::Trial &trial);

private:
    struct File {
        QString path;
        bool exists = false;
        qint64 end = -1;  // the file offset `tail` ends at; -1: not read yet
        QByteArray tail;  // its last bytes, at most kTailBytes
    };
    LogRequest m_of;
    int m_attempt = -1;
    QList<File> m_files;
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
    void setLogsOf(std::optional<LogRequest> request);
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
    std::optional<LogRequest> m_logsOf;
    std::vector<std::function<QString()>> m_actions;
    Mailbox<StoreSnapshot> m_storeBox;
    Mailbox<ClusterSnapshot> m_clusterBox;

    // Owned by the store worker's thread.
    std::unique_ptr<core::TrackingStore> m_store;
    // Owned by the cluster worker's thread.
    struct ClusterState;
    std::unique_ptr<ClusterState> m_clusterState;

    // Last: started after everything they use, stopped (destroyed) first.
    std::unique_ptr<PeriodicWorker> m_storeWorker;
    std::unique_ptr<PeriodicWorker> m_clusterWorker;
};

}  // namespace orrery::monitor
