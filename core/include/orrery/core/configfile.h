// SPDX-License-Identifier: GPL-3.0-or-later
//
// Config-file sweeps (docs/sweeps.md "Config-file sweeps"): a program's own YAML or JSON config
// with a trial's parameters set at their dotted paths. The file is edited as text — each value's
// span replaced, new keys appended in their mapping — so the user's comments, key order, quoting
// and blank lines survive (a round trip through a YAML or JSON library would drop them).
// Pure functions over text, safe from any thread.
//
// YAML: block mappings (any indentation, comments, quoted keys, `---` at the top), with values
// inline, as block scalars or block lists; a path into a flow mapping (`opt: {lr: 1}`), a list
// or a second document is refused with a message. JSON: any JSON object.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QVariant>

#include <optional>
#include <utility>

namespace orrery::core {

enum class ConfigFormat { Yaml, Json };
// By the file's extension: .yaml/.yml, .json; nullopt for anything else.
std::optional<ConfigFormat> configFormatOf(const QString &path);

struct ConfigEdit {
    QByteArray text;  // the edited file, when error is empty
    QString error;  // why the file could not be edited as asked
    QString key;  // the dotted key the error is about (empty: the file as a whole)
    bool ok() const { return error.isEmpty(); }
};

// `base` with each value (Python-typed as pyvalue.h: None, bool, qint64, double, QString,
// QVariantList) set at its dotted key, written in the format's own syntax (YAML as PyYAML's
// safe_dump writes a scalar, JSON as json.dumps). A key's parts are mappings' keys ("optim.lr":
// `optim:` then `lr:`; a key spelt with the dot, `optim.lr:`, is found too). A key the base does
// not have is an error unless `allowNewKeys`, then it is appended at the end of the deepest
// mapping that exists, with the sections it needs.
ConfigEdit setConfigValues(const QByteArray &base, ConfigFormat format,
                           const QList<std::pair<QString, QVariant>> &values, bool allowNewKeys);

}  // namespace orrery::core
