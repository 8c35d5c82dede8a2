// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/core/error.h"
#include "orrery/core/usage.h"
#include "orrery/remote/session.h"
#include "orrery/remote/slurmparse.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>
#include <stdexcept>

namespace orrery::remote {

class Connection;
struct ConnectionOptions;

// A cluster as the user described it (ARCHITECTURE.md "Cluster profile"). Never a password or a
// passphrase: keys are files or the agent, secrets are asked for when connecting.
struct ClusterProfile {
    QString name;
    QString host;  // a host name, or a Host alias of ~/.ssh/config
    int port = 0;  // 0: the SSH config's, else 22
    QString user;
    QString identityFile;  // empty: the agent, the SSH config's IdentityFile, ~/.ssh/id_*
    QString knownHostsFile;  // empty: ~/.ssh/known_hosts
    QString proxyJump;  // [user@]host[:port]
    QString remoteRoot;  // run directories live under it, on the cluster's shared filesystem
    QString partition;
    QString account;
    QStringList setup;  // shell lines run before the trainer (module load, conda activate)
    QString trainerPath;  // empty: the trainer `orrery cluster deploy` builds from the bundled source
    // Where that build runs: many sites forbid builds on their login nodes.
    enum class BuildOn { Login, Job };
    BuildOn buildOn = BuildOn::Login;
    // What a GPU-hour costs here (docs/sweeps.md "GPU-hours and cost"): cost = GPU-hours × price.
    // nullopt: no price, no cost shown. `currency` names the unit ("USD", "EUR", "credits").
    std::optional<double> gpuHourPrice;
    QString currency;
    std::optional<core::Price> price() const;

    Endpoint endpoint() const;
    QJsonObject toJson() const;
    // Throws ProfileError naming what is wrong.
    static ClusterProfile fromJson(const QJsonObject &json);
    // Why a price or currency cannot be a profile's (empty: it can): a price is a finite number
    // >= 0; a currency is 1 to 16 letters, digits, '_' or '-'.
    static QString priceProblem(double price);
    static QString currencyProblem(const QString &currency);
};

class ProfileError : public core::Error {
public:
    explicit ProfileError(const QString &message, Kind kind = Kind::Failed) : core::Error(kind, message) { }
};

// The profiles of this user: one JSON file per cluster in <configDirectory()>/clusters/, the
// directory 0700 and each file 0600, written atomically. Cheap to construct; every call reads or
// writes the files, so two processes (CLI and GUI) see each other's changes. Not thread-safe
// for writes to the same profile (last writer wins, never a torn file).
class ProfileStore {
public:
    explicit ProfileStore(QString directory = defaultDirectory());
    static QString defaultDirectory();

    // Names are file names: letters, digits, '.', '_' and '-', not starting with '.' or '-'.
    static bool isValidName(const QString &name);

    QString directory() const { return m_directory; }
    QString pathOf(const QString &name) const;
    // Every profile, sorted by name. A broken file (hand-edited, emptied by a crash or a full
    // disk) does not hide the others: with `problems`, its error (naming the file) goes there and
    // the rest are listed; without, it throws ProfileError.
    QList<ClusterProfile> list(QStringList *problems = nullptr) const;
    std::optional<ClusterProfile> find(const QString &name) const;
    void save(const ClusterProfile &profile);  // throws ProfileError
    bool remove(const QString &name);

private:
    QString m_directory;
};

// The price per GPU-hour of the cluster named `cluster` (its profile's gpu_hour_price): nullopt
// for this machine (""), a cluster with no price, and one without a readable profile.
std::optional<core::Price> clusterPrice(const QString &cluster, const ProfileStore &store = ProfileStore());

// What `orrery cluster test` (and the GUI's "Test connection") reports about a cluster.
struct ClusterReport {
    bool connected = false;
    QString where;  // user@host:port
    QString fingerprint;
    QString slurmVersion;
    slurm::ClusterInfo info;
    std::optional<bool> accounting;
    bool remoteRootWritable = false;
    QString remoteRootError;
    std::optional<ExecResult> setup;  // what the setup lines printed (nullopt: none)
    QString trainer;  // the trainer sweeps will run: a path, or the deployed build's
    bool trainerReady = false;  // that file is there and executable
    QStringList errors;  // each step that failed, with what to do

    bool ok() const { return connected && errors.isEmpty(); }
};

// The report's trainer line, as `orrery cluster test` and the GUI's Test show it.
QString trainerSummary(const ClusterProfile &profile, const ClusterReport &report);

// Connects with the profile and checks each part in turn; a failing step is recorded in `errors`
// and the next one still runs where it can. Blocks; call from a worker thread or the CLI.
ClusterReport probeCluster(const ClusterProfile &profile, const AuthCallbacks &callbacks);
// The same over a connection the caller keeps (doctor goes on with it).
ClusterReport probeCluster(const ClusterProfile &profile, Connection &connection);
// The profile's remote root as an absolute, clean path: `~`, `~/...`, `$HOME` and `$HOME/...`
// take the cluster's $HOME (one remote command, only then). Throws RemoteError (Kind::Slurm) when
// the home directory cannot be found or the root is not absolute.
QString absoluteRemoteRoot(const ClusterProfile &profile, Connection &connection);

// A probe's connection: one attempt, no waiting out a flaky host.
ConnectionOptions probeConnectionOptions();

}  // namespace orrery::remote
