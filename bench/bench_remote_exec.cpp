// SPDX-License-Identifier: GPL-3.0-or-later
//
// What one remote command costs on an open connection: Orrery's Session::exec against OpenSSH's
// `ssh` over a ControlMaster socket (the peer: what a script multiplexing ssh pays), both running
// `true` on the local test cluster's sshd, plus the command's own run time (the login shell
// running `true` as sshd starts it, timed on the server).
//
//   bench_remote_exec [--runs N] [--env FILE]
//
// Without --env it starts its own fixture with tests/fixture/localcluster.py and stops it after.
#include "benchsupport.h"
#include "orrery/remote/session.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

using orrery::bench::Stats;
using orrery::bench::stats;

template<typename F>
Stats timeRuns(int runs, F f)
{
    std::vector<double> ms;
    f();  // warm-up
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer clock;
        clock.start();
        f();
        ms.push_back(orrery::bench::msSince(clock));
    }
    return stats(ms);
}

void print(const char *what, const Stats &s)
{
    std::printf("| %s | %.2f | %.2f | %.2f |\n", what, s.median, s.p90, s.mean);
}

}  // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    int runs = 200;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--runs"))
            runs = std::max(10, args[i + 1].toInt());
    }
    QTemporaryDir work;
    const orrery::bench::Fixture cluster(args);
    if (!cluster.ok())
        return 1;
    const QHash<QString, QString> env = cluster.env();
    const orrery::remote::Endpoint e = orrery::bench::fixtureEndpoint(env);

    int rc = 0;
    try {
        orrery::remote::Session session(e);
        session.connect();
        const Stats orrery = timeRuns(runs, [&] {
            if (session.exec("true").exitStatus != 0)
                throw std::runtime_error("true failed");
        });

        // The command's own run time is what the remote login shell takes to run `true` as sshd
        // starts it: `$SHELL -c true` with stdin a socket and SSH_CLIENT set, so bash sources
        // ~/.bashrc exactly as for an SSH command (on this machine that .bashrc runs `pyenv init`,
        // about 75 ms). Timed on the server, in one command, so no SSH cost is in it.
        const QByteArray probe = R"(python3 -c '
import os, socket, subprocess, sys, time
n = int(sys.argv[1]); shell = os.environ.get("SHELL", "/bin/sh"); ms = []
for _ in range(n + 1):
    a, b = socket.socketpair()
    t = time.perf_counter(); subprocess.run([shell, "-c", "true"], stdin=a); ms.append((time.perf_counter() - t) * 1e3)
    a.close(); b.close()
print(" ".join("%.3f" % v for v in ms[1:]))
' )" + QByteArray::number(runs);
        const orrery::remote::ExecResult ownRun = session.exec(probe, std::chrono::minutes(10));
        std::vector<double> ownMs;
        for (const QByteArray &v : ownRun.out.trimmed().split(' '))
            ownMs.push_back(v.toDouble());
        if (ownRun.exitStatus != 0 || ownMs.size() != static_cast<size_t>(runs))
            throw std::runtime_error("cannot time the remote shell: " + ownRun.err.toStdString());
        const Stats own = stats(ownMs);

        // The peer: one master connection, then `ssh -S socket host true` per command.
        const QString socket = work.filePath(QStringLiteral("cm.sock"));
        const QStringList common{
            QStringLiteral("-F"), QStringLiteral("/dev/null"),
            QStringLiteral("-o"), QStringLiteral("UserKnownHostsFile=") + e.knownHostsFile,
            QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
            QStringLiteral("-i"), e.identityFile,
            QStringLiteral("-p"), QString::number(e.port),
            QStringLiteral("-S"), socket,
            QStringLiteral("-l"), e.user};
        if (QProcess::execute(QStringLiteral("ssh"),
                              common +
                                  QStringList{QStringLiteral("-M"), QStringLiteral("-f"),
                                              QStringLiteral("-N"), e.host}) != 0)
            throw std::runtime_error("cannot start the OpenSSH ControlMaster");
        const Stats peer = timeRuns(runs, [&] {
            if (QProcess::execute(QStringLiteral("ssh"),
                                  common + QStringList{e.host, QStringLiteral("true")}) != 0)
                throw std::runtime_error("ssh true failed");
        });
        QProcess::execute(QStringLiteral("ssh"),
                          common + QStringList{QStringLiteral("-O"), QStringLiteral("exit"), e.host});

        std::printf("runs: %d per row, `true` on %s:%d (loopback)\n\n", runs, qPrintable(e.host), e.port);
        std::printf("| what | median ms | p90 ms | mean ms |\n|---|---|---|---|\n");
        print("Orrery Session::exec on an open session", orrery);
        print("OpenSSH ssh via ControlMaster (peer)", peer);
        print("the command's own run time ($SHELL -c true as sshd starts it, timed remotely)", own);
        std::printf(
            "\nOrrery overhead over the command's own run time (median): %.2f ms; peer/Orrery: %.1fx\n",
            orrery.median - own.median, peer.median / orrery.median);
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "bench_remote_exec: %s\n", ex.what());
        rc = 1;
    }
    return rc;
}
