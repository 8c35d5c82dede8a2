// SPDX-License-Identifier: GPL-3.0-or-later
//
// A minimal ustar (POSIX.1-1988) archive writer: how the Slurm executor ships a whole batch of
// files (trial configs, the sbatch script) to the cluster in the stdin of one `tar -x` instead of
// one SFTP round trip per file. Regular files only; the directories they sit in are created by
// tar on extraction. Pure, no I/O.
#pragma once

#include <QByteArray>
#include <QList>

#include <stdexcept>

namespace orrery::remote {

struct TarFile {
    QByteArray path;  // relative, '/'-separated: "0/trial.yaml", "batch-0.sbatch"
    QByteArray data;
    quint32 mode = 0600;  // permission bits (07777)
};

// The archive of `files`, in order, ending with the two zero blocks. Owner and group are 0 and
// the modification time is `mtime` (extract with `tar -m --no-same-owner`). Throws
// std::invalid_argument for a path that could land outside the extraction directory or that
// ustar cannot hold: empty, absolute, a "", "." or ".." component, a NUL or other control byte,
// longer than ustar's 155 + 100 bytes, or a file of 8 GiB or more.
QByteArray writeTar(const QList<TarFile> &files, qint64 mtime = 0);

// Whether `path` is accepted by writeTar (the same rules, without the length limits).
bool isSafeRelativePath(const QByteArray &path);

}  // namespace orrery::remote
