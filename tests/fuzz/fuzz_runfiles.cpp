// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer targets for the readers of files a run writes without Orrery (core/runfiles.h):
// TensorBoard event files (ORRERY_FUZZ_TARGET=tfevents, tfevents.h) and W&B's .wandb log
// (ORRERY_FUZZ_TARGET=wandb, wandbrun.h). Besides "no crash, no leak, no UB": a reader consumes no
// more than it was given, and reading a prefix then the rest from where it stopped gives what
// reading the whole gives (a file cut anywhere is never read torn).
#include "fuzzsupport.h"
#include "orrery/core/tfevents.h"
#include "orrery/core/wandbrun.h"

#include <cstddef>
#include <cstdint>

using orrery::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace orrery::core;
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const qsizetype cut = input.isEmpty() ? 0 : qsizetype(std::uint8_t(input.back())) * input.size() / 256;
    switch (orrery::fuzz::target({"tfevents", "wandb"})) {
    case 0: {
        const TfEventsChunk whole = parseTfEvents(input);
        check(whole.consumed >= 0 && whole.consumed <= input.size());
        const TfEventsChunk head = parseTfEvents(QByteArrayView(input).first(cut));
        check(head.consumed <= cut);
        if (head.problems.isEmpty() && whole.problems.isEmpty()) {
            const TfEventsChunk tail = parseTfEvents(QByteArrayView(input).sliced(head.consumed));
            check(head.points.size() + tail.points.size() == whole.points.size());
        }
        break;
    }
    case 1: {
        const WandbLog whole = readWandbLog(input, 0);
        check(whole.consumed >= 0 && whole.consumed <= input.size());
        WandbRun run;
        for (const QByteArray &record : whole.records)
            applyWandbRecord(record, run);
        const WandbLog head = readWandbLog(QByteArrayView(input).first(cut), 0);
        check(head.consumed <= cut);
        if (head.problems.isEmpty() && whole.problems.isEmpty() && head.consumed > 0) {
            const WandbLog tail = readWandbLog(QByteArrayView(input).sliced(head.consumed), head.consumed);
            check(head.records.size() + tail.records.size() == whole.records.size());
        }
        break;
    }
    }
    return 0;
}
