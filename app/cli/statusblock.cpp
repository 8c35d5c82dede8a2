// SPDX-License-Identifier: GPL-3.0-or-later
#include "statusblock.h"

#include "output.h"

#include "orrery/core/format.h"

#include <QDateTime>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace orrery::cli {

namespace {

// ECMA-48: cursor up one line, erase the whole line, carriage return.
const QString kUpAndErase = QStringLiteral("\x1b[1A\x1b[2K\r");

QString fit(const QString &line, int width)
{
    // One column short of the edge: a line that fills it would wrap on some terminals and the
    // block's line count would be off.
    const int room = std::max(10, width - 1);
    return line.size() <= room ? line : line.left(room - 1) + QChar(0x2026);
}

}  // namespace

bool stdoutIsLiveTerminal()
{
    const char *term = std::getenv("TERM");
    return isatty(STDOUT_FILENO) && term && *term && std::string_view(term) != "dumb";
}

bool stderrIsLiveTerminal()
{
    const char *term = std::getenv("TERM");
    return isatty(STDERR_FILENO) && term && *term && std::string_view(term) != "dumb";
}

int terminalWidth()
{
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

void StatusBlock::printAbove(const QString &text)
{
    if (!m_live) {
        out(text);
        return;
    }
    const QStringList lines = m_lines;
    clear();
    out(text);
    show(lines);
}

void StatusBlock::show(const QStringList &lines)
{
    m_lines = lines;
    if (!m_live)
        return;
    QString s;
    for (int i = 0; i < m_drawn; ++i)
        s += kUpAndErase;
    const int width = terminalWidth();
    const bool bold = !std::getenv("NO_COLOR") && !lines.isEmpty();
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString line = fit(lines[i], width);
        if (i == 0 && bold)
            s += QStringLiteral("\x1b[1m") + line + QStringLiteral("\x1b[0m");
        else
            s += line;
        s += QLatin1Char('\n');
    }
    m_drawn = int(lines.size());
    out(s);
}

void StatusBlock::clear()
{
    if (!m_live || m_drawn == 0)
        return;
    QString s;
    for (int i = 0; i < m_drawn; ++i)
        s += kUpAndErase;
    m_drawn = 0;
    out(s);
}

QString progressBar(double fraction, int width)
{
    const double f = std::clamp(fraction, 0.0, 1.0);
    const int filled = int(f * width + 0.5);
    return QLatin1Char('[') + QString(filled, QLatin1Char('#')) + QString(width - filled, QLatin1Char('.')) +
        QStringLiteral("] %1%").arg(int(f * 100), 3);
}

void ProgressLine::update(const QString &text, bool force)
{
    if (!m_enabled)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (!force && m_open && now - m_lastMs < 100)
        return;
    m_lastMs = now;
    m_open = true;
    err(QStringLiteral("\r\x1b[2K") + fit(text, terminalWidth()));
}

void ProgressLine::printAbove(const QString &text)
{
    if (m_open)
        err(QStringLiteral("\r\x1b[2K"));
    m_open = false;
    m_lastMs = 0;
    err(text);
}

void ProgressLine::finish()
{
    if (m_open)
        err(QStringLiteral("\n"));
    m_open = false;
}

namespace {

QString scaled(double v, const char *const *suffixes, int count, const QString &space)
{
    int i = 0;
    while (std::abs(v) >= 1000.0 && i + 1 < count) {
        v /= 1000.0;
        ++i;
    }
    return (i == 0 ? QString::number(qint64(v)) : QString::number(v, 'f', v < 10 ? 2 : 1)) + space +
        QString::fromUtf8(suffixes[i]);
}

}  // namespace

QString formatBytes(double bytes)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    return scaled(bytes, units, 5, QStringLiteral(" "));
}

QString formatCount(double n)
{
    static const char *const units[] = {"", "k", "M", "G"};
    return scaled(n, units, 4, QString());
}

QString progressText(qint64 done, qint64 total, double seconds, const std::function<QString(double)> &unit)
{
    const double fraction = total > 0 ? double(done) / double(total) : 0.0;
    QString s =
        progressBar(fraction, 24) + QStringLiteral("  %1/%2").arg(unit(double(done)), unit(double(total)));
    if (seconds > 0.2 && done > 0) {
        const double rate = double(done) / seconds;
        s += QStringLiteral("  %1/s").arg(unit(rate));
        if (total > done)
            s += QStringLiteral("  ETA %1")
                     .arg(core::formatDuration(qint64(double(total - done) / rate * 1000.0)));
    }
    return s;
}

}  // namespace orrery::cli
