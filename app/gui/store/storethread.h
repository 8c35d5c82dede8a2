// SPDX-License-Identifier: GPL-3.0-or-later
//
// One tracking-store connection on a thread of its own: what the window's StoreReader and
// StoreWriter are made of. Jobs run on that thread in submission order; what they report reaches
// the owner on the owner's thread. The connection lives and dies on the store thread.
#pragma once

#include "postifalive.h"

#include "orrery/core/store.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>

#include <functional>
#include <memory>

namespace orrery::gui {

class StoreThread {
public:
    // `name`: the thread's (shown by debuggers); `owner`: where opened/failed are called.
    StoreThread(const QString &name, QObject *owner);
    // Runs every job already posted, then closes the connection and ends the thread.
    ~StoreThread();
    StoreThread(const StoreThread &) = delete;
    StoreThread &operator=(const StoreThread &) = delete;

    // Opens `path` in `mode` on the store thread (closing the one before); then `opened` with the
    // store's readOnlyReason, or `failed` with why.
    void open(const QString &path, core::TrackingStore::Mode mode,
              std::function<void(const QString &)> opened, std::function<void(const QString &)> failed);
    // Closes the connection after the jobs already posted (waits for it); later jobs do nothing.
    void close();
    // Runs `job` on the store thread (not at all while no file is open); an exception it throws
    // is reported through `failed`, with `gone` true where it was core::NotFoundError (a row
    // deleted since its id was read: the caller's view is stale, the file is fine).
    using JobFailed = std::function<void(const QString &message, bool gone)>;
    void post(std::function<void(core::TrackingStore &)> job, JobFailed failed);

private:
    QObject *m_owner;
    QThread m_thread;
    QObject *m_worker;  // lives on m_thread; the context of the jobs
    std::shared_ptr<std::unique_ptr<core::TrackingStore>> m_store;  // touched on m_thread only
};

// A job that computes a result on the store thread and hands it to `done` on the receiver's
// thread; dropped if the receiver was destroyed meanwhile. The result travels through `fallback`
// (the reader or writer itself: it outlives its jobs and lives on the receiver's thread), where
// the receiver is looked at (postifalive.h says why not on the store thread).
template<class T, class Store>
std::function<void(core::TrackingStore &)>
resultJob(QObject *fallback, QObject *receiver, std::function<T(Store &)> work, std::function<void(T)> done)
{
    Q_ASSERT(receiver && receiver->thread() == fallback->thread());
    QPointer<QObject> guard(receiver);
    return [fallback, guard, work = std::move(work), done = std::move(done)](core::TrackingStore &store) {
        auto result = std::make_shared<T>(work(store));
        postIfAlive(
            guard, [done, result](QObject *) { done(std::move(*result)); }, fallback);
    };
}

}  // namespace orrery::gui
