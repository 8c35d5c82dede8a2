// SPDX-License-Identifier: GPL-3.0-or-later
//
// Shared by the workbench's benchmarks (bench_gui, bench_runs_scale, bench_parallel): a timer's
// milliseconds, a percentile, and waiting on the event loop for a condition without spinning.
#pragma once

#include <QElapsedTimer>
#include <QEventLoop>
#include <QObject>
#include <QTimer>

#include <algorithm>
#include <functional>
#include <vector>

namespace orrery::bench {

inline double msSince(const QElapsedTimer &t)
{
    return double(t.nsecsElapsed()) / 1e6;
}

// The p-quantile (0..1) of `v`, the nearest rank at or above.
inline double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size())))];
}

// Runs the event loop until `done` holds, checking every millisecond without spinning (a busy
// wait would take a core from the store reader on a 2-core machine). False on the timeout.
inline bool waitFor(const std::function<bool()> &done, int timeoutMs = 60'000)
{
    if (done())
        return true;
    QEventLoop loop;
    QTimer check;
    check.setTimerType(Qt::PreciseTimer);
    QObject::connect(&check, &QTimer::timeout, &loop, [&] {
        if (done())
            loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, [&loop] { loop.exit(1); });
    check.start(1);
    return loop.exec() == 0;
}

}  // namespace orrery::bench
