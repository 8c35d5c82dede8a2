// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/remote/session.h"

#include <QByteArray>
#include <QFuture>
#include <QPromise>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <type_traits>

namespace orrery::remote {

struct ConnectionOptions {
    // Reconnecting: `attempts` tries, waiting firstDelay, then twice as long each time (capped at
    // maxDelay). Host-key and authentication failures are never retried: they need a person.
    int reconnectAttempts = 4;
    std::chrono::milliseconds firstDelay{250};
    std::chrono::milliseconds maxDelay{8'000};
    // An idle connection is probed this often (OpenSSH's ServerAliveInterval is the same idea);
    // a dead one is dropped and reopened on the next call. 0: never.
    std::chrono::milliseconds keepaliveInterval{30'000};
};

// A handle on one cluster connection. It owns a worker thread, and that thread alone owns the
// Session (libssh sessions are not thread-safe); every call is queued to it and returns a QFuture:
// block on result() from a worker, or continue on the UI thread without blocking it (the GUI's
// thenIfAlive(): Qt 6.4's `.then(context, ...)` races with the context's deletion). A failure is
// the RemoteError, rethrown by result() / waitForFinished(). Calls may come from any thread. Exec
// calls queued together run at once, as channels of the one session. The session connects on the
// first call; when the connection has died (keepalive, or a channel that cannot be opened) the next
// call reconnects with backoff, and a call that failed before anything ran remotely is retried
// once, transparently. The destructor stops the worker and waits for it; calls still queued fail
// with Kind::Connect.
class Connection {
public:
    explicit Connection(Endpoint endpoint, AuthCallbacks callbacks = {}, ConnectionOptions options = {});
    ~Connection();
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    // Connects now (normally the first call does). The future throws the RemoteError.
    QFuture<void> connect();

    QFuture<ExecResult> exec(const QByteArray &commandLine,
                             std::chrono::milliseconds timeout = std::chrono::seconds(60));
    // With stdin (Session::Command::input). Like any exec, it is sent again after a reconnect
    // only when it never started remotely, so the input is never delivered twice.
    QFuture<ExecResult> exec(Session::Command command);

    // Runs `f(Session &)` on the owner thread (SFTP work, several steps in a row). `f` must not
    // keep the Session reference. Like an exec, it is run once more from the start when the
    // connection turned out dead before its first remote command: keep such tasks idempotent
    // (mkdir -p, an atomic write, a read).
    template<typename F>
    auto run(F f) -> QFuture<std::invoke_result_t<F &, Session &>>
    {
        using R = std::invoke_result_t<F &, Session &>;
        auto promise = std::make_shared<QPromise<R>>();
        QFuture<R> future = promise->future();
        promise->start();
        post(
            [promise, f = std::move(f)](Session &session) mutable {
                if constexpr (std::is_void_v<R>)
                    f(session);
                else
                    promise->addResult(f(session));
                promise->finish();
            },
            [promise](std::exception_ptr error) {
                promise->setException(error);
                promise->finish();
            });
        return future;
    }

    // Remote commands sent so far (what a poll tick costs; the tests count them).
    quint64 commandCount() const;
    // Connects made so far (1 after the first call; more after reconnects).
    int connectCount() const;
    bool isConnected() const;
    const Endpoint &endpoint() const;

private:
    void post(std::function<void(Session &)> task, std::function<void(std::exception_ptr)> fail);

    struct Worker;
    std::unique_ptr<Worker> d;
};

}  // namespace orrery::remote
