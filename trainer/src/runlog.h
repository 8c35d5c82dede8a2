// SPDX-License-Identifier: GPL-3.0-or-later
//
// The run directory's event log (events.jsonl, format: ARCHITECTURE.md) and exit.json. Written by
// rank 0 only; every line is flushed whole, so a reader never sees half an event unless the
// process dies mid-write (and readers skip an incomplete last line).
//
// A full disk loses no event: what write() refused (ENOSPC, EDQUOT) stays in memory, in order, and
// goes out before the next line once there is room (up to kMaxPendingBytes; past that, new lines
// are dropped and a warning says how many when the disk takes them again). A file that ends in
// part of a line (an earlier process died writing it) gets a newline first, so that part is one
// malformed line a reader skips, not glued to this process's first event.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orrery::train {

class RunLog {
public:
    // enabled == false (ranks other than 0): every call is a no-op.
    RunLog(const std::string &runDir, bool enabled);
    ~RunLog();
    RunLog(const RunLog &) = delete;
    RunLog &operator=(const RunLog &) = delete;

    void start(const nlohmann::json &run);
    void metrics(std::int64_t step, const std::vector<std::pair<std::string, double>> &values);
    // No step: readers give it the last training step (ARCHITECTURE.md).
    void system(const std::vector<std::pair<std::string, double>> &values);
    void artifact(std::int64_t step, const std::string &relativePath, const std::string &type);
    void status(const std::string &state, const std::string &message = {});
    // Something the user should know that did not stop the run (a corrupt video skipped).
    void warning(const std::string &message);
    // The run's tags, {"key": "value"} (the store sets them as MLflow's set_tag does).
    void tags(const nlohmann::json &tags);
    // Where this process's time went so far (PhaseClock::values), at `step` (docs/trainer.md).
    void phases(std::int64_t step, const nlohmann::json &values);
    // exit.json, written atomically (temp file, fsync, rename); `more`: further fields (a failed
    // run's cause, node and rank: faults.h).
    void exit(const std::string &state, const std::string &reason, std::int64_t step,
              const nlohmann::json &more = nlohmann::json::object());

    static constexpr std::size_t kMaxPendingBytes = 16u << 20;
    // Bytes waiting for room on the disk (tests).
    std::size_t pendingBytes() const { return m_pending.size(); }

private:
    void write(nlohmann::json line);
    void drain();
    std::string m_dir;
    int m_fd = -1;
    std::string m_pending;  // whole lines not yet written, in order
    std::int64_t m_dropped = 0;  // lines past kMaxPendingBytes
};

// Writes `bytes` to `path` atomically: a temp file beside it, fsync, rename, fsync the directory.
void writeFileAtomically(const std::string &path, const std::string &bytes);

// Unix seconds, to the millisecond (the "t" of events, exit.json and fault records).
double unixNow();

// A non-finite value as ARCHITECTURE.md spells it ("nan", "inf", "-inf"), else the number.
nlohmann::json jsonValue(double v);

}  // namespace orrery::train
