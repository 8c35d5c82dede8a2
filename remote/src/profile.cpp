// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/profile.h"

#include "orrery/core/paths.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/deploy.h"
#include "orrery/remote/error.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/slurm.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSaveFile>
#include <QUuid>

#include <cmath>

namespace orrery::remote {

namespace {

constexpr int kFormatVersion = 1;

QString text(const QJsonObject &json, const char *key)
{
    const QJsonValue v = json.value(QLatin1String(key));
    if (!v.isUndefined() && !v.isNull() && !v.isString())
        throw ProfileError(QStringLiteral("'%1' must be a string").arg(QLatin1String(key)),
                           ProfileError::Kind::Invalid);
    return v.toString();
}

}  // namespace

Endpoint ClusterProfile::endpoint() const
{
    Endpoint e;
    e.host = host;
    e.port = port;
    e.user = user;
    e.identityFile = identityFile;
    e.knownHostsFile = knownHostsFile;
    e.proxyJump = proxyJump;
    return e;
}

QJsonObject ClusterProfile::toJson() const
{
    QJsonObject json{{QStringLiteral("version"), kFormatVersion},
                     {QStringLiteral("name"), name},
                     {QStringLiteral("host"), host}};
    auto put = [&](const char *key, const QString &value) {
        if (!value.isEmpty())
            json.insert(QLatin1String(key), value);
    };
    if (port > 0)
        json.insert(QStringLiteral("port"), port);
    put("user", user);
    put("identity_file", identityFile);
    put("known_hosts", knownHostsFile);
    put("proxy_jump", proxyJump);
    put("remote_root", remoteRoot);
    put("partition", partition);
    put("account", account);
    if (!setup.isEmpty())
        json.insert(QStringLiteral("setup"), QJsonArray::fromStringList(setup));
    QJsonObject trainer = trainerPath.isEmpty()
        ? QJsonObject{{QStringLiteral("mode"), QStringLiteral("build")}}
        : QJsonObject{{QStringLiteral("mode"), QStringLiteral("path")},
                      {QStringLiteral("path"), trainerPath}};
    if (buildOn == BuildOn::Job)
        trainer.insert(QStringLiteral("build_on"), QStringLiteral("job"));
    json.insert(QStringLiteral("trainer"), trainer);
    if (gpuHourPrice)
        json.insert(QStringLiteral("gpu_hour_price"), *gpuHourPrice);
    put("currency", currency);
    return json;
}

std::optional<core::Price> ClusterProfile::price() const
{
    if (!gpuHourPrice)
        return std::nullopt;
    return core::Price{*gpuHourPrice, currency};
}

QString ClusterProfile::priceProblem(double price)
{
    return std::isfinite(price) && price >= 0
        ? QString()
        : QStringLiteral("gpu_hour_price must be a number >= 0 (a price per GPU-hour)");
}

QString ClusterProfile::currencyProblem(const QString &currency)
{
    static const QRegularExpression word(QStringLiteral("^[A-Za-z0-9_-]{1,16}$"));
    return word.match(currency).hasMatch()
        ? QString()
        : QStringLiteral("currency must be 1 to 16 letters, digits, '_' or '-' (e.g. USD, EUR, credits)");
}

ClusterProfile ClusterProfile::fromJson(const QJsonObject &json)
{
    for (auto it = json.begin(); it != json.end(); ++it)
        if (it.key().contains(QLatin1String("password"), Qt::CaseInsensitive) ||
            it.key().contains(QLatin1String("passphrase"), Qt::CaseInsensitive))
            throw ProfileError(
                QStringLiteral("'%1': profiles never hold secrets; remove it (Orrery asks when "
                               "connecting, or use ssh-agent)")
                    .arg(it.key()),
                ProfileError::Kind::Invalid);
    if (json.value(QStringLiteral("version")).toInt(kFormatVersion) != kFormatVersion)
        throw ProfileError(QStringLiteral("format version %1 is not supported (this Orrery reads %2)")
                               .arg(json.value(QStringLiteral("version")).toInt())
                               .arg(kFormatVersion),
                           ProfileError::Kind::Invalid);
    ClusterProfile p;
    p.name = text(json, "name");
    p.host = text(json, "host");
    if (p.host.isEmpty())
        throw ProfileError(QStringLiteral("'host' is missing"), ProfileError::Kind::Invalid);
    const QJsonValue port = json.value(QStringLiteral("port"));
    if (!port.isUndefined() && (!port.isDouble() || port.toInt() < 1 || port.toInt() > 65535))
        throw ProfileError(QStringLiteral("'port' must be a number from 1 to 65535"),
                           ProfileError::Kind::Invalid);
    p.port = port.toInt(0);
    p.user = text(json, "user");
    p.identityFile = text(json, "identity_file");
    p.knownHostsFile = text(json, "known_hosts");
    p.proxyJump = text(json, "proxy_jump");
    p.remoteRoot = text(json, "remote_root");
    p.partition = text(json, "partition");
    p.account = text(json, "account");
    const QJsonValue setup = json.value(QStringLiteral("setup"));
    if (!setup.isUndefined()) {
        if (!setup.isArray())
            throw ProfileError(QStringLiteral("'setup' must be a list of lines"),
                               ProfileError::Kind::Invalid);
        for (const QJsonValue &line : setup.toArray()) {
            if (!line.isString())
                throw ProfileError(QStringLiteral("'setup' must be a list of lines"),
                                   ProfileError::Kind::Invalid);
            p.setup.append(line.toString());
        }
    }
    const QJsonObject trainer = json.value(QStringLiteral("trainer")).toObject();
    const QString mode = trainer.value(QStringLiteral("mode")).toString(QStringLiteral("build"));
    if (mode == QLatin1String("path")) {
        p.trainerPath = trainer.value(QStringLiteral("path")).toString();
        if (p.trainerPath.isEmpty())
            throw ProfileError(QStringLiteral("trainer mode 'path' needs a 'path'"),
                               ProfileError::Kind::Invalid);
    } else if (mode != QLatin1String("build")) {
        throw ProfileError(QStringLiteral("trainer mode must be 'build' or 'path', not '%1'").arg(mode),
                           ProfileError::Kind::Invalid);
    }
    const QString buildOn = trainer.value(QStringLiteral("build_on")).toString(QStringLiteral("login"));
    if (buildOn == QLatin1String("job"))
        p.buildOn = ClusterProfile::BuildOn::Job;
    else if (buildOn != QLatin1String("login"))
        throw ProfileError(QStringLiteral("trainer build_on must be 'login' or 'job', not '%1'").arg(buildOn),
                           ProfileError::Kind::Invalid);
    const QJsonValue price = json.value(QStringLiteral("gpu_hour_price"));
    if (!price.isUndefined() && !price.isNull()) {
        if (!price.isDouble() || !priceProblem(price.toDouble()).isEmpty())
            throw ProfileError(priceProblem(-1), ProfileError::Kind::Invalid);
        p.gpuHourPrice = price.toDouble();
    }
    p.currency = text(json, "currency");
    if (!p.currency.isEmpty() && !currencyProblem(p.currency).isEmpty())
        throw ProfileError(currencyProblem(p.currency), ProfileError::Kind::Invalid);
    return p;
}

std::optional<core::Price> clusterPrice(const QString &cluster, const ProfileStore &store)
{
    if (cluster.isEmpty() || !ProfileStore::isValidName(cluster))
        return std::nullopt;
    try {
        const auto profile = store.find(cluster);
        return profile ? profile->price() : std::nullopt;
    } catch (const ProfileError &) {
        return std::nullopt;  // a broken profile: `orrery cluster list` says what is wrong
    }
}

ProfileStore::ProfileStore(QString directory) : m_directory(std::move(directory))
{ }

QString ProfileStore::defaultDirectory()
{
    return QDir(core::configDirectory()).filePath(QStringLiteral("clusters"));
}

bool ProfileStore::isValidName(const QString &name)
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"));
    return pattern.match(name).hasMatch();
}

QString ProfileStore::pathOf(const QString &name) const
{
    return QDir(m_directory).filePath(name + QStringLiteral(".json"));
}

std::optional<ClusterProfile> ProfileStore::find(const QString &name) const
{
    if (!isValidName(name))
        return std::nullopt;
    QFile file(pathOf(name));
    if (!file.exists())
        return std::nullopt;
    if (!file.open(QIODevice::ReadOnly))
        throw ProfileError(QStringLiteral("%1: %2").arg(file.fileName(), file.errorString()));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (!doc.isObject())
        throw ProfileError(QStringLiteral("%1: not a JSON object (%2 at byte %3)")
                               .arg(file.fileName(), error.errorString())
                               .arg(error.offset),
                           ProfileError::Kind::Invalid);
    try {
        ClusterProfile profile = ClusterProfile::fromJson(doc.object());
        profile.name = name;  // the file name is the name
        return profile;
    } catch (const ProfileError &e) {
        throw ProfileError(QStringLiteral("%1: %2").arg(file.fileName(), e.message()), e.errorKind());
    }
}

QList<ClusterProfile> ProfileStore::list(QStringList *problems) const
{
    QList<ClusterProfile> result;
    const QStringList files =
        QDir(m_directory).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString &file : files) {
        const QString name = file.chopped(5);
        if (!isValidName(name))
            continue;
        try {
            if (std::optional<ClusterProfile> p = find(name))
                result.append(*p);
        } catch (const ProfileError &e) {
            if (!problems)
                throw;
            problems->append(e.message());
        }
    }
    return result;
}

void ProfileStore::save(const ClusterProfile &profile)
{
    if (!isValidName(profile.name))
        throw ProfileError(QStringLiteral("'%1' is not a valid cluster name (letters, digits, '.', '_', '-'; "
                                          "not starting with '.' or '-')")
                               .arg(profile.name),
                           ProfileError::Kind::Invalid);
    ClusterProfile::fromJson(profile.toJson());  // the same checks as on reading
    if (!QDir().mkpath(m_directory))
        throw ProfileError(QStringLiteral("cannot create %1").arg(m_directory));
    QFile::setPermissions(m_directory, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QSaveFile file(pathOf(profile.name));
    // QSaveFile's temporary file takes these permissions before anything is written to it.
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(QFile::ReadOwner | QFile::WriteOwner))
        throw ProfileError(QStringLiteral("%1: %2").arg(file.fileName(), file.errorString()));
    file.write(QJsonDocument(profile.toJson()).toJson(QJsonDocument::Indented));
    if (!file.commit())
        throw ProfileError(QStringLiteral("%1: %2").arg(file.fileName(), file.errorString()));
}

bool ProfileStore::remove(const QString &name)
{
    return isValidName(name) && QFile::remove(pathOf(name));
}

ClusterReport probeCluster(const ClusterProfile &profile, const AuthCallbacks &callbacks)
{
    Connection connection(profile.endpoint(), callbacks, probeConnectionOptions());
    return probeCluster(profile, connection);
}

QString absoluteRemoteRoot(const ClusterProfile &profile, Connection &connection)
{
    QString root = profile.remoteRoot;
    const bool tilde = root == QLatin1String("~") || root.startsWith(QLatin1String("~/"));
    const bool home = root == QLatin1String("$HOME") || root.startsWith(QLatin1String("$HOME/"));
    if (tilde || home) {
        const ExecResult r = connection.exec(R"(printf '%s' "$HOME")").result();
        const QString dir = QString::fromUtf8(r.out);
        if (r.exitStatus != 0 || !dir.startsWith(QLatin1Char('/')))
            throw RemoteError(
                RemoteError::Kind::Slurm,
                QStringLiteral("%1: cannot find the home directory for the remote root '%2': %3")
                    .arg(profile.name, root, QString::fromUtf8(r.err.isEmpty() ? r.out : r.err).trimmed()));
        root = dir + root.mid(tilde ? 1 : 5);
    }
    if (!root.startsWith(QLatin1Char('/')))
        throw RemoteError(
            RemoteError::Kind::Slurm,
            QStringLiteral("%1: the remote root '%2' is not an absolute path").arg(profile.name, root));
    return QDir::cleanPath(root);
}

ConnectionOptions probeConnectionOptions()
{
    ConnectionOptions options;
    options.reconnectAttempts = 1;  // a test reports what is wrong; it does not wait it out
    return options;
}

ClusterReport probeCluster(const ClusterProfile &profile, Connection &connection)
{
    ClusterReport report;
    auto step = [&](const QString &what, auto body) {
        try {
            body();
        } catch (const RemoteError &e) {
            report.errors.append(QStringLiteral("%1: %2").arg(what, e.message()));
        } catch (const std::exception &e) {
            report.errors.append(QStringLiteral("%1: %2").arg(what, QString::fromUtf8(e.what())));
        }
    };
    try {
        connection
            .run([&](Session &s) {
                report.where = s.where();
                report.fingerprint = s.serverFingerprint();
            })
            .waitForFinished();
        report.connected = true;
    } catch (const RemoteError &e) {
        report.errors.append(e.message());
        return report;
    }

    SlurmClient slurm(connection);
    step(QStringLiteral("Slurm version (sinfo -V)"), [&] { report.slurmVersion = slurm.version(); });
    step(QStringLiteral("partitions and nodes (sinfo)"), [&] { report.info = slurm.clusterInfo(); });
    step(QStringLiteral("accounting (sacct)"), [&] { report.accounting = slurm.hasAccounting(); });

    if (profile.remoteRoot.isEmpty()) {
        report.remoteRootError = QStringLiteral("no remote_root in the profile");
        report.errors.append(
            QStringLiteral("remote root: set one with `orrery cluster add ... --remote-root DIR`"));
    } else {
        try {
            // Writable means: we can create it and put a file in it (then take the file away).
            connection
                .run([&](Session &s) {
                    s.makeDirectories(profile.remoteRoot);
                    const QString probe = profile.remoteRoot + QStringLiteral("/.orrery-write-test-") +
                        QUuid::createUuid().toString(QUuid::Id128);
                    s.writeFile(probe, "ok\n", 0600);
                    s.remove(probe);
                })
                .waitForFinished();
            report.remoteRootWritable = true;
        } catch (const RemoteError &e) {
            report.remoteRootError = e.message();
            report.errors.append(
                QStringLiteral("remote root %1 is not writable: %2").arg(profile.remoteRoot, e.message()));
        }
    }

    if (!profile.setup.isEmpty()) {
        step(QStringLiteral("setup lines"), [&] {
            // The setup lines are shell by design (the user wrote them to be run); they are one
            // quoted argument of `bash -c`, so nothing else is interpreted around them.
            const QList<QByteArray> argv{"bash", "-c", profile.setup.join(QLatin1Char('\n')).toUtf8()};
            report.setup = connection.exec(commandLine(argv), std::chrono::minutes(2)).result();
            if (report.setup->exitStatus != 0)
                report.errors.append(QStringLiteral("setup lines exited with status %1: %2")
                                         .arg(report.setup->exitStatus)
                                         .arg(QString::fromUtf8(report.setup->err).trimmed()));
        });
    }
    // The trainer sweeps will run: the profile's path, or the deployed build (not an error when
    // it is not built yet: the first sweep submit deploys it).
    step(QStringLiteral("remote root"),
         [&] { report.trainer = sweepTrainerPath(withAbsoluteRemoteRoot(profile, connection)); });
    if (!report.trainer.isEmpty()) {
        step(QStringLiteral("trainer"), [&] {
            report.trainerReady =
                connection.exec(commandLine(QList<QByteArray>{"test", "-x", report.trainer.toUtf8()}))
                    .result()
                    .exitStatus == 0;
            if (!report.trainerReady && !profile.trainerPath.isEmpty())
                report.errors.append(QStringLiteral("trainer %1 is not an executable file on the cluster")
                                         .arg(report.trainer));
        });
    }
    return report;
}

QString trainerSummary(const ClusterProfile &p, const ClusterReport &r)
{
    if (r.trainer.isEmpty())
        return QStringLiteral("orrery-train from the cluster's PATH (no bundled source found here)");
    if (!p.trainerPath.isEmpty())
        return r.trainer + (r.trainerReady ? QString() : QStringLiteral(" (missing)"));
    return r.trainerReady ? QStringLiteral("deployed: %1").arg(r.trainer)
                          : QStringLiteral("not deployed yet (`orrery cluster deploy %1`, or the first sweep "
                                           "submit deploys it)")
                                .arg(p.name);
}

}  // namespace orrery::remote
