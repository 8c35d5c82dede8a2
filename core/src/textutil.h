// SPDX-License-Identifier: GPL-3.0-or-later
//
// Small text helpers shared by the sweep spec parser and the schema (private to core).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace orrery::core {

// Strict UTF-8 decoding: nullopt for any invalid sequence (never a silent U+FFFD).
std::optional<QString> decodeUtf8(const QByteArray &bytes);

// 'text' for messages, with control characters written as \n, \t, \xNN so that a hostile value
// cannot break a message's line or terminal.
QString quoted(const QString &text);
// The same without the quotes (for text from libraries, e.g. yaml-cpp's messages quote the input).
QString escapeControl(const QString &text);
bool containsControl(const QString &text);

// Whole-string numbers: "12", "1e3" (an integral double) for integers; finite doubles only.
std::optional<qint64> parseInteger(const QString &text);
std::optional<double> parseDouble(const QString &text);
// YAML 1.1 booleans, case-insensitive: true/false, yes/no, on/off.
std::optional<bool> parseBool(const QString &text);
// The shortest text that reads back as exactly `v`.
QString formatDouble(double v);

// The word of `known` nearest to `word` by edit distance, or one ending with the same dotted
// leaf; empty when nothing is close enough to be a plausible typo.
QString closestWord(const QString &word, const QStringList &known);

}  // namespace orrery::core
