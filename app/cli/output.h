// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::cli {

// Writes to stdout / stderr as UTF-8 (the CLI's only output path).
void out(const QString &text);
void err(const QString &text);

// A human table: columns padded to their widest cell, two spaces apart, no trailing spaces.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);

}  // namespace orrery::cli
