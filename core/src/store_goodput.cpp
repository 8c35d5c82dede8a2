// SPDX-License-Identifier: GPL-3.0-or-later
//
// The store's half of goodput: phase records of trainer processes (run_phases, schema v9), kept
// from `phases` events by ingest and read back for goodput.h.
#include "orrery/core/events.h"
#include "storeimpl.h"

#include <cmath>

namespace orrery::core {

using sql::Stmt;

void StoreImpl::recordPhases(qint64 run, const Event &ev, qint64 timeMs)
{
    double processStart = 0, resume = 0, checkpoint = 0;
    double seconds[6] = {};
    static constexpr std::string_view kNames[6] = {"startup_s", "train_s",  "checkpoint_s",
                                                   "eval_s",    "sample_s", "other_s"};
    for (const auto &[name, value] : ev.values) {
        if (!std::isfinite(value))
            continue;
        if (name == "process_start")
            processStart = value;
        else if (name == "resume_step")
            resume = value;
        else if (name == "checkpoint_step")
            checkpoint = value;
        for (int i = 0; i < 6; ++i)
            if (name == kNames[i])
                seconds[i] = std::max(0.0, value);
    }
    if (processStart <= 0)
        return;  // not one process's record: nothing to key it by
    // A newer event of the same process replaces the row; an older one never does (the events
    // are cumulative, so the newest holds everything).
    Stmt &s =
        stmt("INSERT INTO run_phases (run_id, process_start, updated, step, resume_step, checkpoint_step, "
             "startup_s, train_s, checkpoint_s, eval_s, sample_s, other_s) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, process_start) DO UPDATE SET "
             "updated = excluded.updated, step = excluded.step, resume_step = excluded.resume_step, "
             "checkpoint_step = excluded.checkpoint_step, startup_s = excluded.startup_s, "
             "train_s = excluded.train_s, checkpoint_s = excluded.checkpoint_s, eval_s = excluded.eval_s, "
             "sample_s = excluded.sample_s, other_s = excluded.other_s "
             "WHERE excluded.updated >= run_phases.updated");
    s.bind(1, run)
        .bind(2, qint64(std::llround(processStart * 1000.0)))
        .bind(3, timeMs)
        .bind(4, qint64(ev.hasStep ? ev.step : 0))
        .bind(5, qint64(std::llround(resume)))
        .bind(6, qint64(std::llround(checkpoint)));
    for (int i = 0; i < 6; ++i)
        s.bind(7 + i, seconds[i]);
    s.exec();
}

QList<ProcessPhases> IngestBook::runPhases(RunId run) const
{
    return d->guarded("runPhases", [&] {
        QList<ProcessPhases> out;
        Stmt &s = d->stmt("SELECT process_start, updated, step, resume_step, checkpoint_step, startup_s, "
                          "train_s, checkpoint_s, eval_s, sample_s, other_s FROM run_phases WHERE run_id = ? "
                          "ORDER BY process_start");
        s.bind(1, run);
        while (s.step()) {
            ProcessPhases p;
            p.processStartMs = s.int64(0);
            p.updatedMs = s.int64(1);
            p.step = s.int64(2);
            p.resumeStep = s.int64(3);
            p.checkpointStep = s.int64(4);
            p.startupS = s.real(5);
            p.trainS = s.real(6);
            p.checkpointS = s.real(7);
            p.evalS = s.real(8);
            p.sampleS = s.real(9);
            p.otherS = s.real(10);
            out.push_back(p);
        }
        s.reset();
        return out;
    });
}

}  // namespace orrery::core
