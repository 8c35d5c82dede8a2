// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the tests that run real local sweeps share: the built programs CTest names, the trainer's
// schema read from it, and a bounded wait on a condition.
#pragma once

#include "orrery/core/sweepspec.h"

#include <QDeadlineTimer>
#include <QString>
#include <QThread>
#include <QtTest>

#include <functional>
#include <optional>
#include <utility>

namespace orrery::test {

inline QString cli()
{
    return qEnvironmentVariable("ORRERY_CLI");
}

inline QString trainer()
{
    return qEnvironmentVariable("ORRERY_TRAINER");
}

// Polls `done` every 100 ms until it holds or `timeoutMs` passes.
inline bool waitFor(const std::function<bool()> &done, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!done()) {
        if (deadline.hasExpired())
            return false;
        QThread::msleep(100);
    }
    return true;
}

// For initTestCase: both programs are named and the trainer answers with its schema.
#define ORRERY_REQUIRE_BUILT_PROGRAMS(schema)                                                                \
    do {                                                                                                     \
        if (orrery::test::cli().isEmpty() || orrery::test::trainer().isEmpty())                              \
            QFAIL("ORRERY_CLI and ORRERY_TRAINER must name the built orrery and orrery-train (CTest sets "   \
                  "them)");                                                                                  \
        auto parsed_ = orrery::core::TrainerSchema::fromTrainer(orrery::test::trainer());                    \
        QVERIFY2(parsed_, qPrintable(parsed_.problem()));                                                    \
        (schema) = std::move(*parsed_);                                                                      \
    } while (false)

}  // namespace orrery::test
