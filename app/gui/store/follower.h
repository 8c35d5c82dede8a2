// SPDX-License-Identifier: GPL-3.0-or-later
//
// Follows the active sweeps while the window is open, as `orrery sweep watch` and the monitor do:
// remote::SweepOperations::followActive as jobs on the window's store writer (its one read-write
// connection; SSH connections from the window's ClusterHub), at the runner's pace — brisk while
// something runs, backing off when nothing does. The UI thread only times the ticks and receives
// one summary per tick.
#pragma once

#include "orrery/core/notice.h"
#include "orrery/remote/executors.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <memory>

namespace orrery::gui {

class StoreWriter;

struct FollowSummary {
    int active = 0, running = 0;
    qint64 points = 0, bytes = 0;
    bool backlog = false;  // a file had more to read than one tick takes: ticking again soon
    QStringList events, errors;
    QStringList elsewhere;  // holders of the sweeps another follower acts on (this one only reads)
    // What a person is told about (a sweep ended, a trial failed for good or hung, a budget
    // stopped a sweep): the window shows them on the desktop. Their spec's `notify:` targets are
    // served by the follower itself, off the writer's thread.
    QList<core::Notice> notices;
    qint64 atMs = 0;
};

class Follower : public QObject {
    Q_OBJECT
public:
    explicit Follower(StoreWriter *writer, QObject *parent = nullptr);
    ~Follower() override;

    // Where cluster connections come from (the window's ClusterHub, with its dialogs); unset:
    // the follower makes its own, which ask nothing. Takes effect at the next start().
    void setConnectionSource(remote::Executors::ConnectionSource source);
    // Starts following the sweeps of the writer's database (afresh: a new file, a new start).
    void start();
    void stop();
    // Ticks now instead of at the next interval (a sweep was just submitted).
    void wake();
    bool isFollowing() const { return m_following; }

Q_SIGNALS:
    void ticked(const orrery::gui::FollowSummary &summary);
    void unavailable(const QString &why);  // no trainer schema, a read-only file, ...

private:
    struct State;
    void tick();

    StoreWriter *m_writer;
    remote::Executors::ConnectionSource m_source;
    std::shared_ptr<State> m_state;  // touched only by jobs on the writer's thread
    QTimer m_timer;
    bool m_following = false;
    bool m_inFlight = false;  // a tick is queued or running on the writer
    int m_generation = 0;  // a start or stop makes the ticks in flight stale
};

}  // namespace orrery::gui

Q_DECLARE_METATYPE(orrery::gui::FollowSummary)
