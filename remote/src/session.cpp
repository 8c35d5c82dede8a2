// SPDX-License-Identifier: GPL-3.0-or-later
//
// The wall around libssh: every libssh handle lives in a unique_ptr with libssh's own free
// function, and no libssh type appears outside this file.
#include "orrery/remote/session.h"

#include "logging.h"
#include "orrery/remote/shell.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSaveFile>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>  // ssh_send_keepalive: a client may send it too
#include <libssh/sftp.h>

#include <fcntl.h>

#include <array>
#include <cstring>
#include <deque>
#include <type_traits>

// Warnings by default: the CLI prints its own messages; QT_LOGGING_RULES turns on the rest.
Q_LOGGING_CATEGORY(lcRemote, "orrery.remote", QtWarningMsg)

namespace orrery::remote {

namespace {

template<typename Handle, auto Free>
struct Deleter {
    void operator()(Handle h) const noexcept
    {
        if (h)
            Free(h);
    }
};
template<typename Handle, auto Free>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Deleter<Handle, Free>>;

void freeSession(ssh_session s)
{
    ssh_disconnect(s);
    ssh_free(s);
}
void freeChannel(ssh_channel c)
{
    ssh_channel_close(c);
    ssh_channel_free(c);
}
void closeSftpFile(sftp_file f)
{
    sftp_close(f);
}

using SessionPtr = Owned<ssh_session, freeSession>;
using ChannelPtr = Owned<ssh_channel, freeChannel>;
using KeyPtr = Owned<ssh_key, ssh_key_free>;
using SftpPtr = Owned<sftp_session, sftp_free>;
using SftpFilePtr = Owned<sftp_file, closeSftpFile>;
using SftpAttributesPtr = Owned<sftp_attributes, sftp_attributes_free>;
using EventPtr = Owned<ssh_event, ssh_event_free>;
using KnownHostsEntryPtr = Owned<ssh_knownhosts_entry *, ssh_knownhosts_entry_free>;

QString fingerprintOf(ssh_key key)
{
    unsigned char *hash = nullptr;
    size_t length = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) != SSH_OK)
        return {};
    char *text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
    ssh_clean_pubkey_hash(&hash);
    QString result = QString::fromLatin1(text);
    ssh_string_free_char(text);
    return result;
}

// Overwrites a secret in memory once it has been handed to libssh.
void wipe(QByteArray &secret)
{
    if (!secret.isEmpty())
        std::memset(secret.data(), 0, static_cast<size_t>(secret.size()));
    secret.clear();
}

// 256 KiB: large enough that a transfer is not dominated by round trips, small enough that
// progress and cancellation react within a fraction of a second on a slow link.
constexpr qint64 kChunk = 256 * 1024;

}  // namespace

struct Session::Impl {
    Endpoint endpoint;
    AuthCallbacks callbacks;
    SessionPtr session;
    SftpPtr sftp;  // after `session`: freed first
    ssh_callbacks_struct sessionCallbacks{};
    QString fingerprint;
    QString resolvedWhere;
    std::atomic<quint64> commandsSent{0};  // read by Connection from other threads

    QString where() const
    {
        if (!resolvedWhere.isEmpty())
            return resolvedWhere;
        return endpoint.user.isEmpty() ? endpoint.host : endpoint.user + QLatin1Char('@') + endpoint.host;
    }
    QString lastError() const
    {
        return session ? QString::fromUtf8(ssh_get_error(session.get())) : QString();
    }

    [[noreturn]] void fail(RemoteError::Kind kind, const QString &what, bool commandStarted = true)
    {
        throw RemoteError(kind, QStringLiteral("%1: %2").arg(where(), what), commandStarted);
    }

    QString knownHostsPath() const
    {
        return endpoint.knownHostsFile.isEmpty() ? QDir::home().filePath(QStringLiteral(".ssh/known_hosts"))
                                                 : endpoint.knownHostsFile;
    }

    // The jump host as OpenSSH's `ssh -W` (what `ssh -J` runs): it reads the same config file,
    // trusts the same known_hosts file and never prompts (it has no terminal here). Every value
    // is quoted; '%' is refused because libssh expands %h/%p in a ProxyCommand.
    QByteArray proxyCommand() const
    {
        QString spec = endpoint.proxyJump.trimmed();
        if (spec.contains(QLatin1Char('%')) || spec.contains(QLatin1Char(',')))
            throw RemoteError(RemoteError::Kind::Connect,
                              QStringLiteral("%1: proxy jump '%2' must be one [user@]host[:port]")
                                  .arg(where(), endpoint.proxyJump));
        QString user;
        QString port;
        if (const qsizetype at = spec.lastIndexOf(QLatin1Char('@')); at >= 0) {
            user = spec.left(at);
            spec = spec.mid(at + 1);
        }
        if (const qsizetype colon = spec.lastIndexOf(QLatin1Char(':'));
            colon >= 0 && !spec.endsWith(QLatin1Char(']'))) {
            port = spec.mid(colon + 1);
            spec = spec.left(colon);
        }
        spec.remove(QLatin1Char('[')).remove(QLatin1Char(']'));
        QList<QByteArray> argv{"ssh", "-W", "[%h]:%p", "-o", "BatchMode=yes"};
        if (endpoint.sshConfigFile == QLatin1String("none"))
            argv << "-F"
                 << "/dev/null";
        else if (!endpoint.sshConfigFile.isEmpty())
            argv << "-F" << QFile::encodeName(endpoint.sshConfigFile);
        if (!endpoint.knownHostsFile.isEmpty())
            argv << "-o"
                 << "UserKnownHostsFile=" + QFile::encodeName(endpoint.knownHostsFile);
        if (!endpoint.identityFile.isEmpty())
            argv << "-i" << QFile::encodeName(endpoint.identityFile);
        if (!port.isEmpty())
            argv << "-p" << port.toUtf8();
        if (!user.isEmpty())
            argv << "-l" << user.toUtf8();
        argv << "--" << spec.toUtf8();
        return commandLine(argv);
    }

    void setOptions()
    {
        ssh_session s = session.get();
        auto set = [&](ssh_options_e option, const void *value, const char *what) {
            if (ssh_options_set(s, option, value) != SSH_OK)
                fail(
                    RemoteError::Kind::Connect,
                    QStringLiteral("invalid connection option %1: %2").arg(QLatin1String(what), lastError()));
        };
        const QByteArray host = endpoint.host.toUtf8();
        set(SSH_OPTIONS_HOST, host.constData(), "host");
        // The config file is read explicitly, once, so that the Endpoint's own fields win.
        const int processConfig = 0;
        set(SSH_OPTIONS_PROCESS_CONFIG, &processConfig, "process-config");
        if (endpoint.sshConfigFile != QLatin1String("none")) {
            const QString config = endpoint.sshConfigFile.isEmpty()
                ? QDir::home().filePath(QStringLiteral(".ssh/config"))
                : endpoint.sshConfigFile;
            if (QFileInfo::exists(config) &&
                ssh_options_parse_config(s, QFile::encodeName(config).constData()) != SSH_OK)
                fail(RemoteError::Kind::Connect,
                     QStringLiteral("cannot use the SSH config %1: %2").arg(config, lastError()));
        }
        if (endpoint.port > 0) {
            const unsigned int port = static_cast<unsigned int>(endpoint.port);
            set(SSH_OPTIONS_PORT, &port, "port");
        }
        const QByteArray user = endpoint.user.toUtf8();
        if (!user.isEmpty())
            set(SSH_OPTIONS_USER, user.constData(), "user");
        const long timeoutSec = std::max<long>(
            1,
            static_cast<long>(
                std::chrono::duration_cast<std::chrono::seconds>(endpoint.connectTimeout).count()));
        set(SSH_OPTIONS_TIMEOUT, &timeoutSec, "timeout");
        // Commands are small request/reply exchanges: without TCP_NODELAY, Nagle's algorithm
        // and the server's delayed ACK hold the channel-open reply ~40 ms (measured on
        // loopback: opening a channel took 41-45 ms without it, 0.1 ms with it).
        const int noDelay = 1;
        set(SSH_OPTIONS_NODELAY, &noDelay, "nodelay");
        const QByteArray known = QFile::encodeName(knownHostsPath());
        set(SSH_OPTIONS_KNOWNHOSTS, known.constData(), "known-hosts");
        if (!endpoint.knownHostsFile.isEmpty())
            // Only the given file decides; the system-wide list must not vouch for a host.
            set(SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null", "global-known-hosts");
        if (!endpoint.proxyJump.trimmed().isEmpty()) {
            // libssh pastes the target host into the ProxyCommand (%h) before the shell reads
            // it, so it must be a plain host name or address.
            char *target = nullptr;
            ssh_options_get(s, SSH_OPTIONS_HOST, &target);
            const QString targetHost = QString::fromUtf8(target);
            ssh_string_free_char(target);
            static const QRegularExpression plainHost(QStringLiteral("^[A-Za-z0-9._:-]+$"));
            if (!plainHost.match(targetHost).hasMatch())
                fail(RemoteError::Kind::Connect,
                     QStringLiteral("'%1' is not a host name that can be reached through a proxy jump")
                         .arg(targetHost));
            const QByteArray proxy = proxyCommand();
            set(SSH_OPTIONS_PROXYCOMMAND, proxy.constData(), "proxy-command");
        }

        char *resolvedHost = nullptr;
        char *resolvedUser = nullptr;
        unsigned int resolvedPort = 0;
        ssh_options_get(s, SSH_OPTIONS_HOST, &resolvedHost);
        ssh_options_get(s, SSH_OPTIONS_USER, &resolvedUser);
        ssh_options_get_port(s, &resolvedPort);
        resolvedWhere = QStringLiteral("%1@%2:%3")
                            .arg(QString::fromUtf8(resolvedUser), QString::fromUtf8(resolvedHost))
                            .arg(resolvedPort);
        ssh_string_free_char(resolvedHost);
        ssh_string_free_char(resolvedUser);

        // Passphrases of keys that libssh opens itself (publickey_auto) come from the callback.
        sessionCallbacks = {};
        sessionCallbacks.userdata = this;
        sessionCallbacks.auth_function = &Impl::passphrasePrompt;
        ssh_callbacks_init(&sessionCallbacks);
        ssh_set_callbacks(s, &sessionCallbacks);
    }

    static int passphrasePrompt(const char *prompt, char *buf, size_t len, int, int, void *userdata)
    {
        auto *self = static_cast<Impl *>(userdata);
        if (!self->callbacks.passphrase || len == 0)
            return -1;
        std::optional<QByteArray> secret = self->callbacks.passphrase(QString::fromUtf8(prompt));
        if (!secret || static_cast<size_t>(secret->size()) >= len) {
            if (secret)
                wipe(*secret);
            return -1;
        }
        std::memcpy(buf, secret->constData(), static_cast<size_t>(secret->size()));
        buf[secret->size()] = '\0';
        wipe(*secret);
        return 0;
    }

    // The fingerprints known_hosts holds for this host (libssh reports only that they differ).
    QStringList knownFingerprints() const
    {
        QStringList result;
        QFile file(knownHostsPath());
        if (!file.open(QIODevice::ReadOnly))
            return result;
        char *rawHost = nullptr;
        unsigned int port = 22;
        ssh_options_get(session.get(), SSH_OPTIONS_HOST, &rawHost);
        ssh_options_get_port(session.get(), &port);
        const QString hostName = QString::fromUtf8(rawHost);
        ssh_string_free_char(rawHost);
        // known_hosts names a host on another port than 22 as "[host]:port".
        const QByteArray host =
            port == 22 ? hostName.toUtf8() : QStringLiteral("[%1]:%2").arg(hostName).arg(port).toUtf8();
        while (!file.atEnd()) {
            const QByteArray line = file.readLine().trimmed();
            if (line.isEmpty() || line.startsWith('#'))
                continue;
            ssh_knownhosts_entry *rawEntry = nullptr;
            if (ssh_known_hosts_parse_line(host.constData(), line.constData(), &rawEntry) == SSH_OK) {
                const KnownHostsEntryPtr entry(rawEntry);
                if (entry->publickey)
                    result.append(fingerprintOf(entry->publickey));
            } else {
                ssh_knownhosts_entry_free(rawEntry);
            }
        }
        return result;
    }

    void verifyHostKey()
    {
        ssh_key rawKey = nullptr;
        if (ssh_get_server_publickey(session.get(), &rawKey) != SSH_OK)
            fail(RemoteError::Kind::Connect, QStringLiteral("no host key: %1").arg(lastError()));
        const KeyPtr key(rawKey);
        fingerprint = fingerprintOf(key.get());
        const QString file = knownHostsPath();
        switch (ssh_session_is_known_server(session.get())) {
        case SSH_KNOWN_HOSTS_OK:
            return;
        case SSH_KNOWN_HOSTS_CHANGED:
        case SSH_KNOWN_HOSTS_OTHER: {
            const QStringList onFile = knownFingerprints();
            const QString known =
                onFile.isEmpty() ? QStringLiteral("another key") : onFile.join(QStringLiteral(", "));
            fail(RemoteError::Kind::HostKeyChanged,
                 QStringLiteral("HOST KEY CHANGED: the server offers %1 but %2 has %3 for this "
                                "host. Someone may be intercepting the connection; if the host "
                                "was reinstalled, remove its old line from %2.")
                     .arg(fingerprint, file, known));
        }
        case SSH_KNOWN_HOSTS_NOT_FOUND:
        case SSH_KNOWN_HOSTS_UNKNOWN:
            if (callbacks.acceptUnknownHostKey && callbacks.acceptUnknownHostKey(where(), fingerprint)) {
                QDir().mkpath(QFileInfo(file).absolutePath());
                if (ssh_session_update_known_hosts(session.get()) != SSH_OK)
                    fail(RemoteError::Kind::HostKeyUnknown,
                         QStringLiteral("cannot record the host key in %1: %2").arg(file, lastError()));
                qCInfo(lcRemote) << "recorded host key" << fingerprint << "for" << where() << "in" << file;
                return;
            }
            fail(RemoteError::Kind::HostKeyUnknown,
                 QStringLiteral("unknown host key %1 (not in %2); verify it with the cluster's "
                                "admins, then accept it")
                     .arg(fingerprint, file));
        case SSH_KNOWN_HOSTS_ERROR:
            break;
        }
        fail(RemoteError::Kind::Connect, QStringLiteral("cannot check the host key: %1").arg(lastError()));
    }

    bool tryKeyFile(const QString &keyFile, QStringList &tried)
    {
        ssh_key rawKey = nullptr;
        const QByteArray path = QFile::encodeName(keyFile);
        // The passphrase, if the key has one, comes from the callback through passphrasePrompt.
        if (ssh_pki_import_privkey_file(path.constData(), nullptr, &Impl::passphrasePrompt, this, &rawKey) !=
            SSH_OK) {
            tried.append(QStringLiteral("cannot read the key %1 (missing, or its passphrase was not given)")
                             .arg(keyFile));
            return false;
        }
        const KeyPtr key(rawKey);
        const int rc = ssh_userauth_publickey(session.get(), nullptr, key.get());
        if (rc == SSH_AUTH_SUCCESS)
            return true;
        if (rc == SSH_AUTH_ERROR)  // the connection failed (sshd restarted mid-handshake), not the key
            fail(RemoteError::Kind::Connect, QStringLiteral("authentication failed: %1").arg(lastError()));
        tried.append(QStringLiteral("the key %1 was refused").arg(keyFile));
        return false;
    }

    bool tryKeyboardInteractive(QStringList &tried)
    {
        int rc = ssh_userauth_kbdint(session.get(), nullptr, nullptr);
        while (rc == SSH_AUTH_INFO) {
            const int count = ssh_userauth_kbdint_getnprompts(session.get());
            QList<Prompt> prompts;
            for (int i = 0; i < count; ++i) {
                char echo = 0;
                const char *text =
                    ssh_userauth_kbdint_getprompt(session.get(), static_cast<unsigned>(i), &echo);
                prompts.append({QString::fromUtf8(text), echo != 0});
            }
            std::optional<QList<QByteArray>> answers = callbacks.keyboardInteractive(
                QString::fromUtf8(ssh_userauth_kbdint_getname(session.get())),
                QString::fromUtf8(ssh_userauth_kbdint_getinstruction(session.get())), prompts);
            if (!answers || answers->size() != count) {
                tried.append(QStringLiteral("keyboard-interactive: not answered"));
                return false;
            }
            for (int i = 0; i < count; ++i) {
                QByteArray &answer = (*answers)[i];
                ssh_userauth_kbdint_setanswer(session.get(), static_cast<unsigned>(i), answer.constData());
                wipe(answer);
            }
            rc = ssh_userauth_kbdint(session.get(), nullptr, nullptr);
        }
        if (rc == SSH_AUTH_SUCCESS)
            return true;
        tried.append(QStringLiteral("keyboard-interactive was refused"));
        return false;
    }

    // Agent, then key files, then keyboard-interactive, then password — what OpenSSH tries, in
    // its order; only methods the server offers.
    void authenticate()
    {
        int rc = ssh_userauth_none(session.get(), nullptr);
        if (rc == SSH_AUTH_SUCCESS)
            return;
        if (rc == SSH_AUTH_ERROR)
            fail(RemoteError::Kind::Connect, QStringLiteral("authentication failed: %1").arg(lastError()));
        const int methods = ssh_userauth_list(session.get(), nullptr);
        QStringList tried;
        if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
            if (!qEnvironmentVariableIsEmpty("SSH_AUTH_SOCK")) {
                if (ssh_userauth_agent(session.get(), nullptr) == SSH_AUTH_SUCCESS)
                    return;
                tried.append(QStringLiteral("no key of the agent was accepted"));
            }
            if (!endpoint.identityFile.isEmpty()) {
                if (tryKeyFile(endpoint.identityFile, tried))
                    return;
            } else {
                // The config file's IdentityFile entries, then ~/.ssh/id_* (what `ssh` does).
                if (ssh_userauth_publickey_auto(session.get(), nullptr, nullptr) == SSH_AUTH_SUCCESS)
                    return;
                tried.append(
                    QStringLiteral("no key of ~/.ssh/id_* or the config's IdentityFile was accepted"));
            }
        }
        if ((methods & SSH_AUTH_METHOD_INTERACTIVE) && callbacks.keyboardInteractive) {
            if (tryKeyboardInteractive(tried))
                return;
        }
        if ((methods & SSH_AUTH_METHOD_PASSWORD) && callbacks.password) {
            if (std::optional<QByteArray> secret = callbacks.password(where())) {
                rc = ssh_userauth_password(session.get(), nullptr, secret->constData());
                wipe(*secret);
                if (rc == SSH_AUTH_SUCCESS)
                    return;
                tried.append(QStringLiteral("the password was refused"));
            }
        }
        if (tried.isEmpty())
            tried.append(QStringLiteral("the server offers no method this client can use"));
        if (!ssh_is_connected(session.get()))  // closed under us: try again later, not a refusal
            fail(RemoteError::Kind::Connect,
                 QStringLiteral("the connection closed during authentication (%1)")
                     .arg(tried.join(QStringLiteral("; "))));
        fail(RemoteError::Kind::Auth,
             QStringLiteral("authentication failed: %1. Add your key to ssh-agent (ssh-add) or give "
                            "the profile an identity file.")
                 .arg(tried.join(QStringLiteral("; "))));
    }

    ssh_session connected()
    {
        if (!session || !ssh_is_connected(session.get()))
            fail(RemoteError::Kind::Connect, QStringLiteral("not connected"), false);
        return session.get();
    }

    void drop()
    {
        sftp.reset();
        session.reset();
    }

    // --- exec ------------------------------------------------------------------------------
    struct Running {
        ChannelPtr channel;
        QByteArray command;
        QByteArray input;  // still to be written to the command's stdin
        qsizetype written = 0;
        bool inputClosed = false;  // EOF sent (or the remote side stopped reading)
        std::chrono::milliseconds timeout{};
        QDeadlineTimer deadline;
        Outcome outcome;
        bool done = false;
    };

    // Reads what has arrived on both streams without waiting.
    void drain(Running &run, std::array<char, 64 * 1024> &buffer)
    {
        for (const int isStderr : {0, 1}) {
            for (;;) {
                const int n = ssh_channel_read_nonblocking(run.channel.get(), buffer.data(),
                                                           static_cast<uint32_t>(buffer.size()), isStderr);
                if (n == SSH_ERROR)
                    fail(RemoteError::Kind::Connect,
                         QStringLiteral("connection lost while running `%1`: %2")
                             .arg(QString::fromUtf8(run.command), lastError()));
                if (n <= 0)
                    break;
                (isStderr ? run.outcome.result.err : run.outcome.result.out).append(buffer.data(), n);
            }
        }
    }

    // Writes as much of the command's stdin as the remote window takes now, without waiting, so
    // megabytes of input never block the event loop (the other channels and this one's output
    // go on); EOF once all is written. A command that stopped reading (it exited, or closed its
    // stdin) gets no more: that is its business, its exit status tells.
    void feed(Running &run)
    {
        if (run.inputClosed)
            return;
        ssh_channel channel = run.channel.get();
        while (run.written < run.input.size()) {
            if (ssh_channel_is_eof(channel) || ssh_channel_is_closed(channel)) {
                run.inputClosed = true;
                return;
            }
            const qint64 window = ssh_channel_window_size(channel);
            if (window <= 0)
                return;  // the window adjust wakes the event loop
            // 256 KiB at most per turn: output is drained between pieces.
            const qint64 piece = std::min<qint64>({window, run.input.size() - run.written, 256 * 1024});
            const int n =
                ssh_channel_write(channel, run.input.constData() + run.written, static_cast<uint32_t>(piece));
            if (n == SSH_ERROR) {
                if (!ssh_is_connected(session.get()))
                    fail(RemoteError::Kind::Connect,
                         QStringLiteral("connection lost while sending input to `%1`: %2")
                             .arg(QString::fromUtf8(run.command), lastError()));
                run.inputClosed = true;  // the channel is closing: the command ended
                return;
            }
            run.written += n;
            if (n == 0)
                return;
        }
        ssh_channel_send_eof(channel);
        run.inputClosed = true;
        run.input.clear();
    }

    // Whether libssh took in packets for this channel during the reads above (reading one stream
    // handles whatever arrived: the other stream's data, the EOF, a window adjust for our input).
    // Those are off the socket, so the wait below would not wake for them: the loop goes round
    // again instead. Measured before this check: a 1,000-file read or squeue stalled for the
    // whole 60 s wait about once in ten. Stderr is asked first: asking stdout last handles
    // packets only when its own buffer is empty, and whatever they bring shows in its answer
    // (data, or SSH_EOF with the EOF) except stderr data, which the EOF after it will wake.
    bool takenIn(Running &run)
    {
        ssh_channel channel = run.channel.get();
        if (!run.inputClosed && ssh_channel_window_size(channel) > 0)
            return true;
        return ssh_channel_poll(channel, 1) != 0 || ssh_channel_poll(channel, 0) != 0;
    }

    QList<Outcome> execMany(const QList<Command> &commands)
    {
        ssh_session s = connected();
        std::vector<Running> runs(static_cast<size_t>(commands.size()));
        EventPtr event;
        std::array<char, 64 * 1024> buffer{};
        try {
            for (qsizetype i = 0; i < commands.size(); ++i) {
                Running &run = runs[static_cast<size_t>(i)];
                run.command = commands[i].line;
                run.input = commands[i].input;
                run.inputClosed = run.input.isEmpty();  // no input: stdin is left as it was
                run.timeout = commands[i].timeout;
                run.deadline = QDeadlineTimer(run.timeout);
                run.channel.reset(ssh_channel_new(s));
                if (!run.channel || ssh_channel_open_session(run.channel.get()) != SSH_OK)
                    // Nothing ran: a dead connection shows here, and the call may be retried.
                    fail(RemoteError::Kind::Connect,
                         QStringLiteral("cannot open a channel: %1").arg(lastError()), false);
                ++commandsSent;
                if (ssh_channel_request_exec(run.channel.get(), run.command.constData()) != SSH_OK)
                    fail(RemoteError::Kind::Channel,
                         QStringLiteral("cannot run `%1`: %2")
                             .arg(QString::fromUtf8(run.command), lastError()));
            }

            // One wait for every channel: the event wakes on any packet of this session, so a
            // command's end is seen as soon as it arrives (no polling interval).
            event.reset(ssh_event_new());
            if (!event || ssh_event_add_session(event.get(), s) != SSH_OK) {
                event.reset();
                fail(RemoteError::Kind::Channel,
                     QStringLiteral("cannot wait for the session: %1").arg(lastError()));
            }
            for (;;) {
                qint64 wait = -1;
                bool pending = false;
                bool again = false;
                for (Running &run : runs) {
                    if (run.done)
                        continue;
                    feed(run);
                    drain(run, buffer);
                    if (ssh_channel_is_eof(run.channel.get())) {
                        drain(run, buffer);
                        run.outcome.result.exitStatus = ssh_channel_get_exit_status(run.channel.get());
                        run.channel.reset();
                        run.done = true;
                        qCDebug(lcRemote) << where() << run.command << "->" << run.outcome.result.exitStatus;
                        continue;
                    }
                    if (run.deadline.hasExpired()) {
                        // Ask the remote side to stop it (OpenSSH >= 7.9 honours "signal").
                        ssh_channel_request_send_signal(run.channel.get(), "TERM");
                        run.channel.reset();
                        run.done = true;
                        run.outcome.error = RemoteError(RemoteError::Kind::Timeout,
                                                        QStringLiteral("%1: `%2` did not finish within %3 ms")
                                                            .arg(where(), QString::fromUtf8(run.command))
                                                            .arg(run.timeout.count()));
                        continue;
                    }
                    pending = true;
                    const qint64 left = run.deadline.remainingTime();
                    wait = wait < 0 ? left : std::min(wait, left);
                    again = again || takenIn(run);
                }
                if (!pending)
                    break;
                if (again)
                    continue;
                const int rc =
                    ssh_event_dopoll(event.get(), static_cast<int>(std::clamp<qint64>(wait, 1, 60'000)));
                if (rc == SSH_ERROR || !ssh_is_connected(s))
                    fail(RemoteError::Kind::Connect,
                         QStringLiteral("connection lost while running commands: %1").arg(lastError()));
            }
        } catch (...) {
            // Channels and the event go before the session they belong to.
            if (event)
                ssh_event_remove_session(event.get(), s);
            event.reset();
            runs.clear();
            if (session && !ssh_is_connected(s))
                drop();
            throw;
        }
        ssh_event_remove_session(event.get(), s);
        QList<Outcome> outcomes;
        outcomes.reserve(commands.size());
        for (Running &run : runs)
            outcomes.append(std::move(run.outcome));
        return outcomes;
    }

    // --- SFTP ------------------------------------------------------------------------------
    sftp_session sftpSession()
    {
        ssh_session s = connected();
        if (!sftp) {
            sftp.reset(sftp_new(s));
            if (!sftp || sftp_init(sftp.get()) != SSH_OK) {
                sftp.reset();
                fail(RemoteError::Kind::Sftp, QStringLiteral("cannot start SFTP: %1").arg(lastError()));
            }
        }
        return sftp.get();
    }

    [[noreturn]] void failSftp(const QString &what, const QString &path)
    {
        const int code = sftp ? sftp_get_error(sftp.get()) : -1;
        QString reason;
        switch (code) {
        case SSH_FX_NO_SUCH_FILE:
        case SSH_FX_NO_SUCH_PATH:
            reason = QStringLiteral("no such file or directory");
            break;
        case SSH_FX_PERMISSION_DENIED:
            reason = QStringLiteral("permission denied");
            break;
        case SSH_FX_FILE_ALREADY_EXISTS:
            reason = QStringLiteral("already exists");
            break;
        default:
            reason = QStringLiteral("SFTP error %1: %2").arg(code).arg(lastError());
        }
        if (session && !ssh_is_connected(session.get()))
            drop();
        fail(RemoteError::Kind::Sftp, QStringLiteral("%1 %2: %3").arg(what, path, reason));
    }

    static void checkCancel(const Transfer &transfer, const QString &path, const QString &host)
    {
        if (transfer.cancel && transfer.cancel->load())
            throw RemoteError(RemoteError::Kind::Cancelled,
                              QStringLiteral("%1: transfer of %2 cancelled").arg(host, path));
    }

    // Writes chunks from `next` (empty: done) to a temporary name beside `path`, then renames it
    // over `path` (OpenSSH's posix-rename, which libssh uses when offered: atomic, replaces).
    void writeAtomically(const QString &path, quint32 mode, qint64 total, const Transfer &transfer,
                         const std::function<QByteArray()> &next)
    {
        sftp_session sf = sftpSession();
        const QString temp = QStringLiteral("%1.orrery-tmp-%2")
                                 .arg(path)
                                 .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'));
        const QByteArray tempName = temp.toUtf8();
        SftpFilePtr file(
            sftp_open(sf, tempName.constData(), O_WRONLY | O_CREAT | O_EXCL, static_cast<mode_t>(mode)));
        if (!file)
            failSftp(QStringLiteral("cannot create"), temp);
        try {
            qint64 done = 0;
            for (;;) {
                checkCancel(transfer, path, where());
                const QByteArray chunk = next();
                if (chunk.isEmpty())
                    break;
                for (qsizetype at = 0; at < chunk.size();) {
                    // OpenSSH's sftp-server drops the connection on a message over 256 KiB, and
                    // libssh 0.10 does not split writes: 32 KiB per request (libssh's own limit).
                    const size_t piece = static_cast<size_t>(std::min<qint64>(chunk.size() - at, 32 * 1024));
                    const ssize_t n = sftp_write(file.get(), chunk.constData() + at, piece);
                    if (n <= 0)
                        failSftp(QStringLiteral("cannot write"), temp);
                    at += n;
                }
                done += chunk.size();
                if (transfer.progress)
                    transfer.progress(done, total);
            }
            if (sftp_close(file.release()) != SSH_OK)
                failSftp(QStringLiteral("cannot finish writing"), temp);
            const QByteArray target = path.toUtf8();
            if (sftp_rename(sf, tempName.constData(), target.constData()) != SSH_OK) {
                // SFTP v3's rename refuses an existing target (libssh 0.10 does not send
                // OpenSSH's posix-rename here); `mv -f` on the same filesystem is rename(2):
                // atomic, and it replaces.
                const QList<QByteArray> mv{"mv", "-f", "--", tempName, target};
                const QList<Outcome> moved =
                    execMany({Command{commandLine(mv), std::chrono::seconds(60), {}}});
                if (moved.front().error || moved.front().result.exitStatus != 0)
                    failSftp(QStringLiteral("cannot rename %1 to").arg(temp), path);
            }
        } catch (...) {
            file.reset();
            if (sftp && session && ssh_is_connected(session.get()))
                sftp_unlink(sftp.get(), tempName.constData());
            throw;
        }
    }
};

Session::Session(Endpoint endpoint, AuthCallbacks callbacks) : d(std::make_unique<Impl>())
{
    // "~/" as OpenSSH reads it (profiles written by hand have it; libssh's key loader does not).
    for (QString *file : {&endpoint.identityFile, &endpoint.knownHostsFile, &endpoint.sshConfigFile})
        if (file->startsWith(QLatin1String("~/")))
            *file = QDir::home().filePath(file->mid(2));
    d->endpoint = std::move(endpoint);
    d->callbacks = std::move(callbacks);
}

Session::~Session() = default;

const Endpoint &Session::endpoint() const
{
    return d->endpoint;
}

QString Session::where() const
{
    return d->where();
}

void Session::connect()
{
    d->drop();
    d->session.reset(ssh_new());
    if (!d->session)
        d->fail(RemoteError::Kind::Connect, QStringLiteral("out of memory"));
    try {
        d->setOptions();
        if (ssh_connect(d->session.get()) != SSH_OK)
            d->fail(RemoteError::Kind::Connect,
                    QStringLiteral("cannot connect: %1. Check the host, port and network (VPN?).")
                        .arg(d->lastError()));
        d->verifyHostKey();
        d->authenticate();
    } catch (...) {
        d->drop();
        throw;
    }
    qCDebug(lcRemote) << "connected" << d->where() << d->fingerprint;
}

bool Session::isConnected() const
{
    return d->session && ssh_is_connected(d->session.get());
}

void Session::disconnect()
{
    d->drop();
}

bool Session::ping()
{
    if (!isConnected())
        return false;
    if (ssh_send_keepalive(d->session.get()) != SSH_OK || !ssh_is_connected(d->session.get())) {
        qCInfo(lcRemote) << d->where() << "keepalive failed:" << d->lastError();
        d->drop();
        return false;
    }
    return true;
}

QString Session::serverFingerprint() const
{
    return d->fingerprint;
}

ExecResult Session::exec(const QByteArray &commandLine, std::chrono::milliseconds timeout)
{
    return exec(Command{commandLine, timeout, {}});
}

ExecResult Session::exec(const Command &command)
{
    QList<Outcome> outcomes = d->execMany({command});
    if (outcomes.front().error)
        throw *outcomes.front().error;
    return std::move(outcomes.front().result);
}

QList<Session::Outcome> Session::execMany(const QList<Command> &commands)
{
    return d->execMany(commands);
}

quint64 Session::commandCount() const
{
    return d->commandsSent;
}

QByteArray Session::readFile(const QString &path, qint64 offset, qint64 maxBytes)
{
    sftp_session sf = d->sftpSession();
    const QByteArray remotePath = path.toUtf8();
    const SftpFilePtr file(sftp_open(sf, remotePath.constData(), O_RDONLY, 0));
    if (!file)
        d->failSftp(QStringLiteral("cannot open"), path);
    if (offset > 0 && sftp_seek64(file.get(), static_cast<uint64_t>(offset)) != 0)
        d->failSftp(QStringLiteral("cannot seek to %1 in").arg(offset), path);
    QByteArray data;
    std::array<char, 64 * 1024> buffer{};
    while (maxBytes < 0 || data.size() < maxBytes) {
        const qint64 want = maxBytes < 0 ? qint64(buffer.size())
                                         : std::min<qint64>(qint64(buffer.size()), maxBytes - data.size());
        const ssize_t n = sftp_read(file.get(), buffer.data(), static_cast<size_t>(want));
        if (n < 0)
            d->failSftp(QStringLiteral("cannot read"), path);
        if (n == 0)
            break;
        data.append(buffer.data(), static_cast<qsizetype>(n));
    }
    return data;
}

void Session::writeFile(const QString &path, const QByteArray &data, quint32 mode)
{
    bool sent = false;
    d->writeAtomically(path, mode, data.size(), {}, [&]() {
        if (sent)
            return QByteArray();
        sent = true;
        return data;
    });
}

void Session::upload(const QString &localPath, const QString &remotePath, const Transfer &transfer,
                     quint32 mode)
{
    QFile local(localPath);
    if (!local.open(QIODevice::ReadOnly))
        d->fail(RemoteError::Kind::Sftp,
                QStringLiteral("cannot read the local file %1: %2").arg(localPath, local.errorString()));
    d->writeAtomically(remotePath, mode, local.size(), transfer, [&]() {
        const QByteArray chunk = local.read(kChunk);
        if (local.error() != QFileDevice::NoError)
            d->fail(RemoteError::Kind::Sftp,
                    QStringLiteral("cannot read the local file %1: %2").arg(localPath, local.errorString()));
        return chunk;
    });
}

void Session::download(const QString &remotePath, const QString &localPath, const Transfer &transfer)
{
    sftp_session sf = d->sftpSession();
    const QByteArray name = remotePath.toUtf8();
    const SftpFilePtr file(sftp_open(sf, name.constData(), O_RDONLY, 0));
    if (!file)
        d->failSftp(QStringLiteral("cannot open"), remotePath);
    qint64 total = -1;
    if (const SftpAttributesPtr attributes(sftp_fstat(file.get())); attributes)
        total = static_cast<qint64>(attributes->size);
    QSaveFile local(localPath);
    if (!local.open(QIODevice::WriteOnly))
        d->fail(RemoteError::Kind::Sftp,
                QStringLiteral("cannot write the local file %1: %2").arg(localPath, local.errorString()));
    // Pipelined: a synchronous read costs a round trip per request, so a 1 GB checkpoint over a
    // 50 ms link would take minutes. With kInFlight requests of kPiece outstanding, 2 MiB move
    // per round trip (64 x 32 KiB; 32 KiB is the read size every SFTP server must honour).
    constexpr uint32_t kPiece = 32 * 1024;
    constexpr size_t kInFlight = 64;
    QByteArray piece(kPiece, Qt::Uninitialized);
    std::deque<uint32_t> inFlight;
    // Every request sent must be read back, or libssh keeps its reply forever.
    auto settle = [&] {
        for (const uint32_t id : inFlight)
            sftp_async_read(file.get(), piece.data(), kPiece, id);
        inFlight.clear();
    };
    qint64 done = 0;
    try {
        for (;;) {
            Impl::checkCancel(transfer, remotePath, d->where());  // QSaveFile discards the partial file
            while (inFlight.size() < kInFlight) {
                const int id = sftp_async_read_begin(file.get(), kPiece);
                if (id < 0)
                    d->failSftp(QStringLiteral("cannot read"), remotePath);
                inFlight.push_back(static_cast<uint32_t>(id));
            }
            const uint32_t id = inFlight.front();
            inFlight.pop_front();
            const int n = sftp_async_read(file.get(), piece.data(), kPiece, id);
            if (n < 0)
                d->failSftp(QStringLiteral("cannot read"), remotePath);
            if (n == 0)
                break;
            if (local.write(piece.constData(), n) != n)
                d->fail(
                    RemoteError::Kind::Sftp,
                    QStringLiteral("cannot write the local file %1: %2").arg(localPath, local.errorString()));
            done += n;
            if (transfer.progress)
                transfer.progress(done, total);
            if (static_cast<uint32_t>(n) < kPiece) {
                // A short read (the end of the file, or a server that sends less): the requests
                // after it assumed a full piece, so drop them and go on from where we are.
                settle();
                if (sftp_seek64(file.get(), static_cast<uint64_t>(done)) != 0)
                    d->failSftp(QStringLiteral("cannot seek in"), remotePath);
            }
        }
        settle();
    } catch (...) {
        if (isConnected())
            settle();
        throw;
    }
    if (!local.commit())
        d->fail(RemoteError::Kind::Sftp,
                QStringLiteral("cannot write the local file %1: %2").arg(localPath, local.errorString()));
}

void Session::makeDirectories(const QString &path, quint32 mode)
{
    sftp_session sf = d->sftpSession();
    const QStringList parts = path.split(QLatin1Char('/'));
    QString prefix = path.startsWith(QLatin1Char('/')) ? QStringLiteral("/") : QString();
    for (const QString &part : parts) {
        if (part.isEmpty())
            continue;
        prefix +=
            (prefix.isEmpty() || prefix.endsWith(QLatin1Char('/')) ? QString() : QStringLiteral("/")) + part;
        if (std::optional<RemoteFileInfo> info = stat(prefix)) {
            if (!info->isDir)
                d->fail(RemoteError::Kind::Sftp,
                        QStringLiteral("cannot create the directory %1: %2 is a file").arg(path, prefix));
            continue;
        }
        const QByteArray name = prefix.toUtf8();
        // Another process may create it between the stat and here: fine if it is a directory.
        if (sftp_mkdir(sf, name.constData(), static_cast<mode_t>(mode)) != SSH_OK) {
            const std::optional<RemoteFileInfo> info = stat(prefix);
            if (!info || !info->isDir)
                d->failSftp(QStringLiteral("cannot create the directory"), prefix);
        }
    }
}

std::optional<RemoteFileInfo> Session::stat(const QString &path)
{
    sftp_session sf = d->sftpSession();
    const QByteArray name = path.toUtf8();
    const SftpAttributesPtr attributes(sftp_stat(sf, name.constData()));
    if (!attributes) {
        const int code = sftp_get_error(sf);
        if (code == SSH_FX_NO_SUCH_FILE || code == SSH_FX_NO_SUCH_PATH)
            return std::nullopt;
        d->failSftp(QStringLiteral("cannot stat"), path);
    }
    RemoteFileInfo info;
    info.size = static_cast<qint64>(attributes->size);
    info.isDir = attributes->type == SSH_FILEXFER_TYPE_DIRECTORY;
    info.permissions = attributes->permissions & 07777;
    info.modified = QDateTime::fromSecsSinceEpoch(static_cast<qint64>(attributes->mtime));
    return info;
}

void Session::remove(const QString &path)
{
    sftp_session sf = d->sftpSession();
    const QByteArray name = path.toUtf8();
    if (sftp_unlink(sf, name.constData()) != SSH_OK)
        d->failSftp(QStringLiteral("cannot remove"), path);
}

}  // namespace orrery::remote
