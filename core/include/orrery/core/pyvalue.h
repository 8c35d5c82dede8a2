// SPDX-License-Identifier: GPL-3.0-or-later
//
// Values as W&B's Python agent sees and prints them (docs/sweeps.md "W&B sweep files as they
// are"). W&B reads a sweep file with PyYAML's safe_load (YAML 1.1), so `1e-4` is the *string*
// "1e-4" there and `yes` is True; its agent renders ${args} with Python's str() of each value
// (`--flag=True`, `--lr=1e-05`, `--dropout=0.0`, `--sizes=[1, 2]`) and ${args_json} with
// json.dumps. A program written for W&B type-checks exactly these bytes, so Orrery produces them
// byte for byte. Pure functions, safe from any thread.
//
// A Python value is a QVariant: None (QVariant::fromValue(nullptr), or an invalid QVariant),
// bool, qint64, double, QString, QVariantList (a list) or PyDict (a dict, in insertion order).
#pragma once

#include <QList>
#include <QString>
#include <QVariant>

#include <utility>

namespace orrery::core {

// A Python dict: keys in insertion order (Python 3.7+ keeps it; QVariantMap would sort them).
using PyDict = QList<std::pair<QString, QVariant>>;

// A plain YAML scalar typed as PyYAML's SafeLoader types it (YAML 1.1 implicit resolvers): null
// (~, null, empty), bool (yes/no/on/off/true/false in three casings), int (decimal, 0b, 0x,
// leading-0 octal, `_` separators, sexagesimal 1:30), float (needs a '.', and an exponent needs
// its sign: `1.0e-4` is a float, `1e-4` and `1.0e4` are strings; .inf, .nan), else str. A quoted
// scalar is always a str. An int beyond 64 bits is kept as its text (a str).
QVariant pyyamlScalar(const QString &text, bool plain);

// Python's repr(float): the shortest text that reads back as the same double, in fixed notation
// for exponents -4..15 ('0.0001', '3.0', '1000000000000000.0') and else 'd.ddde±XX' with at
// least two exponent digits ('1e-05', '1e+16'); 'inf', '-inf', 'nan'.
QString pythonFloatRepr(double v);
// str(value) and repr(value) (they differ for a str: repr quotes it as Python does, which is
// what str() of a list or dict shows of its str items).
QString pythonStr(const QVariant &value);
QString pythonRepr(const QVariant &value);
// json.dumps(value) with Python's defaults: ", " and ": " separators, ensure_ascii (non-ASCII as
// \uXXXX, surrogate pairs beyond the BMP), NaN/Infinity as Python writes them.
QString pythonJsonDumps(const QVariant &value);

// PyYAML's representer of a scalar (how yaml.safe_dump writes one): floats as repr with '.0'
// added before an exponent (1.0e-05) so that a YAML 1.1 reader reads a float back, .inf/.nan,
// true/false, null; a str plain when it reads back as that str, else double-quoted.
QString yamlScalar(const QVariant &value);
// A dict as block YAML, nested dicts indented by two, values by yamlScalar ("{}\n" when empty).
QByteArray pythonYamlMapping(const PyDict &dict);

}  // namespace orrery::core
