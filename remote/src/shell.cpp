// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/shell.h"

#include <stdexcept>

namespace orrery::remote {

QByteArray shellQuote(const QByteArray &arg)
{
    // Inside single quotes a POSIX shell interprets nothing; a single quote itself is written as
    // '\'' (close, escaped quote, reopen). NUL cannot occur in argv: refuse it rather than let
    // the remote side cut the line short there.
    if (arg.contains('\0'))
        throw std::invalid_argument("a command argument contains a NUL byte");
    QByteArray out;
    out.reserve(arg.size() + 2);
    out.append('\'');
    for (const char c : arg) {
        if (c == '\'')
            out.append("'\\''");
        else
            out.append(c);
    }
    out.append('\'');
    return out;
}

QByteArray commandLine(const QList<QByteArray> &argv)
{
    QByteArray line;
    for (const QByteArray &arg : argv) {
        if (!line.isEmpty())
            line.append(' ');
        line.append(shellQuote(arg));
    }
    return line;
}

QByteArray commandLine(const QStringList &argv)
{
    QList<QByteArray> bytes;
    bytes.reserve(argv.size());
    for (const QString &arg : argv)
        bytes.append(arg.toUtf8());
    return commandLine(bytes);
}

}  // namespace orrery::remote
