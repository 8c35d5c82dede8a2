// SPDX-License-Identifier: GPL-3.0-or-later
//
// The GUI's one reader of the tracking store: a thread of its own with its own connection, so no
// store query ever runs on the UI thread (a 100,000-run list or a 1M-point re-query would stall
// painting). Callers hand it work and get the result back on their own thread:
//
//     reader->read<QList<RunRow>>(this, [q](const TrackingStore &s) { return s.queryRuns(q); },
//                                 [this](QList<RunRow> rows) { m_model->setRows(rows); });
//
// Work runs in submission order. A result whose receiver was destroyed meanwhile is dropped; a
// throwing read reports its message instead of the callback: stale() where a row it asked for is
// gone (deleted by another window or process: refresh, the file is fine), readFailed() otherwise.
#pragma once

#include "storethread.h"

#include "orrery/core/store.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>

#include <functional>
#include <memory>

namespace orrery::gui {

class StoreReader : public QObject {
    Q_OBJECT
public:
    explicit StoreReader(QObject *parent = nullptr);
    ~StoreReader() override;

    // Opens `path` on the reader thread (read-only when a newer Orrery wrote it; the window opens
    // it ReadOnly, its StoreWriter having created and migrated it). Emits opened() or failed();
    // reads submitted meanwhile run against the new file.
    void open(const QString &path, core::TrackingStore::Mode mode = core::TrackingStore::Mode::ReadWrite);
    QString path() const { return m_path; }
    // Closes the connection (reads already posted run first); reads after it do nothing. The
    // window closes its reader before its writer: a writable connection closing last
    // checkpoints the WAL into the main file.
    void close();

    template<class T>
    void read(QObject *receiver, std::function<T(const core::TrackingStore &)> work,
              std::function<void(T)> done)
    {
        post(resultJob<T, const core::TrackingStore>(this, receiver, std::move(work), std::move(done)));
    }

Q_SIGNALS:
    // Emitted on the UI thread. readOnlyReason is empty for a writable file.
    void opened(const QString &path, const QString &readOnlyReason);
    void failed(const QString &message);  // the file cannot be opened
    void stale(const QString &message);  // a read asked for a row that is gone
    void readFailed(const QString &message);  // a read failed otherwise

private:
    void post(std::function<void(core::TrackingStore &)> job);

    QString m_path;
    StoreThread m_thread;  // last: it finishes its jobs before the rest goes
};

}  // namespace orrery::gui
