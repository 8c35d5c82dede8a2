// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::remote {

// The one place where remote command lines are assembled. Every argument is single-quoted for a
// POSIX shell, so no byte of it (spaces, quotes, $(), backticks, newlines, ;, &&, globs, non-UTF-8)
// is interpreted by the remote shell: it reaches the program as exactly one argv entry.
// An argument that starts with '-' still is one argv entry, but the program may read it as an
// option: callers put user values after "--" or in "--opt=value" form.

// 'it'\''s' style quoting; an empty argument becomes ''. Throws std::invalid_argument for a NUL byte.
QByteArray shellQuote(const QByteArray &arg);

// Quotes each argument and joins them with spaces.
QByteArray commandLine(const QList<QByteArray> &argv);
QByteArray commandLine(const QStringList &argv);  // arguments as UTF-8

}  // namespace orrery::remote
