// SPDX-License-Identifier: GPL-3.0-or-later
//
// Delivering a sweep's notices (core/notice.h) where `notify:` or `--notify` says
// (docs/sweeps.md "Notifications"): to a command on this machine, run with its words as they are
// (no shell) and the notice's JSON on stdin, or as an HTTP POST of the same JSON to a URL
// (Content-Type application/json; one retry; http and, where Qt has TLS, https). A delivery that
// fails is reported, never thrown: a notification must not fail the sweep or its follower.
//
// Blocking (a process or an HTTP round trip, bounded by the timeout): call it off the UI thread.
// Uses a local event loop for HTTP, so the calling thread needs none of its own.
#pragma once

#include "orrery/core/notice.h"

#include <QString>

namespace orrery::remote {

struct NotifyResult {
    bool ok = true;
    QString error;  // what went wrong, naming the command or URL
};

// How long one delivery may take: a command's run, or one HTTP attempt.
constexpr int kNotifyTimeoutMs = 10000;

NotifyResult deliverNotice(const core::NotifyTarget &target, const core::Notice &notice,
                           int timeoutMs = kNotifyTimeoutMs);

}  // namespace orrery::remote
