// SPDX-License-Identifier: GPL-3.0-or-later
//
// The window's one writer of the tracking store (ARCHITECTURE.md: one writer connection per
// process), beside its one reader (StoreReader): a thread of its own with the read-write
// connection, draining a queue of jobs in submission order, each its own transaction. The
// follower's ticks, the launcher's submission, the sweep actions, an import and the Video tab's
// cached copies are all jobs on it:
//
//     writer->write<SweepId>(this, [spec](TrackingStore &s) { return submit(s, spec); },
//                            [this](SweepId id) { showSweep(id); });
//
// A result whose receiver was destroyed meanwhile is dropped; a throwing job reports its message
// through failed() (or the job catches and returns its own error). The destructor lets the job
// that runs finish and runs the ones still queued, so nothing a user asked to write is lost.
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

class StoreWriter : public QObject {
    Q_OBJECT
public:
    explicit StoreWriter(QObject *parent = nullptr);
    ~StoreWriter() override;

    // Opens `path` read-write on the writer thread (creating and migrating it). Emits opened() or
    // failed(); jobs posted meanwhile run against the new file.
    void open(const QString &path);
    QString path() const { return m_path; }

    template<class T>
    void write(QObject *receiver, std::function<T(core::TrackingStore &)> work, std::function<void(T)> done)
    {
        post(resultJob<T, core::TrackingStore>(this, receiver, std::move(work), std::move(done)));
    }
    // A job whose outcome nobody waits for (a cached copy recorded).
    void post(std::function<void(core::TrackingStore &)> job);

Q_SIGNALS:
    // Emitted on the owner's thread. readOnlyReason is set where the file cannot be written
    // (a newer Orrery's, a read-only directory): jobs then see a read-only store and fail.
    void opened(const QString &path, const QString &readOnlyReason);
    void failed(const QString &message);

private:
    QString m_path;
    StoreThread m_thread;  // last: it finishes its jobs before the rest goes
};

}  // namespace orrery::gui
