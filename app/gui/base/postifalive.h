// SPDX-License-Identifier: GPL-3.0-or-later
//
// Handing work from a worker thread back to a GUI object that the UI thread may delete at any
// moment meanwhile:
//
//     QPointer<Panel> self(this);  // made on the UI thread, while `this` surely lives
//     (void)QtConcurrent::run(blockingPool(), [self] {
//         Result r = compute();
//         postIfAlive(self, [r](Panel *p) { p->show(r); });
//     });
//
// The receiver is looked at on its own thread only: the call is posted to `via` (the application
// object, or another object on the receiver's thread that outlives the work) and runs there if
// the receiver still lives. Looking at the QPointer on the worker thread and posting to the
// receiver itself is a race: deleted between the look and the post, it is sent an event it can
// no longer take (a SIGSEGV in QApplicationPrivate::notify_helper; tst_post_back).
//
// thenIfAlive() is `future.then(receiver, done).onFailed(receiver, failed)` without that race:
// Qt 6.4's then() with a context (Debian 12's Qt) looks at the context's QPointer on the thread
// that finishes the future and posts to the context, the very pattern above.
#pragma once

#include <QCoreApplication>
#include <QFuture>
#include <QPointer>

#include <cstddef>
#include <exception>
#include <type_traits>
#include <utility>

namespace orrery::gui {

template<class T, class F>
void postIfAlive(QPointer<T> receiver, F f, QObject *via = QCoreApplication::instance())
{
    QMetaObject::invokeMethod(
        via,
        [receiver = std::move(receiver), f = std::move(f)]() mutable {
            if (T *r = receiver.data())
                f(r);
        },
        Qt::QueuedConnection);
}

// When `future` finishes: done(result) (done() for a QFuture<void>) on the receiver's thread if
// the receiver still lives; where it threw, failed(exception) instead, or a warning where no
// `failed` is given. A cancelled future calls neither (as then() and onFailed()).
template<class T, class R, class Done, class Failed = std::nullptr_t>
void thenIfAlive(QFuture<T> future, R *receiver, Done done, Failed failed = nullptr)
{
    QPointer<R> guard(receiver);
    future.then(QtFuture::Launch::Sync, [guard, done, failed](QFuture<T> finished) {
        postIfAlive(guard, [done, failed, finished](R *) mutable {
            try {
                if constexpr (std::is_void_v<T>) {
                    finished.waitForFinished();  // rethrows what the work threw
                    done();
                } else {
                    done(finished.result());
                }
            } catch (const std::exception &e) {
                if constexpr (std::is_null_pointer_v<Failed>) {
                    (void)failed;
                    qWarning("%s", e.what());
                } else {
                    failed(e);
                }
            }
        });
    });
}

}  // namespace orrery::gui
