// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/connection.h"

#include "logging.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace orrery::remote {

namespace {

// One queued call: an exec (batched with its neighbours into one execMany) or a task.
struct Item {
    std::optional<Session::Command> command;
    std::shared_ptr<QPromise<ExecResult>> execPromise;
    std::function<void(Session &)> task;
    std::function<void(std::exception_ptr)> fail;

    void failWith(std::exception_ptr error) const
    {
        if (execPromise) {
            execPromise->setException(error);
            execPromise->finish();
        } else {
            fail(error);
        }
    }
};

bool needsAPerson(const RemoteError &e)
{
    return e.kind() == RemoteError::Kind::HostKeyChanged || e.kind() == RemoteError::Kind::HostKeyUnknown ||
        e.kind() == RemoteError::Kind::Auth;
}

}  // namespace

struct Connection::Worker {
    Endpoint endpoint;
    ConnectionOptions options;
    Session session;  // touched by `thread` only (after construction)

    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Item> queue;
    bool stopping = false;

    std::atomic<int> connects{0};
    std::atomic<bool> connected{false};
    std::thread thread;

    Worker(Endpoint e, AuthCallbacks callbacks, ConnectionOptions o)
        : endpoint(e), options(o), session(std::move(e), std::move(callbacks))
    { }

    // Connects with backoff; throws the last error. Never retries what a person must fix.
    void ensureConnected()
    {
        if (session.isConnected())
            return;
        auto delay = options.firstDelay;
        for (int attempt = 1;; ++attempt) {
            try {
                session.connect();
                connects.fetch_add(1);
                connected = true;
                if (attempt > 1 || connects > 1)
                    qCInfo(lcRemote) << session.where() << "connected after" << attempt << "attempt(s)";
                return;
            } catch (const RemoteError &e) {
                if (needsAPerson(e) || attempt >= std::max(1, options.reconnectAttempts))
                    throw;
                qCInfo(lcRemote) << e.message() << "- retrying in" << delay.count() << "ms";
            }
            std::unique_lock lock(mutex);
            if (wake.wait_for(lock, delay, [this] { return stopping; }))
                throw RemoteError(RemoteError::Kind::Connect,
                                  QStringLiteral("%1: connection closed").arg(session.where()), false);
            delay = std::min(delay * 2, options.maxDelay);
        }
    }

    // Runs `body` connected; once more after a reconnect if the connection turned out dead
    // before anything ran remotely.
    template<typename Body>
    void connectedRun(Body body)
    {
        for (int attempt = 0;; ++attempt) {
            ensureConnected();
            const quint64 before = session.commandCount();
            try {
                body();
                return;
            } catch (const RemoteError &e) {
                const bool nothingRan = !e.commandStarted() && session.commandCount() == before;
                if (attempt > 0 || !nothingRan || e.kind() != RemoteError::Kind::Connect)
                    throw;
                qCInfo(lcRemote) << e.message() << "- reconnecting";
                session.disconnect();
            }
        }
    }

    void runBatch(std::vector<Item> &execs)
    {
        if (execs.empty())
            return;
        QList<Session::Command> batch;
        for (const Item &item : execs)
            batch.append(*item.command);
        try {
            QList<Session::Outcome> outcomes;
            connectedRun([&] { outcomes = session.execMany(batch); });
            for (size_t i = 0; i < execs.size(); ++i) {
                Session::Outcome &o = outcomes[static_cast<qsizetype>(i)];
                QPromise<ExecResult> &promise = *execs[i].execPromise;
                if (o.error)
                    promise.setException(std::make_exception_ptr(*o.error));
                else
                    promise.addResult(std::move(o.result));
                promise.finish();
            }
        } catch (...) {
            for (const Item &item : execs)
                item.failWith(std::current_exception());
        }
        execs.clear();
    }

    void runTask(const Item &item)
    {
        try {
            connectedRun([&] { item.task(session); });
        } catch (...) {
            item.failWith(std::current_exception());
        }
    }

    void loop()
    {
        auto lastUse = std::chrono::steady_clock::now();
        for (;;) {
            std::deque<Item> items;
            {
                std::unique_lock lock(mutex);
                const auto keepalive = options.keepaliveInterval;
                auto ready = [this] { return stopping || !queue.empty(); };
                if (keepalive.count() > 0)
                    wake.wait_until(lock, lastUse + keepalive, ready);
                else
                    wake.wait(lock, ready);
                if (stopping)
                    break;
                items.swap(queue);
            }
            if (items.empty()) {
                // Idle for a keepalive interval: probe, so a dead link is found before a call.
                if (session.isConnected() && !session.ping())
                    qCInfo(lcRemote) << session.where() << "connection lost; reconnecting on the next call";
                connected = session.isConnected();
                lastUse = std::chrono::steady_clock::now();
                continue;
            }
            // Consecutive execs go out together as channels of the one session.
            std::vector<Item> execs;
            for (Item &item : items) {
                if (item.command) {
                    execs.push_back(std::move(item));
                    continue;
                }
                runBatch(execs);
                runTask(item);
            }
            runBatch(execs);
            connected = session.isConnected();
            lastUse = std::chrono::steady_clock::now();
        }
        session.disconnect();
        connected = false;
        std::deque<Item> left;
        {
            std::lock_guard lock(mutex);
            left.swap(queue);
        }
        const auto closed = std::make_exception_ptr(RemoteError(
            RemoteError::Kind::Connect, QStringLiteral("%1: connection closed").arg(session.where()), false));
        for (const Item &item : left)
            item.failWith(closed);
    }

    void push(Item item)
    {
        {
            std::lock_guard lock(mutex);
            if (!stopping) {
                queue.push_back(std::move(item));
                wake.notify_all();
                return;
            }
        }
        item.failWith(std::make_exception_ptr(
            RemoteError(RemoteError::Kind::Connect, QStringLiteral("connection closed"), false)));
    }
};

Connection::Connection(Endpoint endpoint, AuthCallbacks callbacks, ConnectionOptions options)
    : d(std::make_unique<Worker>(std::move(endpoint), std::move(callbacks), options))
{
    d->thread = std::thread([this] { d->loop(); });
}

Connection::~Connection()
{
    {
        std::lock_guard lock(d->mutex);
        d->stopping = true;
    }
    d->wake.notify_all();
    d->thread.join();
}

QFuture<void> Connection::connect()
{
    return run([](Session &) {});
}

QFuture<ExecResult> Connection::exec(const QByteArray &commandLine, std::chrono::milliseconds timeout)
{
    return exec(Session::Command{commandLine, timeout, {}});
}

QFuture<ExecResult> Connection::exec(Session::Command command)
{
    Item item;
    item.command = std::move(command);
    item.execPromise = std::make_shared<QPromise<ExecResult>>();
    QFuture<ExecResult> future = item.execPromise->future();
    item.execPromise->start();
    d->push(std::move(item));
    return future;
}

void Connection::post(std::function<void(Session &)> task, std::function<void(std::exception_ptr)> fail)
{
    Item item;
    item.task = std::move(task);
    item.fail = std::move(fail);
    d->push(std::move(item));
}

quint64 Connection::commandCount() const
{
    return d->session.commandCount();
}

int Connection::connectCount() const
{
    return d->connects;
}

bool Connection::isConnected() const
{
    return d->connected;
}

const Endpoint &Connection::endpoint() const
{
    return d->endpoint;
}

}  // namespace orrery::remote
