// SPDX-License-Identifier: GPL-3.0-or-later
//
// The wall around libssh: every libssh handle lives in a unique_ptr with libssh's own free
// function, and no libssh type appears outside this file.
#include "orrery/remote/session.h"

#include "logging.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <fcntl.h>

#include <array>
#include <type_traits>

Q_LOGGING_CATEGORY(lcRemote, "orrery.remote")

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

}  // namespace

struct Session::Impl {
    Endpoint endpoint;
    SessionPtr session;
    QString fingerprint;

    QString where() const
    {
        return QStringLiteral("%1@%2:%3").arg(endpoint.user, endpoint.host).arg(endpoint.port);
    }
    QString lastError() const
    {
        return session ? QString::fromUtf8(ssh_get_error(session.get())) : QString();
    }

    [[noreturn]] void fail(RemoteError::Kind kind, const QString &what)
    {
        throw RemoteError(kind, QStringLiteral("%1: %2").arg(where(), what));
    }

    void setOptions()
    {
        ssh_session s = session.get();
        const QByteArray host = endpoint.host.toUtf8();
        const QByteArray user = endpoint.user.toUtf8();
        const unsigned int port = static_cast<unsigned int>(endpoint.port);
        const long timeoutSec = static_cast<long>(
            std::chrono::duration_cast<std::chrono::seconds>(endpoint.connectTimeout).count());
        // This minimal session takes its settings from the Endpoint alone; ~/.ssh/config
        // support arrives with the Remote issue.
        const int processConfig = 0;
        const bool ok = ssh_options_set(s, SSH_OPTIONS_HOST, host.constData()) == SSH_OK &&
            ssh_options_set(s, SSH_OPTIONS_PORT, &port) == SSH_OK &&
            (user.isEmpty() || ssh_options_set(s, SSH_OPTIONS_USER, user.constData()) == SSH_OK) &&
            ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeoutSec) == SSH_OK &&
            ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &processConfig) == SSH_OK;
        if (!ok)
            fail(RemoteError::Kind::Connect,
                 QStringLiteral("invalid connection options: %1").arg(lastError()));
        if (!endpoint.knownHostsFile.isEmpty()) {
            const QByteArray known = QFile::encodeName(endpoint.knownHostsFile);
            // Only the given file decides; the system-wide list must not vouch for a host.
            ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, known.constData());
            ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
        }
    }

    // The fingerprints known_hosts holds for this host (libssh reports only that they differ).
    QStringList knownFingerprints() const
    {
        QStringList result;
        QFile file(endpoint.knownHostsFile.isEmpty()
                       ? QDir::home().filePath(QStringLiteral(".ssh/known_hosts"))
                       : endpoint.knownHostsFile);
        if (!file.open(QIODevice::ReadOnly))
            return result;
        // known_hosts names a host on another port than 22 as "[host]:port".
        const QByteArray host = endpoint.port == 22
            ? endpoint.host.toUtf8()
            : QStringLiteral("[%1]:%2").arg(endpoint.host).arg(endpoint.port).toUtf8();
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
        const QString file = endpoint.knownHostsFile.isEmpty() ? QStringLiteral("~/.ssh/known_hosts")
                                                               : endpoint.knownHostsFile;
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
            fail(RemoteError::Kind::HostKeyUnknown,
                 QStringLiteral("unknown host key %1 (not in %2); verify it with the cluster's "
                                "admins, then accept it")
                     .arg(fingerprint, file));
        case SSH_KNOWN_HOSTS_ERROR:
            break;
        }
        fail(RemoteError::Kind::Connect, QStringLiteral("cannot check the host key: %1").arg(lastError()));
    }

    void authenticate()
    {
        if (!endpoint.identityFile.isEmpty()) {
            ssh_key rawKey = nullptr;
            const QByteArray path = QFile::encodeName(endpoint.identityFile);
            if (ssh_pki_import_privkey_file(path.constData(), nullptr, nullptr, nullptr, &rawKey) != SSH_OK)
                fail(RemoteError::Kind::Auth,
                     QStringLiteral("cannot read the private key %1").arg(endpoint.identityFile));
            const KeyPtr key(rawKey);
            if (ssh_userauth_publickey(session.get(), nullptr, key.get()) == SSH_AUTH_SUCCESS)
                return;
            fail(RemoteError::Kind::Auth,
                 QStringLiteral("the key %1 was refused: %2").arg(endpoint.identityFile, lastError()));
        }
        // No key given: the agent, then ~/.ssh/id_* (what `ssh` does without -i).
        if (ssh_userauth_publickey_auto(session.get(), nullptr, nullptr) == SSH_AUTH_SUCCESS)
            return;
        fail(RemoteError::Kind::Auth,
             QStringLiteral("no key was accepted (agent, ~/.ssh/id_*): %1").arg(lastError()));
    }

    ssh_session connected()
    {
        if (!session || !ssh_is_connected(session.get()))
            fail(RemoteError::Kind::Connect, QStringLiteral("not connected"));
        return session.get();
    }
};

Session::Session(Endpoint endpoint) : d(std::make_unique<Impl>())
{
    d->endpoint = std::move(endpoint);
}

Session::~Session() = default;

const Endpoint &Session::endpoint() const
{
    return d->endpoint;
}

void Session::connect()
{
    d->session.reset(ssh_new());
    if (!d->session)
        d->fail(RemoteError::Kind::Connect, QStringLiteral("out of memory"));
    d->setOptions();
    if (ssh_connect(d->session.get()) != SSH_OK) {
        const QString error = d->lastError();
        d->session.reset();
        d->fail(RemoteError::Kind::Connect, QStringLiteral("cannot connect: %1").arg(error));
    }
    try {
        d->verifyHostKey();
        d->authenticate();
    } catch (...) {
        d->session.reset();
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
    d->session.reset();
}

QString Session::serverFingerprint() const
{
    return d->fingerprint;
}

ExecResult Session::exec(const QByteArray &commandLine, std::chrono::milliseconds timeout)
{
    ssh_session s = d->connected();
    const QString command = QString::fromUtf8(commandLine);
    ChannelPtr channel(ssh_channel_new(s));
    if (!channel || ssh_channel_open_session(channel.get()) != SSH_OK)
        d->fail(RemoteError::Kind::Channel, QStringLiteral("cannot open a channel: %1").arg(d->lastError()));
    if (ssh_channel_request_exec(channel.get(), commandLine.constData()) != SSH_OK)
        d->fail(RemoteError::Kind::Channel,
                QStringLiteral("cannot run `%1`: %2").arg(command, d->lastError()));

    ExecResult result;
    QElapsedTimer clock;
    clock.start();
    std::array<char, 64 * 1024> buffer{};
    // Drains what has arrived on both streams without waiting; true when something was read.
    auto drain = [&]() {
        bool any = false;
        for (const int isStderr : {0, 1}) {
            for (;;) {
                const int n = ssh_channel_read_nonblocking(channel.get(), buffer.data(),
                                                           static_cast<uint32_t>(buffer.size()), isStderr);
                if (n == SSH_ERROR)
                    d->fail(RemoteError::Kind::Connect,
                            QStringLiteral("connection lost while running `%1`: %2")
                                .arg(command, d->lastError()));
                if (n <= 0)
                    break;
                (isStderr ? result.err : result.out).append(buffer.data(), n);
                any = true;
            }
        }
        return any;
    };
    for (;;) {
        drain();
        if (ssh_channel_is_eof(channel.get())) {
            drain();
            break;
        }
        const auto left = timeout.count() - clock.elapsed();
        if (left <= 0)
            d->fail(RemoteError::Kind::Timeout,
                    QStringLiteral("`%1` did not finish within %2 ms").arg(command).arg(timeout.count()));
        // Wakes on new data or EOF; the cap keeps stderr-only output from waiting long.
        const int waitMs = static_cast<int>(std::min<qint64>(left, 50));
        if (ssh_channel_poll_timeout(channel.get(), waitMs, 0) == SSH_ERROR)
            d->fail(RemoteError::Kind::Connect,
                    QStringLiteral("connection lost while running `%1`: %2").arg(command, d->lastError()));
    }
    result.exitStatus = ssh_channel_get_exit_status(channel.get());
    qCDebug(lcRemote) << d->where() << command << "->" << result.exitStatus << "in" << clock.elapsed()
                      << "ms";
    return result;
}

QByteArray Session::readFile(const QString &path, qint64 offset, qint64 maxBytes)
{
    ssh_session s = d->connected();
    const SftpPtr sftp(sftp_new(s));
    if (!sftp || sftp_init(sftp.get()) != SSH_OK)
        d->fail(RemoteError::Kind::Sftp, QStringLiteral("cannot start SFTP: %1").arg(d->lastError()));
    const QByteArray remotePath = path.toUtf8();
    const SftpFilePtr file(sftp_open(sftp.get(), remotePath.constData(), O_RDONLY, 0));
    if (!file)
        d->fail(RemoteError::Kind::Sftp,
                QStringLiteral("cannot open %1 (SFTP error %2): %3")
                    .arg(path)
                    .arg(sftp_get_error(sftp.get()))
                    .arg(d->lastError()));
    if (offset > 0 && sftp_seek64(file.get(), static_cast<uint64_t>(offset)) != 0)
        d->fail(RemoteError::Kind::Sftp, QStringLiteral("cannot seek %1 to %2").arg(path).arg(offset));
    QByteArray data;
    std::array<char, 64 * 1024> buffer{};
    while (maxBytes < 0 || data.size() < maxBytes) {
        const qint64 want = maxBytes < 0 ? qint64(buffer.size())
                                         : std::min<qint64>(qint64(buffer.size()), maxBytes - data.size());
        const ssize_t n = sftp_read(file.get(), buffer.data(), static_cast<size_t>(want));
        if (n < 0)
            d->fail(RemoteError::Kind::Sftp,
                    QStringLiteral("read error in %1: %2").arg(path, d->lastError()));
        if (n == 0)
            break;
        data.append(buffer.data(), static_cast<qsizetype>(n));
    }
    return data;
}

}  // namespace orrery::remote
