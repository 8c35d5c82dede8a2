// SPDX-License-Identifier: GPL-3.0-or-later
//
// Follows the active sweeps while the window is open, as `orrery sweep watch` and the monitor do:
// core::followActiveSweeps on a thread of its own (its own store connection, its own SSH
// connections through remote::Executors), at the runner's pace — brisk while something runs,
// backing off when nothing does. The UI thread only receives one summary per tick.
#pragma once

#include "orrery/remote/executors.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

namespace orrery::gui {

struct FollowSummary {
    int active = 0, running = 0;
    qint64 points = 0, bytes = 0;
    bool backlog = false;  // a file had more to read than one tick takes: ticking again soon
    QStringList events, errors;
    QStringList elsewhere;  // holders of the sweeps another follower acts on (this one only reads)
    qint64 atMs = 0;
};

class Follower : public QObject {
    Q_OBJECT
public:
    explicit Follower(QObject *parent = nullptr);
    ~Follower() override;

    // Where cluster connections come from (the window's ClusterHub, with its dialogs); unset:
    // the follower makes its own, which ask nothing. Takes effect at the next start().
    void setConnectionSource(remote::Executors::ConnectionSource source);
    // Starts following the sweeps of `databasePath` (stops following the previous one).
    void start(const QString &databasePath);
    void stop();
    // Ticks now instead of at the next interval (a sweep was just submitted).
    void wake();
    bool isFollowing() const { return m_following; }

Q_SIGNALS:
    void ticked(const orrery::gui::FollowSummary &summary);
    void unavailable(const QString &why);  // no trainer schema, a read-only file, ...

private:
    class Worker;
    QThread m_thread;
    Worker *m_worker = nullptr;
    remote::Executors::ConnectionSource m_source;
    bool m_following = false;
};

}  // namespace orrery::gui

Q_DECLARE_METATYPE(orrery::gui::FollowSummary)
