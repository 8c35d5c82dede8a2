// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::cli {

// Writes to stdout / stderr as UTF-8 (the CLI's only output path).
void out(const QString &text);
void err(const QString &text);
// A JSON object or array on stdout, for scripts (`--json`): indented, or on one line.
void printJson(const QJsonValue &value, bool oneLine = false);

// While one lives, what out() writes is collected here instead of reaching stdout: the man page
// and the bash completion take the help that commands with their own help print (`orrery sweep
// --help`) from the commands themselves. One at a time, on the thread that calls out().
class OutputCapture {
public:
    OutputCapture();
    ~OutputCapture();
    OutputCapture(const OutputCapture &) = delete;
    OutputCapture &operator=(const OutputCapture &) = delete;

    const QString &text() const { return m_text; }

private:
    friend void out(const QString &text);
    QString m_text;
};

// A human table: columns padded to their widest cell, two spaces apart, no trailing spaces.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);

}  // namespace orrery::cli
