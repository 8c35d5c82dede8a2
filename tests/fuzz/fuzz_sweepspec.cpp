// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target for the sweep spec parser (core/src/sweepspec_*.cpp) against the trainer's
// schema (tests/data/trainer-schema.json). Besides "no crash, no leak, no UB": a parse either
// gives a spec or errors, never both; every error has a message on one line; a parsed spec's
// trials can be expanded and written as trial.yaml.
#include "fuzzsupport.h"
#include "orrery/core/sweepsearch.h"
#include "orrery/core/sweepspec.h"

#include <QFile>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

namespace {

using orrery::fuzz::check;

std::optional<orrery::core::TrainerSchema> g_schema;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    QFile f(QStringLiteral(ORRERY_FUZZ_SCHEMA));
    check(f.open(QIODevice::ReadOnly));
    auto schema = orrery::core::TrainerSchema::fromJson(f.readAll());
    check(schema.ok());
    g_schema = std::move(*schema);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace orrery::core;
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const SpecParse p = parseSweepSpec(input, QStringLiteral("fuzz.yaml"), *g_schema);
    check(p.spec.has_value() == p.errors.isEmpty());
    for (const SpecError &e : p.errors) {
        if (e.message.isEmpty() || e.message.contains(QLatin1Char('\n')))
            std::fprintf(stderr, "bad error message at line %d: [%s]\n", e.line, qPrintable(e.message));
        check(!e.message.isEmpty() && !e.message.contains(QLatin1Char('\n')));
    }
    if (p.spec) {
        SweepSpec spec = *p.spec;
        spec.runCap = std::min(spec.runCap, 16);  // bounded work per input
        if (spec.method == SearchMethod::Grid && spec.runCap == 0)
            spec.runCap = 16;
        for (const TrialParams &t : initialTrials(spec)) {
            check(t.size() == spec.parameters.size());
            check(!renderTrialConfig({}, QStringLiteral("base.yaml"), t).isEmpty());
        }
    }
    return 0;
}
