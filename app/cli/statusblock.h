// SPDX-License-Identifier: GPL-3.0-or-later
//
// Progress a person can read on a terminal: a block of lines at the bottom of the output,
// redrawn in place (sweep watch's status), with ordinary lines scrolling above it; and a
// one-line progress bar (runs ingest, runs push). Neither writes a control character unless
// stdout is a terminal (and TERM is not "dumb"); NO_COLOR turns off the bold header.
#pragma once

#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::cli {

// Whether stdout (stderr) is a terminal that takes cursor movement.
bool stdoutIsLiveTerminal();
bool stderrIsLiveTerminal();
// The terminal's width in columns (80 when it cannot be asked).
int terminalWidth();

class StatusBlock {
public:
    explicit StatusBlock(bool live) : m_live(live) { }
    ~StatusBlock() { clear(); }
    bool live() const { return m_live; }
    // Prints lines (each ending in a newline) above the block.
    void printAbove(const QString &text);
    // Replaces the block: erases the old one and draws these lines, cut to the terminal's width.
    void show(const QStringList &lines);
    // Erases the block (before a final table, or on exit).
    void clear();

private:
    bool m_live;
    int m_drawn = 0;
    QStringList m_lines;
};

// "[#########.........]  45%": `width` cells of bar for fraction 0..1.
QString progressBar(double fraction, int width);
// "[####......]  40%  4.2 MB/10.5 MB  1.3 MB/s  ETA 5s": a bar with amounts, rate and ETA, from the
// amount done, the total and the seconds since the start; `unit` formats an amount.
// "4.2 MB" (decimal units) and "1.25M" / "830": amounts for progressText.
QString formatBytes(double bytes);
QString formatCount(double n);
QString progressText(qint64 done, qint64 total, double seconds, const std::function<QString(double)> &unit);

// One line of progress on stderr that rewrites itself on a terminal ("\r" + erase) and prints
// nothing elsewhere; finish() ends the line. At most ten redraws a second.
class ProgressLine {
public:
    explicit ProgressLine(bool enabled) : m_enabled(enabled) { }
    ~ProgressLine() { finish(); }
    void update(const QString &text, bool force = false);
    // Prints a line of stderr where the bar is; the next update() draws the bar again below it.
    void printAbove(const QString &text);
    void finish();

private:
    bool m_enabled;
    bool m_open = false;
    qint64 m_lastMs = 0;
};

}  // namespace orrery::cli
