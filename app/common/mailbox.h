// SPDX-License-Identifier: GPL-3.0-or-later
//
// How a worker thread hands its latest result to the UI thread (the monitor's snapshots; the
// GUI's coalesced updates): only the newest value is kept, so a slow consumer skips what it
// missed instead of queueing it.
#pragma once

#include <mutex>
#include <optional>
#include <utility>

namespace orrery::appcommon {

// The latest value a producer thread put, for a consumer thread to take once. Thread-safe.
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

}  // namespace orrery::appcommon
