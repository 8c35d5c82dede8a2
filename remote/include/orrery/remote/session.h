// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/remote/error.h"

#include <QByteArray>
#include <QString>

#include <chrono>
#include <memory>

namespace orrery::remote {

// Where and as whom to connect. Nothing secret: keys are files, passphrases come from callbacks
// (the Remote issue), and the host key is checked against `knownHostsFile`.
struct Endpoint {
    QString host;
    int port = 22;
    QString user;
    QString identityFile;  // private key; empty: none
    QString knownHostsFile;  // empty: ~/.ssh/known_hosts
    std::chrono::milliseconds connectTimeout{10'000};
};

struct ExecResult {
    QByteArray out;
    QByteArray err;
    int exitStatus = -1;  // the remote command's exit status
};

// One SSH connection to a cluster's login node (libssh).
// Not thread-safe: libssh sessions are not, so a Session is owned and used by one thread (the
// remote worker); concurrent commands are channels opened by that owner one after another.
// Every failure throws RemoteError with the host, the command and what to do.
class Session {
public:
    explicit Session(Endpoint endpoint);
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    const Endpoint &endpoint() const;

    // Connects, verifies the host key against known_hosts (unknown → HostKeyUnknown, another key
    // on file → HostKeyChanged with both fingerprints), then authenticates with the identity
    // file. Nothing is sent to a host whose key does not verify.
    void connect();
    bool isConnected() const;
    void disconnect();

    // SHA256 fingerprint of the server's host key, as OpenSSH prints it ("SHA256:..."); valid
    // after connect() got as far as the key exchange.
    QString serverFingerprint() const;

    // Runs a command line (build it with remote::commandLine) and returns its output and exit
    // status. Throws Timeout if it does not finish within `timeout`.
    ExecResult exec(const QByteArray &commandLine,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));

    // Reads a remote file over SFTP from byte `offset` to its end, at most `maxBytes` (-1: all).
    QByteArray readFile(const QString &path, qint64 offset = 0, qint64 maxBytes = -1);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace orrery::remote
