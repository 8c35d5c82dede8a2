// SPDX-License-Identifier: GPL-3.0-or-later
//
// The pool for work that may block for long on the network or a lock: SSH polls, submits, log
// reads, connection tests, sweep actions. Never QThreadPool::globalInstance() for these: Qt's
// raster paint engine hands parts of a paint to the global pool and waits for them on the UI
// thread, so pool threads stuck on a silent cluster (or on an SSH question the UI thread must
// show) would freeze painting — with as many pool threads as cores (2 here), at once.
#pragma once

class QThreadPool;

namespace orrery::gui {

QThreadPool *blockingPool();

}  // namespace orrery::gui
