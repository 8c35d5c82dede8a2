// SPDX-License-Identifier: GPL-3.0-or-later
#include "storewriter.h"

namespace orrery::gui {

using core::TrackingStore;

StoreWriter::StoreWriter(QObject *parent)
    : QObject(parent), m_thread(QStringLiteral("orrery-store-writer"), this)
{ }

StoreWriter::~StoreWriter() = default;

void StoreWriter::open(const QString &path)
{
    m_path = path;
    m_thread.open(
        path, TrackingStore::Mode::ReadWrite,
        [this, path](const QString &reason) { Q_EMIT opened(path, reason); },
        [this](const QString &message) { Q_EMIT failed(message); });
}

void StoreWriter::post(std::function<void(TrackingStore &)> job)
{
    m_thread.post(std::move(job), [this](const QString &message, bool) { Q_EMIT failed(message); });
}

}  // namespace orrery::gui
