// SPDX-License-Identifier: GPL-3.0-or-later
#include "periodicworker.h"

namespace orrery::appcommon {

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

}  // namespace orrery::appcommon
