// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The trainer's config schema for sweep tests: the real `orrery-train --print-schema --json`
// (ORRERY_TRAINER, set by CTest) when the trainer is built, else the snapshot in tests/data
// taken from it (a machine without LibTorch still runs the parser tests).

#include "testsupport.h"

#include "orrery/core/sweepspec.h"

#include <QFile>
#include <QTest>

namespace orrery::test {

inline core::TrainerSchema trainerSchema()
{
    const QString trainer = qEnvironmentVariable("ORRERY_TRAINER");
    if (!trainer.isEmpty()) {
        auto schema = core::TrainerSchema::fromTrainer(trainer);
        if (!schema)
            qFatal("%s", qPrintable(schema.problem()));
        return *schema;
    }
    QFile f(sourceFile(QStringLiteral("tests/data/trainer-schema.json")));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    auto schema = core::TrainerSchema::fromJson(f.readAll());
    if (!schema)
        qFatal("%s", qPrintable(schema.problem()));
    return *schema;
}

}  // namespace orrery::test
