// SPDX-License-Identifier: GPL-3.0-or-later
//
// The window's clusters: one remote::Connection per cluster profile, shared by everything that
// talks to it — the follower (through remote::Executors' ConnectionSource), the Video tab's
// sample fetcher, the cluster view's polls, logs and sweep actions — with SshPrompter's dialogs as
// its prompts. It keeps each cluster's link state for the status bar (connecting, connected,
// lost — retried by the next poll or call —, or waiting for a person: a rejected host key, a
// changed one, a declined password: remote::linkFailure decides which) and polls the cluster
// view's data the way the monitor and `orrery cluster nodes` do (remote::pollCluster: one `sinfo`
// and one `squeue` per tick), on a pool thread, one poll in flight per cluster, so the window
// never waits on a silent cluster.
//
// connection() may be called from any thread; everything else on the UI thread.
#pragma once

#include "orrery/remote/clusterstatus.h"
#include "orrery/remote/executors.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/slurmparse.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>
#include <QTimer>

#include <exception>
#include <functional>
#include <memory>
#include <mutex>

namespace orrery::remote {
class Connection;
}

namespace orrery::gui {

class SshPrompter;

// One poll of a cluster (ClusterHub::poll).
// One poll of a cluster (remote::pollCluster: one sinfo, one squeue).
using ClusterPoll = remote::ClusterStatus;

class ClusterHub : public QObject {
    Q_OBJECT
public:
    enum class Link {
        Idle,  // no connection made yet
        Connecting,
        Connected,
        Lost,  // the last call found no connection; the next one tries again
        NeedsYou,  // a host key or credentials were refused or declined: reconnect() asks again
    };
    struct Status {
        Link link = Link::Idle;
        QString message;  // the last error, for the tooltip and the cluster view
        int connects = 0;  // connects made (> 1: it came back after a loss)
        qint64 sinceMs = 0;  // when the link took this state
    };

    explicit ClusterHub(SshPrompter *prompter, QObject *parent = nullptr);
    ~ClusterHub() override;

    // The shared connection of a cluster (made on first use, connecting on its first call);
    // nullptr with *problem when there is no such profile or the cluster waits for a person.
    // Any thread.
    std::shared_ptr<remote::Connection> connection(const QString &cluster, QString *problem);
    std::shared_ptr<remote::Connection> connection(const remote::ClusterProfile &profile, QString *problem);
    // For remote::Executors (the follower, sweep actions, the launcher's submit).
    remote::Executors::ConnectionSource connectionSource();
    // The same by cluster name (the Video tab's sample fetcher).
    using NamedConnectionSource =
        std::function<std::shared_ptr<remote::Connection>(const QString &cluster, QString *problem)>;
    NamedConnectionSource namedConnectionSource();

    // Connects now, in the background (the Cluster tab's Connect, the manager's): clears a
    // NeedsYou state first, so its questions are asked again.
    void connectNow(const QString &cluster);
    // Drops a cluster's connection (its profile changed or went): the next use makes a new one.
    void forget(const QString &cluster);
    // Records what a call on a cluster's connection found (the pollers and actions report here,
    // so the status bar shows a loss whoever met it).
    void reportSuccess(const QString &cluster);
    void reportFailure(const QString &cluster, const std::exception &error);
    // The same with what the failure means already known (remote::linkFailure).
    void reportFailure(const QString &cluster, remote::LinkFailure failure, const QString &message);

    Status status(const QString &cluster) const;
    QStringList clusters() const;  // those with a connection or a state, by name
    static QString linkText(Link link);

    // One sinfo + one squeue on a pool thread; `polled` brings the result. A poll already in
    // flight for this cluster makes this a no-op (returns false).
    bool poll(const QString &cluster, bool mineOnly);
    bool isPolling(const QString &cluster) const { return m_polling.contains(cluster); }
    // How often the link states are checked for a loss between calls (tests shorten it).
    void setWatchInterval(int ms) { m_watch.setInterval(ms); }

Q_SIGNALS:
    void statusChanged(const QString &cluster);
    void polled(const QString &cluster, const orrery::remote::ClusterStatus &poll);

private:
    void setStatus(const QString &cluster, Link link, const QString &message);
    void watchLinks();
    void finishPoll(const QString &cluster, const ClusterPoll &poll);

    QPointer<SshPrompter> m_prompter;
    mutable std::mutex m_mutex;  // guards m_connections and m_needsYou (any thread)
    QHash<QString, std::shared_ptr<remote::Connection>> m_connections;
    QHash<QString, QString> m_needsYou;  // cluster → why; connection() refuses until connectNow()
    // UI thread only.
    QHash<QString, Status> m_status;
    QHash<QString, int> m_seenConnects;
    QSet<QString> m_polling;
    QTimer m_watch;
};

}  // namespace orrery::gui

Q_DECLARE_METATYPE(orrery::remote::ClusterStatus)
