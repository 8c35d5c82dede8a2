// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer targets for the store's parsers (ORRERY_FUZZ_TARGET selects one): events, the
// events.jsonl line parser (core/src/events.cpp, simdjson); chunk, the metric chunk decoder
// (core/src/metricseries.cpp). Besides "no crash, no leak, no UB" each checks what the ingest relies on.
#include "fuzzsupport.h"
#include "orrery/core/events.h"
#include "orrery/core/metricseries.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using orrery::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    switch (orrery::fuzz::target({"events", "chunk"})) {
    case 0: {
        // The ingest hands the parser one line with padding behind it.
        std::string buffer(reinterpret_cast<const char *>(data), size);
        buffer.append(orrery::core::EventParser::kPadding, ' ');
        static orrery::core::EventParser parser;
        orrery::core::Event ev;
        const std::string error = parser.parse(std::string_view(buffer.data(), size), buffer.size(), ev);
        if (error.empty()) {
            // A metrics event always has a step; every value was read from the line.
            if (ev.kind == orrery::core::EventKind::Metrics)
                check(ev.hasStep);
            for (const auto &[name, value] : ev.values)
                check(name.size() <= size);
        }
        break;
    }
    case 1: {
        const std::string_view bytes(reinterpret_cast<const char *>(data), size);
        std::vector<orrery::core::MetricPoint> points;
        if (orrery::core::decodeChunk(bytes, points)) {
            // What decodes survives an encode/decode round trip bit for bit (NaN payloads included).
            std::vector<orrery::core::MetricPoint> again;
            check(orrery::core::decodeChunk(orrery::core::encodeChunk(points), again));
            check(again.size() == points.size());
            for (std::size_t i = 0; i < points.size(); ++i)
                check(again[i].step == points[i].step && again[i].timeMs == points[i].timeMs &&
                      std::memcmp(&again[i].value, &points[i].value, 8) == 0);
        }
        // Merging never loses steps or leaves duplicates.
        std::vector<orrery::core::MetricPoint> series;
        orrery::core::mergeSeries(series, points);
        for (std::size_t i = 1; i < series.size(); ++i)
            check(series[i - 1].step < series[i].step);
        break;
    }
    }
    return 0;
}
