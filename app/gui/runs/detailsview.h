// SPDX-License-Identifier: GPL-3.0-or-later
//
// The right dock: the current run's details, what a triage needs first — the run (its baseline
// star, note and sweep), for a failed run the last lines of its failed attempt's stderr, the
// latest metrics (the sweep's metric first), the sweep's swept params (marked), each attempt's
// state, exit reason, nodes and what the executor said; then the other params grouped by prefix
// (collapsed: a command sweep logs dozens), its GPU-hours and cost and where its wall time went
// (goodput: the same figures as `orrery runs show` and `runs goodput`), artifacts and tags.
// Read on the store reader (the stderr tail of a local run too: a small read of its run dir);
// shown when the read comes back. A cluster run's stderr is read through its executor on a pool
// thread (the window's connection to the cluster, setConnections), as the terminal monitor's log
// view reads it (core::LogTailer): the dock says it is reading, then shows the lines. A
// failed attempt's stderr does not change, so each is read once per window; a read that failed
// says why and is tried again at a refresh kRetryMs later.
#pragma once

#include "orrery/core/goodput.h"
#include "orrery/core/store.h"
#include "orrery/core/usage.h"
#include "orrery/remote/executors.h"
#include "orrery/remote/logreader.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QSet>
#include <QTreeWidget>

#include <optional>

namespace orrery::gui {

class StoreReader;

class DetailsView : public QTreeWidget {
    Q_OBJECT
public:
    explicit DetailsView(StoreReader *reader, QWidget *parent = nullptr);

    void showRun(core::RunId run);  // 0: nothing
    core::RunId run() const { return m_run; }
    QString noteShown() const { return m_note; }  // the shown run's note (kNoteTag)
    // Where a cluster run's stderr is read from (the window's ClusterHub). Unset: the dock says
    // where the file is and offers the log window.
    void setConnections(remote::Executors::ConnectionSource connections);

    // Lines of stderr shown for a failed attempt: a Python traceback's last frames and its error.
    static constexpr int kStderrLines = 20;
    // How long a cluster read that failed (an unreachable cluster) is shown before another.
    static constexpr int kRetryMs = 30'000;

Q_SIGNALS:
    void shown(core::RunId run);
    // The user asked for the log window of an attempt (double-click on the stderr lines).
    void logsRequested(core::SweepId sweep, int trial, int attempt);

private:
    // The last lines of a failed attempt's stderr, or why there are none.
    struct StderrTail {
        QString path;
        QStringList lines;
        QString problem;
        bool read = false;  // the file was there with lines: final for a failed attempt
    };
    struct Read {
        core::RunDetails details;
        QList<core::Trial> attempts;
        std::optional<core::Sweep> sweep;  // the run's sweep, when it is a trial's
        QStringList swept;  // its swept params (core::sweptParams), in spec order
        // The failed attempt whose stderr is shown (the latest failed one), and its last lines:
        // read here for a local run; nullopt for a cluster's, which clusterStderr reads.
        std::optional<core::Trial> failed;
        std::optional<StderrTail> stderrTail;
        core::Usage usage;
        std::optional<core::Price> price;  // its sweep's cluster's
        core::RunGoodput goodput;
    };
    static void readStderrTail(Read &r);  // on the reader's thread
    // The tail of `attempt`'s stderr as `executor` reads it (blocks; a cluster's on a pool thread).
    static StderrTail tailOf(remote::LogReader &reader, const core::Sweep &sweep, const core::Trial &attempt);
    static QString attemptKey(const core::Trial &attempt);
    // A cluster run's failed attempt: its cached tail, or a read started (one per cluster at a time).
    StderrTail clusterStderr(const core::Sweep &sweep, const core::Trial &attempt);
    void fill(const Read &read);
    // fill's sections, in the dock's order.
    QTreeWidgetItem *section(const QString &title, bool expanded = true);
    void fillRun(const Read &read);
    void fillStderr(const Read &read);
    void fillMetrics(const Read &read);
    void fillParams(const Read &read);
    void fillAttempts(const Read &read);
    void fillUsage(const Read &read);
    void fillFiles(const core::RunDetails &details);
    void fitFieldColumn();

    StoreReader *m_reader;
    core::RunId m_run = 0;
    QString m_note;
    std::optional<Read> m_shown;  // what fill() last showed: shown again when a cluster read ends
    remote::Executors::ConnectionSource m_connections;
    struct ClusterRead {
        StderrTail tail;
        QDeadlineTimer retry;  // a read that failed is tried again after a while; one that did, never
    };
    QHash<QString, ClusterRead> m_clusterStderr;  // attemptKey → what was read
    QSet<QString> m_readingClusters;  // the clusters a read is in flight from: one each at a time
};

}  // namespace orrery::gui
