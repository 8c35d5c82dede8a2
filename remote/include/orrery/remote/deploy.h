// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery cluster deploy`: the bundled trainer's source, uploaded to a cluster and built there
// with CMake against the cluster's own PyTorch (the profile's setup lines activate it), on the
// login node or in a small Slurm job. Cached by hash: <remote_root>/trainer/<hash>/bin/orrery-train
// exists only once a build of that source with those setup lines finished and the binary started.
// The cluster side is resources/deploy/deploy.sh; docs/clusters.md says what a user sees.
#pragma once

#include "orrery/remote/profile.h"
#include "orrery/remote/tar.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>

namespace orrery::remote {

class Connection;

// The trainer's source as this installation ships it: trainer/ and cmake/ under `root`.
struct TrainerSource {
    QString root;
    QList<TarFile> files;  // paths relative to root, sorted
    QByteArray hash;  // SHA-256 of the paths and contents, hex

    // The shipped copy: $ORRERY_TRAINER_SOURCE, else <prefix>/share/orrery/trainer-source beside
    // the running program (the package), else the source tree this program was built from.
    // nullopt with *problem when none holds trainer/CMakeLists.txt.
    static std::optional<TrainerSource> locate(QString *problem);
    // Reads every file under root/trainer and root/cmake (build directories and dot files left
    // out). Throws std::runtime_error naming an unreadable file.
    static TrainerSource read(const QString &root);
};

// Where a profile's deployed trainer lives: <remote_root>/trainer/<key>/, the key being the first
// 16 hex digits of the hash of the source and the profile's setup lines (another environment is
// another build). Empty when the profile has no remote root.
QString deployDirectory(const ClusterProfile &profile, const TrainerSource &source);
QString deployedTrainerPath(const ClusterProfile &profile, const TrainerSource &source);

// The trainer a sweep on this profile runs: its trainer path, else where the deployed build of
// this installation's source is (whether or not it is built yet: no remote command), else ""
// (orrery-train from the cluster's PATH) when the source cannot be found.
QString sweepTrainerPath(const ClusterProfile &profile);

// The profile with its remote root made absolute (absoluteRemoteRoot, profile.h), as the Slurm
// executor has it: the deployed trainer's path goes into sbatch scripts quoted, where no shell
// would expand a `~`. Throws RemoteError.
ClusterProfile withAbsoluteRemoteRoot(const ClusterProfile &profile, Connection &connection);

// The build script Orrery writes beside deploy.sh: the setup lines, each checked, then the build.
QByteArray deployBuildScript(const ClusterProfile &profile, const QString &directory);

// The build's progress as the log shows it, parsed by deployProgressFromLog (tested alone).
struct DeployProgress {
    QString phase;  // check, upload, queued, setup, torch, configure, build, install, done
    int percent = -1;  // of the compile, from CMake's "[ 45%]" or Ninja's "[12/40]"; -1 unknown
    QString lastLine;  // the log's last line (the compiler's current file, an error)
};
DeployProgress deployProgressFromLog(const QByteArray &logTail);

struct DeployOptions {
    std::function<void(const DeployProgress &)> progress;  // on the calling thread
    std::function<bool()> cancelled;  // polled between steps; true ends the build remotely
    std::chrono::milliseconds pollInterval{2'000};
    std::chrono::minutes timeLimit{90};  // of the whole build, queue wait included
};

struct DeployResult {
    QString trainerPath;
    QString directory;
    bool cached = false;  // it was already built: no upload, no build
    QString version;  // what `orrery-train --version` printed after the build (empty when cached)
};

// A deploy that did not end with a trainer: the phase it stopped in, the tail of the build log
// (the last lines, the error among them) and what to do about it.
class DeployError : public core::Error {
public:
    DeployError(const QString &message, QString phase, QString logTail, QString hint);
    QString phase() const { return m_phase; }
    QString logTail() const { return m_logTail; }
    QString hint() const { return m_hint; }
    // The message, the log's tail and the hint, as a terminal shows them.
    QString describe() const;

private:
    QString m_phase, m_logTail, m_hint;
};

// What to do about a failed build, from its log ("" when nothing known matches).
QString deployHint(const QString &phase, const QByteArray &log);

// The deployed trainer's path if it is built (one remote command), else nullopt. Throws
// RemoteError when the cluster cannot be asked.
std::optional<QString> findDeployedTrainer(const ClusterProfile &profile, Connection &connection,
                                           const TrainerSource &source);

// Uploads and builds unless already built; blocks until the build ends (call from a worker or
// the CLI). A build already running from another deploy of the same key is joined, not started
// twice. A dropped connection reconnects and goes on polling: the build itself runs detached on
// the cluster. Throws DeployError (build failed, cancelled, timed out) or RemoteError.
DeployResult deployTrainer(const ClusterProfile &profile, Connection &connection, const TrainerSource &source,
                           const DeployOptions &options = {});
// The same over a connection of its own, asking `prompts` (`orrery cluster deploy`).
DeployResult deployTrainer(const ClusterProfile &profile, AuthCallbacks prompts, const TrainerSource &source,
                           const DeployOptions &options = {});

}  // namespace orrery::remote
