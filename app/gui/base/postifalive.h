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
// no longer take (a SIGSEGV in QApplicationPrivate::notify_helper; tst_store_threads).
#pragma once

#include <QCoreApplication>
#include <QPointer>

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

}  // namespace orrery::gui
