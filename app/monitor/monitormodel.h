// SPDX-License-Identifier: GPL-3.0-or-later
//
// The terminal monitor's model (docs/monitor.md): what `orrery monitor` shows, as plain lines of
// text with a style each, built from two snapshots (the tracking store, the cluster). No curses
// here: the view (app/cli/monitor_command.cpp) only paints the lines render() returns, so the
// layout, the keys and the degradation on small terminals are tested without a terminal.
//
// Threads: the snapshots are read on worker threads (monitorfeeds.h) and handed over by value;
// a MonitorModel itself belongs to the UI thread.
#pragma once

#include "orrery/core/logread.h"
#include "sparkline.h"

#include "orrery/core/store.h"
#include "orrery/core/sweepprogress.h"
#include "orrery/core/usage.h"
#include "orrery/remote/slurmparse.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace orrery::monitor {

// --- trials ---------------------------------------------------------------------------------

// Trials by phase (core::phaseOf): queued, running (stopping and cancelling trials included: they
// still run), done (completed, stopped early or cancelled) and failed.
struct TrialCounts {
    int done = 0, running = 0, queued = 0, failed = 0;
    int total = 0;  // distinct trial indexes
};
// Counts each trial index once, by its latest attempt (a failed attempt that is being retried
// counts as queued or running, not failed).
TrialCounts countTrials(const QList<core::Trial> &trials);

// Each run's params as one short string: only the keys whose values differ between the runs
// (all keys when none differ), each key shortened to its last dotted part where that is
// unambiguous: "lr=0.001 temporal_layers=2".
QStringList compactParams(const QList<QMap<QString, QString>> &params);

// --- snapshots ------------------------------------------------------------------------------

struct SweepSummary {
    core::Sweep sweep;
    TrialCounts counts;
    bool active = false;
    std::optional<double> best;  // the best latest value of the sweep's metric (store bestRun)
    QString bestRun;  // its name
    std::vector<double> bestHistory;  // that run's metric, downsampled to the sparkline's width
    std::optional<core::SweepProgress> progress;  // an active sweep's steps and ETA
    core::Usage usage;  // GPU-hours of all its attempts so far (core/usage.h)
    std::optional<core::Price> price;  // its cluster's price per GPU-hour (the cost beside them)
};

// A trial as the trials table shows it (from core::TrialSummary).
struct TrialRow {
    core::Trial trial;  // its latest attempt
    QString params;  // compactParams of the trials' params (Trial::params)
    std::optional<qint64> step;  // the run's latest step, any metric; nullopt: nothing logged yet
    std::optional<double> latest;  // the sweep's metric: its last value
    std::optional<double> best;  // min or max over the run, by the sweep's goal
    core::Usage usage;  // its attempts'
};

struct StoreSnapshot {
    bool valid = false;  // false: not read yet
    QString error;  // the read failed (the rest is empty)
    QString hookError;  // the beforeRefresh hook threw (the read still happened)
    qint64 takenMs = 0;
    QList<SweepSummary> sweeps;  // active first, then newest
    core::SweepId trialsOf = 0;  // whose trials `trials` holds (0: none)
    QList<TrialRow> trials;  // by index
    QString trialsWaiting;  // why its queued trials wait (core/pendingreason.h queuedSummary)
    core::LogTail logs;  // the log view's trial (MonitorFeeds::setLogsOf), read after the store
    // The outcome of a user action run on the store worker since the last snapshot (a cancel):
    // shown on the status line until the next key.
    QString actionMessage;
    bool actionFailed = false;
    // The monitor's cluster's suspect nodes (docs/sweeps.md "Bad nodes kept out"), unexpired.
    QList<core::SuspectNode> suspects;
};

// One read of the store: the sweeps (at most maxSweeps: every active one first, then the most
// recent), each with its counts, best value and the best run's history in `sparkWidth` buckets,
// and the trials of sweep `trialsOf` (0: none) from one TrackingStore::trialSummaries (a fixed
// number of queries, however many trials). Throws core::StoreError.
// `progress`, kept by the caller from one read to the next, measures the active sweeps' rates
// (without it, steps but no ETA).
StoreSnapshot readStore(const core::TrackingStore &store, core::SweepId trialsOf, int sparkWidth,
                        int maxSweeps = 50,
                        QHash<core::SweepId, core::SweepProgressTracker> *progress = nullptr);

struct ClusterSnapshot {
    QString cluster;  // the profile's name; empty: no cluster panel data (see notice)
    QString notice;  // why there is no cluster: none configured, several, ...
    bool polled = false;  // at least one poll succeeded
    remote::slurm::ClusterInfo info;  // from the last successful poll
    QList<remote::slurm::Job> queue;
    qint64 takenMs = 0;  // when that was
    QString error;  // the last poll failed: why (the data above is older)
    qint64 errorMs = 0;
    int failures = 0;  // failed polls in a row
};

// --- tables ---------------------------------------------------------------------------------

struct Table {
    QStringList header;
    QList<QStringList> rows;
    int flexColumn = -1;  // shrunk (cells cut with an ellipsis) when the table is too wide
    QList<int> dropOrder;  // columns left out, in this order, when shrinking is not enough
    QList<int> rightAligned;  // numeric columns
};

// Column layout of `table` in `width` cells: the header line, then one line per row. Columns are
// two spaces apart, padded to their widest cell; when too wide, the flex column shrinks (to 8 at
// least), then the dropOrder columns go, then every line is cut. `ellipsis` marks a cut cell.
QStringList layoutTable(const Table &table, int width, const QString &ellipsis);

Table partitionTable(const ClusterSnapshot &cluster, Glyphs glyphs);
// The nodes; those in `suspects` (the store's, for this cluster) marked with why, in a last column.
Table nodeTable(const ClusterSnapshot &cluster, const QList<core::SuspectNode> &suspects = {});
Table queueTable(const ClusterSnapshot &cluster);
Table sweepTable(const StoreSnapshot &store, int sparkWidth, Glyphs glyphs);
Table trialTable(const StoreSnapshot &store);

// A metric value in at most 10 characters: 4 significant digits ("0.1234", "1.235e-05"), "nan".
QString formatValue(double value);
// Megabytes as "512M", "15.6G", "1.5T".
QString formatMegabytes(qint64 mb);
// "[####......]": `used` of `total` in `width` cells (including the brackets).
QString usageBar(int used, int total, int width, Glyphs glyphs);

// --- the screen -----------------------------------------------------------------------------

enum class Style {
    Normal,
    Title,  // the top bar
    Heading,  // a panel's name line (Focused: the panel with the keyboard)
    Focused,
    ColumnHeader,
    Selected,  // the selected row of the focused panel
    Dim,  // notices, "… 3 more"
    Error,
    Help,  // the bottom line
};
struct ScreenLine {
    QString text;  // at most `width` cells
    Style style = Style::Normal;
};

enum class Panel { Cluster, Sweeps };
enum class Key {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Left,
    Right,
    Tab,
    Enter,
    Back,
    Refresh,
    Quit,
    Help,
    Cancel,  // c: cancel the selected sweep (asks first)
    Logs,  // l: the selected trial's logs
    Yes,  // y: answers the confirmation
    Other,  // any other key (answers a confirmation with no)
};

// A log line made safe for the terminal and cut to `width` cells: a carriage return keeps what
// follows the last one (what a terminal would show of a progress bar), tabs expand to the next
// multiple of 8, and every other control character (C0, DEL, C1: escape sequences included) is
// shown as '?'.
QString sanitizeLogLine(const QString &line, int width, const QString &ellipsis);

class MonitorModel {
public:
    struct Options {
        Glyphs glyphs = Glyphs::Unicode;
        double refreshSeconds = 5;  // for the status line
    };
    explicit MonitorModel(Options options);

    void setCluster(ClusterSnapshot snapshot);
    void setStore(StoreSnapshot snapshot);
    const StoreSnapshot &store() const { return m_store; }
    const ClusterSnapshot &cluster() const { return m_cluster; }

    // CancelSweep: the user confirmed cancelling sweep cancelRequest() (the view hands it to the
    // store worker; the outcome comes back as StoreSnapshot::actionMessage).
    enum class Effect { None, Redraw, RefreshNow, Quit, CancelSweep };
    Effect press(Key key);
    core::SweepId cancelRequest() const { return m_cancelRequest; }
    // The confirmation being asked ("Cancel sweep NAME (N active trials)? y/n"); empty: none.
    QString prompt() const { return m_prompt; }
    // The log view's trial; nullopt: the log view is closed.
    std::optional<core::LogRequest> wantedLogs() const { return m_logs; }
    bool showingLogs() const { return m_logs.has_value(); }

    Panel focus() const { return m_focus; }
    bool showingTrials() const { return m_trialsOf != 0; }
    bool clusterZoomed() const { return m_zoomed; }
    // The sweep whose trials the next store read should load: the one shown, else the one
    // highlighted (so Enter finds them already read). 0: none.
    core::SweepId wantedTrials() const;
    // How many buckets of history a sparkline gets on a screen this wide.
    static int sparkWidth(int screenWidth);

    // The whole screen: exactly `height` lines (fewer only when height < 1), none wider than
    // `width`. `nowMs` dates the status ("updated 3 s ago").
    QList<ScreenLine> render(int width, int height, qint64 nowMs) const;

private:
    QList<ScreenLine> clusterLines(int width, qint64 nowMs) const;
    QList<ScreenLine> sweepLines(int width, int rows) const;
    QList<ScreenLine> trialLines(int width, int rows) const;
    QList<ScreenLine> logLines(int width, int rows) const;
    int selectedSweepIndex() const;
    const SweepSummary *summaryOf(core::SweepId sweep) const;
    // render()'s parts: the bottom line (the keys, the question asked, the last action's
    // message), the log view, or the cluster panel over the sweeps panel in `body` rows.
    ScreenLine helpLine(int width) const;
    QList<ScreenLine> logView(int width, int body) const;
    QList<ScreenLine> panels(int width, int body, qint64 nowMs) const;
    // The rows of `body` the cluster panel gets, its name line included: all when zoomed, what it
    // needs where the sweeps panel keeps enough, else about half.
    int clusterShare(int body, int clusterLineCount) const;
    // `room` of the cluster panel's lines from its scroll; the last says how many more there are.
    QList<ScreenLine> clusterPanel(const QList<ScreenLine> &lines, int room, int width) const;
    // press()'s parts: a confirmation's answer, Enter, Esc.
    Effect answerPrompt(Key key);
    Effect enter();
    Effect back();
    Effect askCancel();
    Effect openLogs();
    void move(int delta);

    Options m_options;
    ClusterSnapshot m_cluster;
    StoreSnapshot m_store;
    Panel m_focus = Panel::Sweeps;
    bool m_zoomed = false;  // the cluster panel takes the whole screen
    bool m_help = false;
    core::SweepId m_selectedSweep = 0;  // highlighted in the sweeps table (kept by id)
    core::SweepId m_trialsOf = 0;  // the sweep whose trials are shown; 0: the sweeps table
    int m_trialRow = 0;
    int m_clusterScroll = 0;
    std::optional<core::LogRequest> m_logs;  // the log view is open on this trial
    QString m_prompt;  // a confirmation is asked
    core::SweepId m_promptSweep = 0;  // what it would cancel
    core::SweepId m_cancelRequest = 0;  // confirmed (Effect::CancelSweep)
    QString m_status;  // a message on the bottom line until the next key
    bool m_statusError = false;
};

}  // namespace orrery::monitor
