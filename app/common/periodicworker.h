// SPDX-License-Identifier: GPL-3.0-or-later
//
// A thread that runs one piece of work over and over: the terminal monitor's store and cluster
// feeds, and the GUI's followers (ARCHITECTURE.md: helpers both faces link). No Qt event loop:
// the work is a plain function, its results leave through a Mailbox (mailbox.h) or the caller's
// own hand-off.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace orrery::appcommon {

// Runs `work` on a thread of its own: at once, then `interval` after each run ends, and at once
// again whenever wake() is called (wakes during a run are kept for after it). Owns the thread:
// the destructor asks it to stop and waits for the run in progress to end. wake() and
// requestStop() may be called from any thread; `work` must not throw.
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

}  // namespace orrery::appcommon
