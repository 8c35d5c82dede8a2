// SPDX-License-Identifier: GPL-3.0-or-later
#include "clusterhub.h"

#include "blockingpool.h"
#include "postifalive.h"
#include "sshprompts.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"
#include "orrery/remote/slurm.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QPointer>
#include <QtConcurrent>

namespace orrery::gui {

namespace {

QString refusedText(const QString &why)
{
    return ClusterHub::tr("%1 (Connect in the Cluster tab to try again)").arg(why);
}

}  // namespace

ClusterHub::ClusterHub(SshPrompter *prompter, QObject *parent) : QObject(parent), m_prompter(prompter)
{
    qRegisterMetaType<ClusterPoll>();
    m_watch.setInterval(1000);
    connect(&m_watch, &QTimer::timeout, this, &ClusterHub::watchLinks);
    m_watch.start();
}

ClusterHub::~ClusterHub()
{
    // A connection's thread may be waiting on a dialog: answer it, so that thread can end.
    if (m_prompter)
        m_prompter->cancelAll();
}

std::shared_ptr<remote::Connection> ClusterHub::connection(const QString &cluster, QString *problem)
{
    {
        std::lock_guard lock(m_mutex);
        if (const auto why = m_needsYou.constFind(cluster); why != m_needsYou.constEnd()) {
            *problem = refusedText(*why);
            return nullptr;
        }
        if (auto it = m_connections.find(cluster); it != m_connections.end())
            return *it;
    }
    try {
        const auto profile = remote::ProfileStore().find(cluster);
        if (!profile) {
            *problem = tr("no cluster profile '%1' on this machine (Cluster → Manage clusters)").arg(cluster);
            return nullptr;
        }
        return connection(*profile, problem);
    } catch (const remote::ProfileError &e) {
        *problem = e.message();
        return nullptr;
    }
}

std::shared_ptr<remote::Connection> ClusterHub::connection(const remote::ClusterProfile &profile,
                                                           QString *problem)
{
    std::lock_guard lock(m_mutex);
    if (const auto why = m_needsYou.constFind(profile.name); why != m_needsYou.constEnd()) {
        *problem = refusedText(*why);
        return nullptr;
    }
    if (auto it = m_connections.find(profile.name); it != m_connections.end())
        return *it;
    remote::AuthCallbacks callbacks =
        m_prompter ? m_prompter->callbacks(profile.name) : remote::AuthCallbacks{};
    remote::ConnectionOptions options;
    // Two quick tries: the next poll or follow tick tries again, and the status bar says "lost"
    // within seconds instead of after a long backoff.
    options.reconnectAttempts = 2;
    options.keepaliveInterval = std::chrono::seconds(15);
    auto c = std::make_shared<remote::Connection>(profile.endpoint(), std::move(callbacks), options);
    m_connections.insert(profile.name, c);
    return c;
}

remote::Executors::ConnectionSource ClusterHub::connectionSource()
{
    QPointer<ClusterHub> self(this);
    // The hub outlives the follower (MainWindow stops it first); the QPointer is checked anyway.
    return [self](const remote::ClusterProfile &profile,
                  QString *problem) -> std::shared_ptr<remote::Connection> {
        if (!self) {
            *problem = QStringLiteral("the window is closing");
            return nullptr;
        }
        return self->connection(profile, problem);
    };
}

ClusterHub::NamedConnectionSource ClusterHub::namedConnectionSource()
{
    QPointer<ClusterHub> self(this);
    return [self](const QString &cluster, QString *problem) -> std::shared_ptr<remote::Connection> {
        if (!self) {
            *problem = QStringLiteral("the window is closing");
            return nullptr;
        }
        return self->connection(cluster, problem);
    };
}

void ClusterHub::connectNow(const QString &cluster)
{
    {
        std::lock_guard lock(m_mutex);
        m_needsYou.remove(cluster);
        // A connection that was refused keeps nothing worth reusing; a new one asks again.
        if (auto it = m_connections.find(cluster); it != m_connections.end() && !(*it)->isConnected())
            m_connections.erase(it);
    }
    if (m_prompter)
        m_prompter->resume();
    QString problem;
    const auto c = connection(cluster, &problem);
    if (!c) {
        setStatus(cluster, Link::NeedsYou, problem);
        return;
    }
    if (!c->isConnected())
        setStatus(cluster, Link::Connecting, {});
    thenIfAlive(
        c->connect(), this, [this, cluster] { reportSuccess(cluster); },
        [this, cluster](const std::exception &e) { reportFailure(cluster, e); });
}

void ClusterHub::forget(const QString &cluster)
{
    {
        std::lock_guard lock(m_mutex);
        m_connections.remove(cluster);
        m_needsYou.remove(cluster);
    }
    m_status.remove(cluster);
    m_seenConnects.remove(cluster);
    Q_EMIT statusChanged(cluster);
}

void ClusterHub::reportSuccess(const QString &cluster)
{
    std::shared_ptr<remote::Connection> c;
    {
        std::lock_guard lock(m_mutex);
        c = m_connections.value(cluster);
    }
    if (c)
        m_status[cluster].connects = c->connectCount();
    setStatus(cluster, Link::Connected, {});
}

void ClusterHub::reportFailure(const QString &cluster, const std::exception &error)
{
    reportFailure(cluster, remote::linkFailure(error), QString::fromUtf8(error.what()));
}

void ClusterHub::reportFailure(const QString &cluster, remote::LinkFailure failure, const QString &message)
{
    switch (failure) {
    case remote::LinkFailure::HostKeyChanged:
    case remote::LinkFailure::NeedsYou: {
        const bool changed = failure == remote::LinkFailure::HostKeyChanged;
        bool first = false;
        {
            std::lock_guard lock(m_mutex);
            first = !m_needsYou.contains(cluster);
            m_needsYou.insert(cluster, changed ? tr("the host key changed") : message);
        }
        if (changed && first)
            SshPrompter::showHostKeyChanged(m_prompter ? m_prompter->window() : nullptr, cluster, message);
        setStatus(cluster, Link::NeedsYou, message);
        return;
    }
    case remote::LinkFailure::Lost:
    case remote::LinkFailure::None:
        setStatus(cluster, Link::Lost, message);
        return;
    case remote::LinkFailure::Refused:  // a command refused (Slurm, SFTP): the link itself is fine
        setStatus(cluster, Link::Connected, message);
        return;
    }
}

void ClusterHub::setStatus(const QString &cluster, Link link, const QString &message)
{
    Status &s = m_status[cluster];
    if (s.link == link && s.message == message)
        return;
    if (s.link != link)
        s.sinceMs = QDateTime::currentMSecsSinceEpoch();
    s.link = link;
    s.message = message;
    Q_EMIT statusChanged(cluster);
}

void ClusterHub::watchLinks()
{
    QHash<QString, std::shared_ptr<remote::Connection>> connections;
    QHash<QString, QString> needsYou;
    {
        std::lock_guard lock(m_mutex);
        connections = m_connections;
        needsYou = m_needsYou;
    }
    for (auto it = needsYou.cbegin(); it != needsYou.cend(); ++it)
        if (m_status.value(it.key()).link != Link::NeedsYou)
            setStatus(it.key(), Link::NeedsYou, *it);
    for (auto it = connections.cbegin(); it != connections.cend(); ++it) {
        const QString &name = it.key();
        if (needsYou.contains(name))
            continue;
        const Status s = m_status.value(name);
        const int connects = (*it)->connectCount();
        if ((*it)->isConnected()) {
            m_status[name].connects = connects;
            if (s.link != Link::Connected || !s.message.isEmpty())
                setStatus(name, Link::Connected, {});
            else if (connects != s.connects)
                Q_EMIT statusChanged(name);  // it came back between two looks
        } else if (s.link == Link::Connected) {
            // Seen between calls (the keepalive found it dead): the next call reconnects.
            setStatus(name, Link::Lost, tr("the connection dropped; it is made again on the next call"));
        }
    }
}

ClusterHub::Status ClusterHub::status(const QString &cluster) const
{
    return m_status.value(cluster);
}

QStringList ClusterHub::clusters() const
{
    QStringList names = m_status.keys();
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_connections.cbegin(); it != m_connections.cend(); ++it)
            if (!names.contains(it.key()))
                names << it.key();
    }
    names.sort();
    return names;
}

QString ClusterHub::linkText(Link link)
{
    switch (link) {
    case Link::Idle:
        return tr("not connected");
    case Link::Connecting:
        return tr("connecting…");
    case Link::Connected:
        return tr("connected");
    case Link::Lost:
        return tr("connection lost");
    case Link::NeedsYou:
        return tr("needs you");
    }
    return {};
}

bool ClusterHub::poll(const QString &cluster, bool mineOnly)
{
    if (m_polling.contains(cluster))
        return false;
    QString problem;
    const auto c = connection(cluster, &problem);
    if (!c) {
        ClusterPoll p;
        p.mineOnly = mineOnly;
        p.error = problem;
        if (m_status.value(cluster).link != Link::NeedsYou)
            setStatus(cluster, problem.contains(QLatin1String("profile")) ? Link::Idle : Link::NeedsYou,
                      problem);
        Q_EMIT polled(cluster, p);
        return true;
    }
    m_polling.insert(cluster);
    if (!c->isConnected() && m_status.value(cluster).link != Link::Lost)
        setStatus(cluster, Link::Connecting, {});
    const remote::QueueScope scope = mineOnly ? remote::QueueScope::Mine : remote::QueueScope::Everyone;
    thenIfAlive(QtConcurrent::run(blockingPool(), [c, scope] { return remote::pollCluster(*c, scope); }),
                this, [this, cluster](const ClusterPoll &poll) { finishPoll(cluster, poll); });
    return true;
}

void ClusterHub::finishPoll(const QString &cluster, const ClusterPoll &poll)
{
    m_polling.remove(cluster);
    if (poll.ok())
        reportSuccess(cluster);
    else
        reportFailure(cluster, poll.failure, poll.error);
    Q_EMIT polled(cluster, poll);
}

}  // namespace orrery::gui
