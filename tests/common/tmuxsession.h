// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// A real terminal for tests of full-screen programs: a tmux server on a private socket (never the
// user's), one detached session running a command, keys sent and the screen read back as text.

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QStringList>
#include <QTest>
#include <QThread>
#include <QUuid>

#include <functional>

// In a test function: skips when tmux is missing, except in CI (CI=true), where that fails.
#define ORRERY_REQUIRE_TMUX()                                                                                \
    do {                                                                                                     \
        if (const QString why = orrery::test::TmuxSession::missing(); !why.isEmpty()) {                      \
            if (qEnvironmentVariable("CI") == QLatin1String("true"))                                         \
                QFAIL(qPrintable(why));                                                                      \
            QSKIP(qPrintable(why));                                                                          \
        }                                                                                                    \
    } while (false)

namespace orrery::test {

class TmuxSession {
public:
    // "" when tmux is installed; else why not.
    static QString missing()
    {
        return QStandardPaths::findExecutable(QStringLiteral("tmux")).isEmpty()
            ? QStringLiteral("tmux is not installed (scripts/setup installs it)")
            : QString();
    }

    // `commandLine` under a shell that prints, once it ends, "[exit N, tty restored]" (or "tty
    // changed"): its status, and whether the terminal's modes (echo, canonical input, ...) are
    // what they were before. The shell then stays, so the pane and its last screen outlive it
    // (tmux's own #{pane_dead_status} comes too late to rely on).
    static QString reportingExit(const QString &commandLine)
    {
        return QStringLiteral("before=$(stty -g); %1; rc=$?; "
                              "if [ \"$(stty -g)\" = \"$before\" ]; then t=restored; else t=changed; fi; "
                              "echo \"[exit $rc, tty $t]\"; sleep 60")
            .arg(commandLine);
    }

    TmuxSession()
        : m_socket(QStringLiteral("orrery-test-") + QUuid::createUuid().toString(QUuid::Id128).left(12))
    { }
    ~TmuxSession() { tmux({QStringLiteral("kill-server")}); }
    TmuxSession(const TmuxSession &) = delete;
    TmuxSession &operator=(const TmuxSession &) = delete;

    // Starts `command` (a shell command line) in a width × height window. `env` entries are
    // "NAME=value"; the pane's shell then runs the command with them.
    bool start(const QString &command, int width, int height, const QStringList &env = {})
    {
        QStringList args{QStringLiteral("-f"),   QStringLiteral("/dev/null"), QStringLiteral("new-session"),
                         QStringLiteral("-d"),   QStringLiteral("-s"),        QStringLiteral("t"),
                         QStringLiteral("-x"),   QString::number(width),      QStringLiteral("-y"),
                         QString::number(height)};
        for (const QString &e : env)
            args << QStringLiteral("-e") << e;
        args << command;
        if (!tmux(args))
            return false;
        // The pane stays after the command ends, so its last screen (and exit) can be read.
        return tmux({QStringLiteral("set-option"), QStringLiteral("-t"), QStringLiteral("t"),
                     QStringLiteral("remain-on-exit"), QStringLiteral("on")});
    }

    bool sendKeys(const QStringList &keys)
    {
        return tmux(QStringList{QStringLiteral("send-keys"), QStringLiteral("-t"), QStringLiteral("t")} +
                    keys);
    }
    bool resize(int width, int height)
    {
        return tmux({QStringLiteral("resize-window"), QStringLiteral("-t"), QStringLiteral("t"),
                     QStringLiteral("-x"), QString::number(width), QStringLiteral("-y"),
                     QString::number(height)});
    }
    QString screen()
    {
        tmux({QStringLiteral("capture-pane"), QStringLiteral("-p"), QStringLiteral("-t"),
              QStringLiteral("t")});
        return m_out;
    }
    // A tmux format of the pane: "#{alternate_on}", "#{cursor_flag}", ...
    QString format(const QString &fmt)
    {
        tmux({QStringLiteral("display-message"), QStringLiteral("-p"), QStringLiteral("-t"),
              QStringLiteral("t"), fmt});
        return m_out.trimmed();
    }

    // Polls the screen until `ok` holds for it (true) or `ms` pass (false); `last` gets the screen.
    bool waitFor(const std::function<bool(const QString &)> &ok, int ms, QString *last = nullptr)
    {
        QDeadlineTimer deadline(ms);
        QString s;
        do {
            s = screen();
            if (ok(s)) {
                if (last)
                    *last = s;
                return true;
            }
            QThread::msleep(100);
        } while (!deadline.hasExpired());
        if (last)
            *last = s;
        return false;
    }
    bool waitForText(const QString &text, int ms, QString *last = nullptr)
    {
        return waitFor([&](const QString &s) { return s.contains(text); }, ms, last);
    }

    QString error() const { return m_error; }

private:
    bool tmux(const QStringList &args)
    {
        QProcess p;
        p.start(QStringLiteral("tmux"), QStringList{QStringLiteral("-L"), m_socket} + args);
        if (!p.waitForFinished(10'000)) {
            m_error = QStringLiteral("tmux %1: did not finish").arg(args.join(QLatin1Char(' ')));
            return false;
        }
        m_out = QString::fromUtf8(p.readAllStandardOutput());
        if (p.exitCode() != 0) {
            m_error = QStringLiteral("tmux %1: %2")
                          .arg(args.join(QLatin1Char(' ')), QString::fromUtf8(p.readAllStandardError()));
            return false;
        }
        return true;
    }

    QString m_socket;
    QString m_out;
    QString m_error;
};

}  // namespace orrery::test
