// SPDX-License-Identifier: GPL-3.0-or-later
#include "follower.h"

#include "orrery/core/paths.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/core/sweepspec.h"
#include "orrery/remote/executors.h"

#include <QDateTime>
#include <QTimer>

#include <memory>
#include <optional>

namespace orrery::gui {

namespace {
// The lease outlives the slowest idle tick (15 s) several times over.
constexpr qint64 kLeaseTtlMs = 60'000;
}  // namespace

// The follower thread's side: the store, the schema and the executors live and die here.
class Follower::Worker : public QObject {
public:
    explicit Worker(Follower *owner) : m_owner(owner)
    {
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, [this] { tick(); });
    }

    void start(const QString &path, const remote::Executors::ConnectionSource &source)
    {
        stop();
        try {
            m_store = core::TrackingStore::open(path);
            if (m_store->isReadOnly())
                return fail(tr("not following sweeps: %1").arg(m_store->readOnlyReason()));
            if (!m_schema) {
                QString problem;
                m_schema = core::TrainerSchema::load(&problem);
                if (!m_schema)
                    return fail(tr("not following sweeps: %1").arg(problem));
            }
            // The window's connections (their prompts are its dialogs), else ones that ask nothing.
            m_executors =
                source ? std::make_unique<remote::Executors>(source) : std::make_unique<remote::Executors>();
            m_quietTicks = 0;
            tick();
        } catch (const std::exception &e) {
            fail(tr("not following sweeps: %1").arg(QString::fromUtf8(e.what())));
        }
    }

    void stop()
    {
        m_timer.stop();
        m_executors.reset();
        if (m_store && !m_store->isReadOnly()) {
            try {
                m_store->releaseSweepLeases(core::processFollowerId());  // another follower acts at once
            } catch (const std::exception &) {
                // the lease then lapses by itself after its TTL
            }
        }
        m_store.reset();
    }

    void tickNow()
    {
        if (!m_store)
            return;
        m_timer.stop();
        m_quietTicks = 0;
        tick();
    }

private:
    void fail(const QString &why)
    {
        stop();
        QMetaObject::invokeMethod(m_owner, [o = m_owner, why] { Q_EMIT o->unavailable(why); });
    }

    void tick()
    {
        if (!m_store)
            return;
        FollowSummary s;
        core::TickReport r;
        try {
            r = core::followActiveSweeps(
                *m_store, *m_schema,
                [this](const QString &cluster, QString *problem) {
                    return m_executors->get(cluster, problem);
                },
                core::Follower{core::processFollowerId(), kLeaseTtlMs});
            s.active = r.active;
            s.running = r.running;
            s.points = r.points;
            s.bytes = r.bytes;
            s.backlog = r.moreToRead;
            s.events = r.events;
            s.errors = r.errors;
            for (const core::SweepLease &l : r.followedElsewhere)
                s.elsewhere.push_back(l.holder);
        } catch (const std::exception &e) {
            r.errors.push_back(QString::fromUtf8(e.what()));
            s.errors = r.errors;
        }
        s.atMs = QDateTime::currentMSecsSinceEpoch();
        // The same pace as `sweep watch` (core::nextTickIntervalMs): at once while a file has
        // more to read, 1 s after a tick where something happened, backing off to 15 s.
        const int next = core::nextTickIntervalMs(r, core::TickPace{1000, 15'000}, m_quietTicks);
        m_timer.start(next);
        QMetaObject::invokeMethod(m_owner, [o = m_owner, s] { Q_EMIT o->ticked(s); });
    }

    Follower *m_owner;
    QTimer m_timer{this};  // a child: it moves to the follower thread with the worker
    std::unique_ptr<core::TrackingStore> m_store;
    std::optional<core::TrainerSchema> m_schema;
    std::unique_ptr<remote::Executors> m_executors;
    int m_quietTicks = 0;
};

Follower::Follower(QObject *parent) : QObject(parent), m_worker(new Worker(this))
{
    qRegisterMetaType<FollowSummary>();
    m_thread.setObjectName(QStringLiteral("orrery-follower"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread.start();
}

Follower::~Follower()
{
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker] { w->stop(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

void Follower::setConnectionSource(remote::Executors::ConnectionSource source)
{
    m_source = std::move(source);
}

void Follower::start(const QString &databasePath)
{
    m_following = true;
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, databasePath, source = m_source] { w->start(databasePath, source); });
}

void Follower::wake()
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker] { w->tickNow(); });
}

void Follower::stop()
{
    m_following = false;
    QMetaObject::invokeMethod(m_worker, [w = m_worker] { w->stop(); });
}

}  // namespace orrery::gui
