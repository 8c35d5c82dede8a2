// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/remote/error.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace orrery::remote {

// Where and as whom to connect. Nothing secret: keys are files or the agent, passphrases and
// passwords come from AuthCallbacks, and the host key is checked against `knownHostsFile`.
// `host` may be an alias of the SSH config file: its HostName, User, Port, IdentityFile and
// ProxyJump/ProxyCommand apply; fields set here override the file. File names may start with
// "~/" (the home directory).
struct Endpoint {
    QString host;
    int port = 0;  // 0: the config file's Port, else 22
    QString user;  // empty: the config file's User, else the local user name
    QString identityFile;  // private key; empty: the config file's, then the agent and ~/.ssh/id_*
    QString knownHostsFile;  // empty: ~/.ssh/known_hosts
    QString proxyJump;  // "[user@]host[:port]": reached through OpenSSH's `ssh -W` (as ssh -J does)
    QString sshConfigFile;  // empty: ~/.ssh/config; "none": read no config file
    std::chrono::milliseconds connectTimeout{10'000};
};

// One prompt of a keyboard-interactive (2FA) round.
struct Prompt {
    QString text;
    bool echo = false;  // false: a secret, do not show what is typed
};

// How secrets are asked for; nothing is stored. Each returns nullopt when the user declines (or
// there is no one to ask), and that method is then skipped. Called on the connection's owner
// thread, during connect().
struct AuthCallbacks {
    std::function<std::optional<QByteArray>(const QString &keyFile)> passphrase;
    std::function<std::optional<QList<QByteArray>>(const QString &name, const QString &instruction,
                                                   const QList<Prompt> &prompts)>
        keyboardInteractive;
    std::function<std::optional<QByteArray>(const QString &userAtHost)> password;
    // Host not in known_hosts: return true to trust `fingerprint` (it is then recorded in
    // known_hosts). Unset or false: connect() throws HostKeyUnknown. A changed key is never asked
    // about: it is always refused.
    std::function<bool(const QString &host, const QString &fingerprint)> acceptUnknownHostKey;
};

struct ExecResult {
    QByteArray out;
    QByteArray err;
    int exitStatus = -1;  // the remote command's exit status; -1 when a signal ended it
};

struct RemoteFileInfo {
    qint64 size = 0;
    bool isDir = false;
    quint32 permissions = 0;  // POSIX mode bits (07777)
    QDateTime modified;
};

// Progress and cancellation of a transfer. `progress(done, total)` is called after each chunk
// (total is -1 when unknown); setting `*cancel` (from any thread) stops the transfer at the next
// chunk with RemoteError::Kind::Cancelled and leaves the destination untouched.
struct Transfer {
    std::function<void(qint64 done, qint64 total)> progress;
    const std::atomic<bool> *cancel = nullptr;
};

// One SSH connection to a cluster's login node (libssh), with one SFTP session reused by every
// file operation. Not thread-safe: libssh sessions are not, so a Session is owned and used by one
// thread (see remote::Connection, which owns one on a worker thread); concurrent commands are
// channels opened by that owner (execMany runs several at once).
// Every failure throws RemoteError with the host, the command or path, and what to do.
class Session {
public:
    explicit Session(Endpoint endpoint, AuthCallbacks callbacks = {});
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    const Endpoint &endpoint() const;
    // "user@host:port" after the config file was applied (for messages).
    QString where() const;

    // Connects, verifies the host key against known_hosts (unknown → the callback decides, else
    // HostKeyUnknown; another key on file → HostKeyChanged with both fingerprints), then
    // authenticates: agent, then key files (passphrase callback), then keyboard-interactive, then
    // password. Nothing is sent to a host whose key does not verify.
    void connect();
    bool isConnected() const;
    void disconnect();

    // A round trip to the server (keepalive@openssh.com). False, and disconnected, when the
    // connection is dead.
    bool ping();

    // SHA256 fingerprint of the server's host key, as OpenSSH prints it ("SHA256:..."); valid
    // after connect() got as far as the key exchange.
    QString serverFingerprint() const;

    // Runs a command line (build it with remote::commandLine) and returns its output and exit
    // status. Throws Timeout if it does not finish within `timeout` (the channel is closed; the
    // session stays usable).
    ExecResult exec(const QByteArray &commandLine,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));
    // Runs several command lines at once, each on its own channel of this session and with its
    // own timeout; the result or the error of each, in order. A connection loss throws for all.
    // `input`, when not empty, is written to the command's stdin (as the remote window allows,
    // without blocking the other channels), then EOF; empty: stdin is left open and unused.
    struct Command {
        QByteArray line;
        std::chrono::milliseconds timeout{60'000};
        QByteArray input{};  // initialized here: Command{line, timeout} stays warning-free
    };
    struct Outcome {
        ExecResult result;
        std::optional<RemoteError> error;
    };
    QList<Outcome> execMany(const QList<Command> &commands);
    ExecResult exec(const Command &command);  // one command, with its stdin
    // Commands sent over this Session's lifetime (reconnects included): what polling costs.
    // The one member safe to call from another thread.
    quint64 commandCount() const;

    // --- SFTP (one SFTP session per connection, opened on first use) ---
    // Reads a remote file from byte `offset` to its end, at most `maxBytes` (-1: all).
    QByteArray readFile(const QString &path, qint64 offset = 0, qint64 maxBytes = -1);
    // Writes `data` to `path` atomically: a temporary name in the same directory, then a rename
    // over `path`, so a reader never sees half a file.
    void writeFile(const QString &path, const QByteArray &data, quint32 mode = 0644);
    // Uploads a local file atomically (as writeFile), in chunks, with progress and cancellation.
    void upload(const QString &localPath, const QString &remotePath, const Transfer &transfer = {},
                quint32 mode = 0644);
    // Downloads to `localPath` (written to a temporary file, renamed when complete).
    void download(const QString &remotePath, const QString &localPath, const Transfer &transfer = {});
    // mkdir -p. Existing directories are fine; an existing file in the way is an error.
    void makeDirectories(const QString &path, quint32 mode = 0755);
    // nullopt when `path` does not exist.
    std::optional<RemoteFileInfo> stat(const QString &path);
    void remove(const QString &path);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace orrery::remote
