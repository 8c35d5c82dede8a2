// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery monitor`: the ncurses view. Everything it shows comes from MonitorModel::render() as
// plain lines with a style; this file maps styles to attributes, keys to MonitorModel::Key, and
// keeps the terminal sane (restored on q, on Ctrl-C, on SIGTERM/SIGHUP and on an exception).
#include "monitor_command.h"

#include "commands.h"
#include "output.h"

#include "monitorfeeds.h"
#include "monitormodel.h"
#include "orrery/core/logread.h"

#include "orrery/core/paths.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/sweepoperations.h"

#include <QDateTime>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <langinfo.h>
#include <mutex>
#include <thread>
#include <unistd.h>

// ncursesw's wide-character API (mvaddnwstr); the header must see this before it is included.
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

namespace orrery::cli {

const char *const kMonitorNotes =
    "A full-screen view of a cluster (partitions, nodes, your queue) and of the sweeps in the\n"
    "tracking database (trials, best value, a sparkline of the best run). Without --cluster, the\n"
    "one cluster profile there is. Each refresh also follows the active sweeps as `sweep watch`\n"
    "does (new metrics, retries, early stops); with --no-follow it only shows what the database\n"
    "has (the keys below still act).\n"
    "Keys: Tab/left/right panel, up/down/j/k move, Enter details, Esc/Backspace back,\n"
    "l the selected trial's logs (a live tail), c cancel the selected sweep (asks y/n),\n"
    "r refresh, q quit, ? help. Refresh: every 5 s unless --refresh.\n";

int runMonitor(const Context &ctx, const QCommandLineParser &p);

CommandInfo monitorCommand()
{
    return parsedCommand(
        QStringLiteral("monitor"), {},
        {QCommandLineOption(QStringLiteral("cluster"), QStringLiteral("the cluster profile to show"),
                            QStringLiteral("NAME")),
         QCommandLineOption(QStringLiteral("refresh"),
                            QStringLiteral("seconds between refreshes (0.5 to 3600)"),
                            QStringLiteral("SECONDS")),
         QCommandLineOption(QStringLiteral("no-follow"),
                            QStringLiteral("only show; do not follow the sweeps"))},
        QStringLiteral("full-screen terminal monitor: cluster, queue, sweeps"), runMonitor,
        QString::fromUtf8(kMonitorNotes));
}

namespace {

using monitor::Key;
using monitor::MonitorModel;
using monitor::Style;

volatile std::sig_atomic_t g_stop = 0;

extern "C" void onStopSignal(int)
{
    g_stop = 1;
}

int usage(const QString &problem)
{
    err(QStringLiteral("orrery monitor: %1\nusage: orrery monitor %2\n")
            .arg(problem, monitorCommand().synopsis));
    return kUsage;
}

// The curses session: started by the constructor, and the terminal restored by finish() or the
// destructor, whichever comes first (also when an exception leaves the loop).
class Curses {
public:
    Curses()
    {
        m_screen = newterm(nullptr, stdout, stdin);
        if (!m_screen)
            return;
        set_term(m_screen);
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        set_escdelay(25);  // Esc is a key of its own here, not the start of a sequence to wait for
        curs_set(0);  // may fail (vt100): harmless
        timeout(250);  // getch waits at most this long: at most 4 redraws a second (UX.md)
        const char *noColor = std::getenv("NO_COLOR");  // https://no-color.org: any non-empty value
        if (has_colors() && !(noColor && *noColor)) {
            start_color();
            const short bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
            init_pair(1, COLOR_BLACK, COLOR_CYAN);  // title
            init_pair(2, COLOR_BLACK, COLOR_YELLOW);  // focused panel heading
            init_pair(3, COLOR_RED, bg);  // errors
            init_pair(4, COLOR_CYAN, bg);  // column headers
            m_colors = true;
        }
    }
    ~Curses() { finish(); }
    Curses(const Curses &) = delete;
    Curses &operator=(const Curses &) = delete;

    bool ok() const { return m_screen != nullptr; }
    void finish()
    {
        if (!m_screen)
            return;
        endwin();
        delscreen(m_screen);
        m_screen = nullptr;
    }

    attr_t attributes(Style style) const
    {
        switch (style) {
        case Style::Normal:
            return A_NORMAL;
        case Style::Title:
            return A_REVERSE | A_BOLD | (m_colors ? COLOR_PAIR(1) : 0);
        case Style::Heading:
            return A_BOLD;
        case Style::Focused:
            return A_REVERSE | A_BOLD | (m_colors ? COLOR_PAIR(2) : 0);
        case Style::ColumnHeader:
            return m_colors ? A_BOLD | COLOR_PAIR(4) : A_UNDERLINE;
        case Style::Selected:
            return A_REVERSE;
        case Style::Dim:
            return A_DIM;
        case Style::Error:
            return A_BOLD | (m_colors ? COLOR_PAIR(3) : 0);
        case Style::Help:
            return A_REVERSE;
        }
        return A_NORMAL;
    }

private:
    SCREEN *m_screen = nullptr;
    bool m_colors = false;
};

void paint(const Curses &curses, const QList<monitor::ScreenLine> &lines, bool utf8)
{
    erase();
    const int rows = LINES, cols = COLS;
    for (int y = 0; y < int(lines.size()) && y < rows; ++y) {
        QString text = lines[y].text;
        for (QChar &c : text)  // never a control character to the terminal (the model's lines have none)
            if (c.unicode() < 0x20 || c.unicode() == 0x7f || (!utf8 && c.unicode() > 0x7e) ||
                (c.unicode() >= 0x80 && c.unicode() < 0xa0))
                c = QLatin1Char('?');
        // The bottom-right cell cannot be written without scrolling the screen: leave it.
        const int room = y == rows - 1 ? cols - 1 : cols;
        const std::wstring wide = text.left(room).toStdWString();
        attrset(curses.attributes(lines[y].style));
        mvaddnwstr(y, 0, wide.c_str(), int(wide.size()));
    }
    attrset(A_NORMAL);
    refresh();
}

Key keyOf(int ch)
{
    switch (ch) {
    case KEY_UP:
    case 'k':
        return Key::Up;
    case KEY_DOWN:
    case 'j':
        return Key::Down;
    case KEY_PPAGE:
        return Key::PageUp;
    case KEY_NPAGE:
    case ' ':
        return Key::PageDown;
    case KEY_HOME:
    case 'g':
        return Key::Home;
    case KEY_END:
    case 'G':
        return Key::End;
    case KEY_LEFT:
        return Key::Left;
    case KEY_RIGHT:
        return Key::Right;
    case 'l':
    case 'L':
        return Key::Logs;
    case 'c':
    case 'C':
        return Key::Cancel;
    case 'y':
    case 'Y':
        return Key::Yes;
    case '\t':
    case KEY_BTAB:
        return Key::Tab;
    case '\n':
    case '\r':
    case KEY_ENTER:
        return Key::Enter;
    case 27:  // Esc
    case KEY_BACKSPACE:
    case 127:
    case 8:
        return Key::Back;
    case 'r':
    case 'R':
        return Key::Refresh;
    case 'q':
    case 'Q':
        return Key::Quit;
    case '?':
        return Key::Help;
    default:
        return Key::Other;  // answers a confirmation with no
    }
}

// What the store worker's thread owns to act on the sweeps: its own store connection and the
// sweep operations over it (the executors, one SSH connection per cluster, kept; the trainer's
// schema), and the log tail. Made on the UI thread, then used only on the store worker's: by the
// follow hook, the log reads and the user's actions (a cancel) — the same operations as
// `orrery sweep watch|cancel|logs`.
class WorkerContext {
public:
    // The sweep leases this monitor takes last four refreshes (core::followerForPace). A cancel
    // returns at once: the refreshes show the trials ending (remote::Settle).
    WorkerContext(QString dbPath, double refreshSeconds) : m_dbPath(std::move(dbPath))
    {
        m_options.follower = core::followerForPace(qint64(refreshSeconds * 1000));
        m_options.settle = remote::Settle::Return;
        // No prompts: the screen is curses'.
    }
    WorkerContext(const WorkerContext &) = delete;
    WorkerContext &operator=(const WorkerContext &) = delete;

    remote::SweepOperations &ops()
    {
        if (!m_ops) {
            m_store = core::TrackingStore::open(m_dbPath);
            m_ops = std::make_unique<remote::SweepOperations>(*m_store, m_options);
        }
        return *m_ops;
    }

    // The refresh hook: one follow step of every active sweep.
    void follow()
    {
        const core::TickReport r = ops().followActive();
        if (!r.errors.isEmpty())
            throw std::runtime_error(r.errors.join(QStringLiteral("; ")).toStdString());
    }

    // The user's `c`, confirmed (the next refreshes show the trials cancelling, then cancelled).
    QString cancel(core::SweepId id)
    {
        return ops().cancel(id).message;  // a refusal throws: the feed shows it as failed
    }

    core::LogTail logs(const core::LogRequest &request)
    {
        const remote::TrialLogs where = ops().logs(request.sweep, request.trial);
        return m_tailer.read(ops().executor(where.sweep.cluster), where.sweep, where.attempt);
    }

private:
    QString m_dbPath;
    remote::SweepOperations::Options m_options;
    std::unique_ptr<core::TrackingStore> m_store;
    std::unique_ptr<remote::SweepOperations> m_ops;  // releases its leases when it goes
    core::LogTailer m_tailer;
};

// Stops the feeds, but waits at most `patience` for a poll in progress: one waiting on a slow or
// silent cluster can take the connect and command timeouts (tens of seconds), and the user asked
// to quit. Past that the process ends here with `exitCode`; nothing is lost, as the store's writes
// (the follow hook's) are transactions, which SQLite rolls back when a process dies in one.
void stopFeeds(std::unique_ptr<monitor::MonitorFeeds> feeds, std::chrono::milliseconds patience, int exitCode)
{
    std::mutex mutex;
    std::condition_variable cv;
    bool stopped = false;
    std::thread stopper([&] {
        feeds.reset();
        std::lock_guard lock(mutex);
        stopped = true;
        cv.notify_one();
    });
    std::unique_lock lock(mutex);
    if (!cv.wait_for(lock, patience, [&] { return stopped; })) {
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(exitCode);
    }
    lock.unlock();
    stopper.join();
}

// --refresh: seconds between refreshes (refreshSeconds is left as it is without it). Returns kOk,
// or kUsage after saying why.
int readRefresh(const QCommandLineParser &p, double &refreshSeconds)
{
    if (p.isSet(QStringLiteral("refresh"))) {
        const QString value = p.value(QStringLiteral("refresh"));
        bool ok = false;
        refreshSeconds = value.toDouble(&ok);
        // Below half a second the polls would be the load on the cluster's controller.
        if (!ok || refreshSeconds < 0.5 || refreshSeconds > 3600)
            return usage(QStringLiteral("--refresh takes seconds from 0.5 to 3600, not '%1'").arg(value));
    }
    return kOk;
}

// Without --cluster: the one profile there is, else a notice saying why the cluster panel is
// empty. A profile that cannot be read is said, and the monitor goes on with the readable ones.
void chooseOnlyCluster(const remote::ProfileStore &profiles, monitor::FeedOptions &feedOptions)
{
    QStringList broken;
    const QList<remote::ClusterProfile> all = profiles.list(&broken);
    for (const QString &problem : std::as_const(broken))
        err(QStringLiteral("orrery monitor: %1\n").arg(problem));
    if (all.size() == 1) {
        feedOptions.cluster = all.front();
    } else if (all.isEmpty()) {
        feedOptions.clusterNotice =
            QStringLiteral("No cluster is configured. Add one with\n"
                           "  orrery cluster add NAME --host HOST [--user U] [--identity KEY]\n"
                           "and check it with `orrery cluster test NAME`.");
    } else {
        QStringList names;
        for (const remote::ClusterProfile &profile : all)
            names.append(profile.name);
        feedOptions.clusterNotice = QStringLiteral("%1 clusters are configured (%2):\n"
                                                   "choose one with `orrery monitor --cluster NAME`.")
                                        .arg(all.size())
                                        .arg(names.join(QStringLiteral(", ")));
    }
}

// The cluster the monitor shows: --cluster's profile, else the one there is. Returns kOk, or
// kFailed after saying why.
int chooseCluster(const QString &clusterName, monitor::FeedOptions &feedOptions)
{
    try {
        const remote::ProfileStore profiles;
        if (clusterName.isEmpty()) {
            chooseOnlyCluster(profiles, feedOptions);
            return kOk;
        }
        feedOptions.cluster = profiles.find(clusterName);
        if (!feedOptions.cluster) {
            err(QStringLiteral("orrery monitor: no cluster profile '%1' (`orrery cluster list` shows them)\n")
                    .arg(clusterName));
            return kFailed;
        }
    } catch (const remote::ProfileError &e) {
        err(QStringLiteral("orrery monitor: %1\n").arg(e.message()));
        return kFailed;
    }
    return kOk;
}

bool haveTerminal()
{
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        return true;
    err(QStringLiteral("orrery monitor: needs a terminal (stdin and stdout); in scripts use "
                       "`orrery runs list` or `orrery cluster test NAME --json`\n"));
    return false;
}

// Each refresh first follows the active sweeps (core::followActiveSweeps: ingest, retries,
// early stops) unless --no-follow; the log view and the cancel work either way. All on the
// store worker's thread, with the one WorkerContext.
std::unique_ptr<monitor::MonitorFeeds> startFeeds(monitor::FeedOptions feedOptions,
                                                  const std::shared_ptr<WorkerContext> &worker, bool follow)
{
    if (follow)
        feedOptions.beforeRefresh = [worker] { worker->follow(); };
    feedOptions.readLogs = [worker](const core::LogRequest &request) { return worker->logs(request); };
    return std::make_unique<monitor::MonitorFeeds>(std::move(feedOptions));
}

void catchStopSignals()
{
    struct sigaction action { };
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a signal ends getch's wait at once
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
        sigaction(sig, &action, nullptr);
}

// Hands the feeds' new snapshots to the model, and the model's wishes (which trials, which logs,
// how wide a sparkline) to the feeds. Returns whether the screen changed.
bool exchange(MonitorModel &model, monitor::MonitorFeeds &feeds)
{
    bool changed = false;
    if (std::optional<monitor::StoreSnapshot> s = feeds.takeStore()) {
        model.setStore(std::move(*s));
        changed = true;
    }
    if (std::optional<monitor::ClusterSnapshot> c = feeds.takeCluster()) {
        model.setCluster(std::move(*c));
        changed = true;
    }
    feeds.setTrialsOf(model.wantedTrials());
    feeds.setLogsOf(model.wantedLogs());
    feeds.setSparkWidth(MonitorModel::sparkWidth(COLS));
    return changed;
}

// Acts on what a key press asked for. Returns whether the screen must be redrawn.
bool apply(MonitorModel::Effect effect, MonitorModel &model, monitor::MonitorFeeds &feeds,
           const std::shared_ptr<WorkerContext> &worker)
{
    switch (effect) {
    case MonitorModel::Effect::Quit:
        g_stop = 1;
        return false;
    case MonitorModel::Effect::CancelSweep:
        feeds.runAction([worker, sweep = model.cancelRequest()] { return worker->cancel(sweep); });
        return true;
    case MonitorModel::Effect::RefreshNow:
        feeds.setTrialsOf(model.wantedTrials());
        feeds.setLogsOf(model.wantedLogs());
        feeds.refreshNow();
        return true;
    case MonitorModel::Effect::Redraw:
        return true;
    case MonitorModel::Effect::None:
        return false;
    }
    return false;
}

// Until q or a stop signal: take the feeds' news, paint when something (or the clock) changed,
// wait for a key. An exception leaves it with the terminal still curses'.
void loop(const Curses &curses, MonitorModel &model, monitor::MonitorFeeds &feeds,
          const std::shared_ptr<WorkerContext> &worker, bool utf8)
{
    bool dirty = true;
    qint64 lastSecond = -1;
    while (!g_stop) {
        if (exchange(model, feeds))
            dirty = true;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (now / 1000 != lastSecond) {  // the clock and "updated N s ago"
            lastSecond = now / 1000;
            dirty = true;
        }
        if (dirty) {
            paint(curses, model.render(COLS, LINES, now), utf8);
            dirty = false;
        }
        const int ch = getch();
        if (ch == ERR)
            continue;
        if (ch == KEY_RESIZE) {
            dirty = true;
            continue;
        }
        if (apply(model.press(keyOf(ch)), model, feeds, worker))
            dirty = true;
    }
}

}  // namespace

int runMonitor(const Context &ctx, const QCommandLineParser &p)
{
    const QString clusterName = p.value(QStringLiteral("cluster"));
    const bool follow = !p.isSet(QStringLiteral("no-follow"));
    double refreshSeconds = 5;  // unless --refresh
    if (const int code = readRefresh(p, refreshSeconds); code != kOk)
        return code;

    monitor::FeedOptions feedOptions;
    feedOptions.dbPath = ctx.dbPath;
    feedOptions.refresh = std::chrono::milliseconds(qint64(refreshSeconds * 1000));
    if (const int code = chooseCluster(clusterName, feedOptions); code != kOk)
        return code;
    if (!haveTerminal())
        return kFailed;

    std::setlocale(LC_ALL, "");
    const bool utf8 = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

    MonitorModel::Options modelOptions;
    modelOptions.glyphs = utf8 ? monitor::Glyphs::Unicode : monitor::Glyphs::Ascii;
    modelOptions.refreshSeconds = refreshSeconds;
    MonitorModel model(modelOptions);

    const auto worker = std::make_shared<WorkerContext>(ctx.dbPath, refreshSeconds);
    auto feeds = startFeeds(std::move(feedOptions), worker, follow);
    catchStopSignals();

    Curses curses;
    if (!curses.ok()) {
        const char *term = std::getenv("TERM");
        err(QStringLiteral("orrery monitor: cannot use the terminal (TERM=%1)\n")
                .arg(QString::fromLocal8Bit(term ? term : "")));
        return kFailed;
    }

    try {
        loop(curses, model, *feeds, worker, utf8);
    } catch (const std::exception &e) {
        curses.finish();
        err(QStringLiteral("orrery monitor: %1\n").arg(QString::fromUtf8(e.what())));
        stopFeeds(std::move(feeds), std::chrono::seconds(1), kFailed);
        return kFailed;
    }
    // The terminal first: a poll still waiting on a slow cluster must not keep the screen.
    curses.finish();
    stopFeeds(std::move(feeds), std::chrono::seconds(1), kOk);
    return kOk;
}

}  // namespace orrery::cli
