// SPDX-License-Identifier: GPL-3.0-or-later
#include "follower.h"

#include "storewriter.h"

#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/core/sweepspec.h"
#include "orrery/remote/notify.h"
#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QThreadPool>

#include <optional>

namespace orrery::gui {

namespace {
// The same pace as `sweep watch`: at once while a file has more to read, 1 s after a tick where
// something happened, backing off to 15 s; the lease follows from it (core::followerForPace).
constexpr core::TickPace kPace{1000, 15'000};
}  // namespace

// What the ticks keep between them, on the writer's thread: the operations over the writer's
// store (made afresh when the writer opened another file), the schema, the quiet ticks.
struct Follower::State {
    remote::Executors::ConnectionSource source;
    const core::TrackingStore *boundTo = nullptr;
    std::optional<core::TrainerSchema> schema;
    std::unique_ptr<remote::SweepOperations> ops;
    int quietTicks = 0;

    // Gives back this process's leases, so another follower acts at once (else they lapse by
    // themselves after their TTL).
    void release(core::TrackingStore &store)
    {
        try {
            if (!store.isReadOnly())
                store.releaseSweepLeases(core::processFollowerId());
        } catch (const std::exception &) { }
        ops.reset();
        boundTo = nullptr;
    }
};

Follower::Follower(StoreWriter *writer, QObject *parent) : QObject(parent), m_writer(writer)
{
    qRegisterMetaType<FollowSummary>();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &Follower::tick);
}

Follower::~Follower()
{
    stop();
}

void Follower::setConnectionSource(remote::Executors::ConnectionSource source)
{
    m_source = std::move(source);
}

void Follower::start()
{
    stop();
    m_following = true;
    m_state = std::make_shared<State>();
    m_state->source = m_source;
    tick();
}

void Follower::stop()
{
    m_timer.stop();
    ++m_generation;
    m_inFlight = false;
    if (m_following && m_state)
        m_writer->post([state = m_state](core::TrackingStore &store) { state->release(store); });
    m_following = false;
    m_state.reset();
}

void Follower::wake()
{
    if (!m_following || m_inFlight)
        return;
    m_timer.stop();
    m_writer->post([state = m_state](core::TrackingStore &) { state->quietTicks = 0; });
    tick();
}

void Follower::tick()
{
    if (!m_following || m_inFlight)
        return;
    m_inFlight = true;
    struct Result {
        FollowSummary summary;
        int nextMs = 0;
        QString unavailable;
    };
    m_writer->write<Result>(
        this,
        [state = m_state](core::TrackingStore &store) {
            Result r;
            if (store.isReadOnly()) {
                r.unavailable = tr("not following sweeps: %1").arg(store.readOnlyReason());
                return r;
            }
            core::TickReport report;
            try {
                if (!state->schema) {
                    auto schema = core::TrainerSchema::load();
                    if (!schema) {
                        r.unavailable = tr("not following sweeps: %1").arg(schema.problem());
                        return r;
                    }
                    state->schema = std::move(*schema);
                }
                if (state->boundTo != &store) {
                    remote::SweepOperations::Options options;
                    options.connections = state->source;
                    options.schema = state->schema;
                    options.follower = core::followerForPace(kPace.slowMs);
                    options.settle = remote::Settle::Return;
                    state->ops = std::make_unique<remote::SweepOperations>(store, options);
                    state->boundTo = &store;
                    state->quietTicks = 0;
                }
                report = state->ops->followActive();
            } catch (const std::exception &e) {
                report.errors.push_back(QString::fromUtf8(e.what()));
            }
            FollowSummary &s = r.summary;
            s.active = report.active;
            s.running = report.running;
            s.points = report.points;
            s.bytes = report.bytes;
            s.backlog = report.moreToRead;
            s.events = report.events;
            s.errors = report.errors;
            s.notices = report.notices;
            // The spec's `notify:` targets, on a pool thread: a slow webhook must not hold up the
            // store writer. A failure is logged (the window's own notification still shows).
            for (const core::Notice &n : report.notices)
                if (n.target)
                    QThreadPool::globalInstance()->start([n] {
                        const remote::NotifyResult d = remote::deliverNotice(*n.target, n);
                        if (!d.ok)
                            qWarning("%s", qPrintable(d.error));
                    });
            for (const core::SweepLease &l : report.followedElsewhere)
                s.elsewhere.push_back(l.holder);
            s.atMs = QDateTime::currentMSecsSinceEpoch();
            r.nextMs = core::nextTickIntervalMs(report, kPace, state->quietTicks);
            return r;
        },
        [this, generation = m_generation](Result r) {
            if (generation != m_generation)
                return;  // stopped or started afresh meanwhile
            m_inFlight = false;
            if (!r.unavailable.isEmpty()) {
                stop();
                Q_EMIT unavailable(r.unavailable);
                return;
            }
            m_timer.start(r.nextMs);
            Q_EMIT ticked(r.summary);
        });
}

}  // namespace orrery::gui
