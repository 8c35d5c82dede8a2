// SPDX-License-Identifier: GPL-3.0-or-later
//
// The events.jsonl line parser (format: ARCHITECTURE.md). A pure function over one line; the
// ingest drives it line by line. No database, no Qt.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orrery::core {

// Phases: where a trainer process's time went so far (docs/trainer.md "Phase timings"); its
// numbers are in `values`, like a metrics event's, but they are not metrics.
enum class EventKind { Start, Metrics, System, Artifact, Status, Warning, Phases, Tags, Unknown };

// One parsed line. String views point into the parser and stay valid until its next parse().
struct Event {
    EventKind kind = EventKind::Unknown;
    std::string_view kindName;
    double time = 0;  // unix seconds
    bool hasStep = false;
    std::int64_t step = 0;
    // metrics / system: name → value (NaN and ±inf from "nan", "inf", "-inf").
    std::vector<std::pair<std::string_view, double>> values;
    // Keys of `values` whose value was neither a number nor one of those strings.
    std::vector<std::string_view> badValues;
    // start: run facts as tags, params flattened with dots ("optim.lr" → "0.0003").
    std::vector<std::pair<std::string, std::string>> runInfo;
    std::vector<std::pair<std::string, std::string>> params;
    // tags: the run's tags, as a script set them (MLflow's set_tag, captured), flattened like params.
    std::vector<std::pair<std::string, std::string>> tags;
    // artifact: path (relative to the run dir) and type; status: state and message.
    std::string_view path, type, state, message;
};

class EventParser {
public:
    EventParser();
    ~EventParser();
    EventParser(const EventParser &) = delete;
    EventParser &operator=(const EventParser &) = delete;

    // Parses one line (without its '\n'). `readable` is how many bytes after line.data() may be
    // read (the parser reads up to 64 bytes past the line; pass at least line.size() + 64, e.g.
    // by keeping padding at the end of the buffer). Returns an empty string on success, else
    // what is wrong with the line.
    std::string parse(std::string_view line, std::size_t readable, Event &out);

    // Extra bytes a buffer must hold after the last line.
    static constexpr std::size_t kPadding = 64;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace orrery::core
