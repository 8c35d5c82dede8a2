// SPDX-License-Identifier: GPL-3.0-or-later
#include "storethread.h"

namespace orrery::gui {

StoreThread::StoreThread(const QString &name, QObject *owner)
    : m_owner(owner), m_worker(new QObject), m_store(std::make_shared<std::unique_ptr<core::TrackingStore>>())
{
    m_thread.setObjectName(name);
    m_worker->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    // The connection closes on the store thread, after the last job.
    QObject::connect(&m_thread, &QThread::finished, m_worker, [store = m_store] { store->reset(); });
    m_thread.start();
}

StoreThread::~StoreThread()
{
    // The quit is queued behind the jobs already posted (a thread's events run in order), so every
    // job a user asked for still runs before the connection closes.
    QMetaObject::invokeMethod(m_worker, [this] { m_thread.quit(); });
    m_thread.wait();
}

void StoreThread::open(const QString &path, core::TrackingStore::Mode mode,
                       std::function<void(const QString &)> opened,
                       std::function<void(const QString &)> failed)
{
    QMetaObject::invokeMethod(m_worker, [owner = m_owner, store = m_store, path, mode, opened, failed] {
        try {
            store->reset();
            *store = core::TrackingStore::open(path, mode);
            const QString reason = (*store)->readOnlyReason();
            QMetaObject::invokeMethod(owner, [opened, reason] { opened(reason); });
        } catch (const std::exception &e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(owner, [failed, message] { failed(message); });
        }
    });
}

void StoreThread::close()
{
    QMetaObject::invokeMethod(
        m_worker, [store = m_store] { store->reset(); }, Qt::BlockingQueuedConnection);
}

void StoreThread::post(std::function<void(core::TrackingStore &)> job, JobFailed failed)
{
    QMetaObject::invokeMethod(m_worker, [owner = m_owner, store = m_store, job = std::move(job), failed] {
        if (!*store)
            return;  // no database (it failed to open): nothing to do
        try {
            job(**store);
        } catch (const core::NotFoundError &e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(owner, [failed, message] { failed(message, true); });
        } catch (const std::exception &e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(owner, [failed, message] { failed(message, false); });
        }
    });
}

}  // namespace orrery::gui
