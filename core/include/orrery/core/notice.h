// SPDX-License-Identifier: GPL-3.0-or-later
//
// Notices: what a sweep's follower tells a person about, as data (docs/sweeps.md
// "Notifications"). The runner (sweeprunner.h) produces one per event, on the follower that holds
// the sweep's lease, so each is produced once however many follow; the faces deliver them (the
// CLI to a `notify:` command or URL through remote/notify.h, the window to the desktop).
//
// Plain data; safe from any thread.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>

namespace orrery::core {

// Where notices go (`notify:` in a spec, `--notify` on the command line): a command run with the
// notice as JSON on stdin (its words, no shell), or a URL the notice is POSTed to.
struct NotifyTarget {
    QStringList command;  // program and arguments; empty for a URL
    QString url;  // http:// or https://; empty for a command
    bool operator==(const NotifyTarget &) const = default;
};

struct Notice {
    enum class Kind : std::uint8_t {
        SweepEnded,  // the sweep ended: finished, failed or cancelled
        TrialFailed,  // a trial failed for good (not resubmitted)
        TrialHung,  // a hung trial was ended (and resubmitted, where the rule allows)
        BudgetStopped,  // the sweep's budget stopped it
    };
    Kind kind = Kind::SweepEnded;
    qint64 sweepId = 0;
    QString sweep;  // its name
    QString state;  // the sweep's state (sweep_ended, budget_stopped) or the trial's
    std::optional<int> trial;  // the trial's index, for trial notices
    QString message;  // the one line a person reads
    qint64 timeMs = 0;  // unix ms, this machine's clock
    // Where the sweep's spec says to send it (`notify:`); nullopt: the spec names nowhere (a face
    // may still send it where its user asked: `--notify`, the desktop). Not part of the JSON.
    std::optional<NotifyTarget> target;
};

// "sweep_ended", "trial_failed", "trial_hung", "budget_stopped".
QString toText(Notice::Kind kind);
// The notice as one JSON object (compact, UTF-8), what a notify command reads on stdin and a
// webhook receives:
//   {"v":1,"kind":"trial_hung","sweep_id":4,"sweep":"tiny-lr","state":"failed","trial":3,
//    "message":"trial 3 hung: no progress for 12m (hang_timeout 10m); resubmitted (attempt 2)",
//    "time":"2026-11-26T01:02:03.000Z","t":1795654923.0}
// "trial" is left out of sweep notices; "t" is unix seconds.
QByteArray toJson(const Notice &notice);
// The title and body a desktop notification shows ("Orrery: tiny-lr", the message).
QString noticeTitle(const Notice &notice);

}  // namespace orrery::core
