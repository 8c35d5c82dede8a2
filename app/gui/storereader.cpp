// SPDX-License-Identifier: GPL-3.0-or-later
#include "storereader.h"

namespace orrery::gui {

using core::TrackingStore;

// The reader thread's side: owns the connection.
class StoreReader::Worker : public QObject {
public:
    std::unique_ptr<TrackingStore> store;
};

StoreReader::StoreReader(QObject *parent) : QObject(parent), m_worker(new Worker)
{
    m_thread.setObjectName(QStringLiteral("orrery-store-reader"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread.start();
}

StoreReader::~StoreReader()
{
    m_thread.quit();
    m_thread.wait();
}

void StoreReader::open(const QString &path)
{
    m_path = path;
    QMetaObject::invokeMethod(m_worker, [this, path] {
        try {
            m_worker->store.reset();
            m_worker->store = TrackingStore::open(path);
            const QString reason = m_worker->store->readOnlyReason();
            QMetaObject::invokeMethod(this, [this, path, reason] { Q_EMIT opened(path, reason); });
        } catch (const std::exception &e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(this, [this, message] { Q_EMIT failed(message); });
        }
    });
}

void StoreReader::post(std::function<void(const TrackingStore &)> job)
{
    QMetaObject::invokeMethod(m_worker, [this, job = std::move(job)] {
        if (!m_worker->store)
            return;  // no database (it failed to open): nothing to read
        try {
            job(*m_worker->store);
        } catch (const std::exception &e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(this, [this, message] { Q_EMIT failed(message); });
        }
    });
}

}  // namespace orrery::gui
