// SPDX-License-Identifier: GPL-3.0-or-later
//
// A task's log files read where its executor keeps them, for a face that shows logs without
// acting on a sweep (the window's log view and Details dock): this machine's files, or a
// cluster's through the executor's batched read on the caller's connection (the window's
// ClusterHub). The reads themselves are core::readLogFiles and core::LogTailer, the same as
// `orrery sweep logs` and the monitor use through SweepOperations::executor; no face opens a
// session or builds an executor for them.
//
// Connects on the first read (call it off the UI thread) and keeps the executor while it lives.
// One call at a time (the log view asks one read of all its files at a time). Failures are
// OperationError (Unavailable: the cluster cannot be reached now; Failed: anything else).
#pragma once

#include "orrery/core/logread.h"
#include "orrery/remote/executors.h"

#include <QString>

#include <memory>

namespace orrery::remote {

class SweepOperations;

class LogReader {
public:
    // `cluster` "": this machine. Without `connections`, a cluster's connection is opened here
    // (no prompts: keys and agents only).
    explicit LogReader(QString cluster, Executors::ConnectionSource connections = {});
    ~LogReader();
    LogReader(const LogReader &) = delete;
    LogReader &operator=(const LogReader &) = delete;

    QString cluster() const { return m_cluster; }
    // core::readLogFiles through this cluster's executor.
    QList<core::LogRead> read(const QList<core::LogReadJob> &jobs);
    // `tailer`'s next read of a trial's standard output and error (core::LogTailer::read).
    core::LogTail tail(core::LogTailer &tailer, const core::Sweep &sweep, const core::Trial &trial);

private:
    core::Executor &executor();

    QString m_cluster;
    Executors::ConnectionSource m_connections;
    std::unique_ptr<core::Executor> m_local;  // this machine's files: reads only, no supervisor
    std::unique_ptr<SweepOperations> m_operations;  // a cluster's executor, once connected
};

}  // namespace orrery::remote
