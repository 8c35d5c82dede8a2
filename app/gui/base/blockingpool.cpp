// SPDX-License-Identifier: GPL-3.0-or-later
#include "blockingpool.h"

#include <QThreadPool>

namespace orrery::gui {

QThreadPool *blockingPool()
{
    // Threads mostly wait: more of them than cores, so one silent cluster does not hold up the
    // work for another. Created on first use, joined at exit.
    static QThreadPool *pool = [] {
        auto *p = new QThreadPool;
        p->setObjectName(QStringLiteral("orrery-blocking"));
        p->setMaxThreadCount(16);
        p->setExpiryTimeout(60'000);
        return p;
    }();
    return pool;
}

}  // namespace orrery::gui
