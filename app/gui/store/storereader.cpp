// SPDX-License-Identifier: GPL-3.0-or-later
#include "storereader.h"

namespace orrery::gui {

using core::TrackingStore;

StoreReader::StoreReader(QObject *parent)
    : QObject(parent), m_thread(QStringLiteral("orrery-store-reader"), this)
{ }

StoreReader::~StoreReader() = default;

void StoreReader::open(const QString &path, TrackingStore::Mode mode)
{
    m_path = path;
    m_thread.open(
        path, mode, [this, path](const QString &reason) { Q_EMIT opened(path, reason); },
        [this](const QString &message) { Q_EMIT failed(message); });
}

void StoreReader::close()
{
    m_thread.close();
}

void StoreReader::post(std::function<void(TrackingStore &)> job)
{
    m_thread.post(std::move(job), [this](const QString &message, bool gone) {
        if (gone)
            Q_EMIT stale(message);
        else
            Q_EMIT readFailed(message);
    });
}

}  // namespace orrery::gui
