// SPDX-License-Identifier: GPL-3.0-or-later
//
// The right dock: the current run's details, what a triage needs first — the run (its baseline
// star, note and sweep), for a failed run the last lines of its failed attempt's stderr, the
// latest metrics (the sweep's metric first), the sweep's swept params (marked), each attempt's
// state, exit reason, nodes and what the executor said; then the other params grouped by prefix
// (collapsed: a command sweep logs dozens), its GPU-hours and cost and where its wall time went
// (goodput: the same figures as `orrery runs show` and `runs goodput`), artifacts and tags.
// Read on the store reader (the stderr tail of a local run too: a small read of its run dir);
// shown when the read comes back. A cluster's stderr is not fetched here: the dock says where it
// is and offers the log window (logsRequested).
#pragma once

#include "orrery/core/goodput.h"
#include "orrery/core/store.h"
#include "orrery/core/usage.h"

#include <QTreeWidget>

namespace orrery::gui {

class StoreReader;

class DetailsView : public QTreeWidget {
    Q_OBJECT
public:
    explicit DetailsView(StoreReader *reader, QWidget *parent = nullptr);

    void showRun(core::RunId run);  // 0: nothing
    core::RunId run() const { return m_run; }
    QString noteShown() const { return m_note; }  // the shown run's note (kNoteTag)

    // Lines of stderr shown for a failed attempt: a Python traceback's last frames and its error.
    static constexpr int kStderrLines = 20;

Q_SIGNALS:
    void shown(core::RunId run);
    // The user asked for the log window of an attempt (double-click on the stderr lines).
    void logsRequested(core::SweepId sweep, int trial, int attempt);

private:
    struct Read {
        core::RunDetails details;
        QList<core::Trial> attempts;
        std::optional<core::Sweep> sweep;  // the run's sweep, when it is a trial's
        QStringList swept;  // its swept params (core::sweptParams), in spec order
        // The failed attempt whose stderr is shown (the latest failed one), its file and last
        // lines (local runs; empty where the file is on a cluster or missing).
        std::optional<core::Trial> failed;
        QString stderrPath;
        QStringList stderrTail;
        QString stderrProblem;  // why no lines are shown
        core::Usage usage;
        std::optional<core::Price> price;  // its sweep's cluster's
        core::RunGoodput goodput;
    };
    static void readStderrTail(Read &r);  // on the reader's thread
    void fill(const Read &read);
    void fitFieldColumn();

    StoreReader *m_reader;
    core::RunId m_run = 0;
    QString m_note;
};

}  // namespace orrery::gui
