// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/pyvalue.h"

#include <QRegularExpression>

#include <charconv>
#include <cmath>

namespace orrery::core {

namespace {

// PyYAML 6's implicit resolvers (yaml/resolver.py), anchored as there.
const QRegularExpression &pyyamlBool()
{
    static const QRegularExpression re(
        QStringLiteral("^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"));
    return re;
}
const QRegularExpression &pyyamlFloat()
{
    static const QRegularExpression re(QStringLiteral("^(?:[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?"
                                                      "|\\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
                                                      "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*"
                                                      "|[-+]?\\.(?:inf|Inf|INF)"
                                                      "|\\.(?:nan|NaN|NAN))$"));
    return re;
}
const QRegularExpression &pyyamlInt()
{
    static const QRegularExpression re(QStringLiteral("^(?:[-+]?0b[0-1_]+"
                                                      "|[-+]?0[0-7_]+"
                                                      "|[-+]?(?:0|[1-9][0-9_]*)"
                                                      "|[-+]?0x[0-9a-fA-F_]+"
                                                      "|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"));
    return re;
}

bool isNone(const QVariant &v)
{
    return !v.isValid() || v.typeId() == QMetaType::Nullptr;
}

// Base-60 "1:30:15" (YAML 1.1 sexagesimal), the digits already without '_' and sign.
double sexagesimal(const QString &digits)
{
    double value = 0;
    for (const QString &part : digits.split(QLatin1Char(':')))
        value = value * 60 + part.toDouble();
    return value;
}

// Python's str.isprintable() for one code point, near enough: letters, marks, numbers,
// punctuation, symbols and the space; not controls, formats, surrogates, private use,
// unassigned or separators other than ' '.
bool pyPrintable(char32_t c)
{
    if (c == U' ')
        return true;
    switch (QChar::category(c)) {
    case QChar::Other_Control:
    case QChar::Other_Format:
    case QChar::Other_Surrogate:
    case QChar::Other_PrivateUse:
    case QChar::Other_NotAssigned:
    case QChar::Separator_Space:
    case QChar::Separator_Line:
    case QChar::Separator_Paragraph:
        return false;
    default:
        return true;
    }
}

QString hex(char32_t c, int width)
{
    return QStringLiteral("%1").arg(uint(c), width, 16, QLatin1Char('0'));
}

// repr(str): single quotes unless the text has a ' and no ", escapes as Python writes them.
QString pyStrRepr(const QString &s)
{
    const QChar quote =
        s.contains(QLatin1Char('\'')) && !s.contains(QLatin1Char('"')) ? QLatin1Char('"') : QLatin1Char('\'');
    QString out(quote);
    for (const char32_t c : s.toUcs4()) {
        if (c == quote.unicode() || c == U'\\')
            out += QLatin1Char('\\') + QString::fromUcs4(&c, 1);
        else if (c == U'\t')
            out += QLatin1String("\\t");
        else if (c == U'\n')
            out += QLatin1String("\\n");
        else if (c == U'\r')
            out += QLatin1String("\\r");
        else if (c < 0x7f && c >= 0x20)
            out += QChar(char16_t(c));
        else if (!pyPrintable(c))
            out += c <= 0xff  ? QLatin1String("\\x") + hex(c, 2)
                : c <= 0xffff ? QLatin1String("\\u") + hex(c, 4)
                              : QLatin1String("\\U") + hex(c, 8);
        else
            out += QString::fromUcs4(&c, 1);
    }
    return out + quote;
}

QString jsonString(const QString &s)
{
    QString out(QLatin1Char('"'));
    for (const QChar c : s) {  // UTF-16 units: json.dumps writes surrogate pairs as two \u escapes
        const char16_t u = c.unicode();
        switch (u) {
        case u'"':
            out += QLatin1String("\\\"");
            break;
        case u'\\':
            out += QLatin1String("\\\\");
            break;
        case u'\n':
            out += QLatin1String("\\n");
            break;
        case u'\r':
            out += QLatin1String("\\r");
            break;
        case u'\t':
            out += QLatin1String("\\t");
            break;
        case u'\b':
            out += QLatin1String("\\b");
            break;
        case u'\f':
            out += QLatin1String("\\f");
            break;
        default:
            // ensure_ascii: everything outside ' '..'~' as \uXXXX, lower-case hex.
            out += (u >= 0x20 && u <= 0x7e) ? QString(c) : QLatin1String("\\u") + hex(u, 4);
        }
    }
    return out + QLatin1Char('"');
}

template<typename Item>
QString joined(const QVariantList &list, Item item)
{
    QStringList parts;
    for (const QVariant &v : list)
        parts << item(v);
    return QLatin1Char('[') + parts.join(QLatin1String(", ")) + QLatin1Char(']');
}

bool isDict(const QVariant &v)
{
    return v.metaType() == QMetaType::fromType<PyDict>();
}

}  // namespace

QVariant pyyamlScalar(const QString &text, bool plain)
{
    if (!plain)
        return text;
    const QChar first = text.isEmpty() ? QChar() : text.front();
    // Resolvers are picked by the first character, as PyYAML does.
    if (text.isEmpty() || text == QLatin1String("~") || text == QLatin1String("null") ||
        text == QLatin1String("Null") || text == QLatin1String("NULL"))
        return QVariant::fromValue(nullptr);
    if (QStringLiteral("yYnNtTfFoO").contains(first) && pyyamlBool().match(text).hasMatch()) {
        const QChar c = first.toLower();
        return QVariant(c == QLatin1Char('y') || c == QLatin1Char('t') ||
                        text.compare(QLatin1String("on"), Qt::CaseInsensitive) == 0);
    }
    if (QStringLiteral("-+0123456789.").contains(first) && pyyamlFloat().match(text).hasMatch()) {
        QString v = text;
        v.remove(QLatin1Char('_'));
        v = v.toLower();
        double sign = 1;
        if (v.startsWith(QLatin1Char('-')) || v.startsWith(QLatin1Char('+'))) {
            sign = v.front() == QLatin1Char('-') ? -1 : 1;
            v.remove(0, 1);
        }
        if (v == QLatin1String(".inf"))
            return QVariant(sign * HUGE_VAL);
        if (v == QLatin1String(".nan"))
            return QVariant(std::nan(""));
        if (v.contains(QLatin1Char(':')))
            return QVariant(sign * sexagesimal(v));
        double d = 0;
        const QByteArray b = v.toLatin1();
        std::from_chars(b.constData(), b.constData() + b.size(), d);  // "1." and ".5" parse too
        if (b.startsWith('.')) {  // from_chars wants a digit first
            const QByteArray z = '0' + b;
            std::from_chars(z.constData(), z.constData() + z.size(), d);
        }
        return QVariant(sign * d);
    }
    if (QStringLiteral("-+0123456789").contains(first) && pyyamlInt().match(text).hasMatch()) {
        QString v = text;
        v.remove(QLatin1Char('_'));
        bool negative = false;
        if (v.startsWith(QLatin1Char('-')) || v.startsWith(QLatin1Char('+'))) {
            negative = v.front() == QLatin1Char('-');
            v.remove(0, 1);
        }
        bool ok = false;
        qint64 n = 0;
        if (v == QLatin1String("0"))
            ok = true;
        else if (v.startsWith(QLatin1String("0b")))
            n = v.mid(2).toLongLong(&ok, 2);
        else if (v.startsWith(QLatin1String("0x")))
            n = v.mid(2).toLongLong(&ok, 16);
        else if (v.startsWith(QLatin1Char('0')))
            n = v.toLongLong(&ok, 8);
        else if (v.contains(QLatin1Char(':'))) {
            const double s = sexagesimal(v);
            ok = s < 9e18;
            n = qint64(s);
        } else
            n = v.toLongLong(&ok, 10);
        if (ok)
            return QVariant::fromValue(negative ? -n : n);
        return text;  // beyond 64 bits: Python's int has no limit; keep the text
    }
    return text;
}

QString pythonFloatRepr(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v < 0 ? QStringLiteral("-inf") : QStringLiteral("inf");
    // The shortest round-trip digits (the same digits as Python's repr: both are David Gay's /
    // Ryu's shortest), as d.ddde±XX.
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
    const QString sci = QString::fromLatin1(buf, ec == std::errc() ? end - buf : 0);
    const qsizetype e = sci.indexOf(QLatin1Char('e'));
    QString mantissa = sci.left(e);
    const int exponent = sci.mid(e + 1).toInt();
    const QString sign = std::signbit(v) ? QStringLiteral("-") : QString();
    if (exponent < -4 || exponent >= 16) {
        const QString digits = QString::number(std::abs(exponent)).rightJustified(2, QLatin1Char('0'));
        return sign + mantissa + QLatin1Char('e') + (exponent < 0 ? QLatin1Char('-') : QLatin1Char('+')) +
            digits;
    }
    QString digits = mantissa.remove(QLatin1Char('.'));
    if (exponent < 0)
        return sign + QLatin1String("0.") + QString(-exponent - 1, QLatin1Char('0')) + digits;
    if (digits.size() <= exponent + 1)
        return sign + digits + QString(exponent + 1 - digits.size(), QLatin1Char('0')) + QLatin1String(".0");
    return sign + digits.left(exponent + 1) + QLatin1Char('.') + digits.mid(exponent + 1);
}

QString pythonRepr(const QVariant &value)
{
    if (value.typeId() == QMetaType::QString)
        return pyStrRepr(value.toString());
    return pythonStr(value);
}

namespace {

// How one of the three notations below writes each kind of value: a walker over the value
// (dicts and lists) that asks the notation for the leaves.
struct Notation {
    QLatin1StringView none, yes, no;
    QString (*number)(double);  // a float, NaN and infinities included
    QString (*text)(const QString &);  // a string value at the top
    QString (*item)(const QVariant &);  // a dict's value, a list's element
    QString (*key)(const QString &);  // a dict's key
};

QString render(const QVariant &value, const Notation &n)
{
    if (isNone(value))
        return QString(n.none);
    if (isDict(value)) {
        QStringList parts;
        for (const auto &[k, v] : value.value<PyDict>())
            parts << n.key(k) + QLatin1String(": ") + n.item(v);
        return QLatin1Char('{') + parts.join(QLatin1String(", ")) + QLatin1Char('}');
    }
    switch (value.typeId()) {
    case QMetaType::Bool:
        return value.toBool() ? QString(n.yes) : QString(n.no);
    case QMetaType::Double:
    case QMetaType::Float:
        return n.number(value.toDouble());
    case QMetaType::LongLong:
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
        return value.toString();
    case QMetaType::QVariantList:
        return joined(value.toList(), n.item);
    default:
        return n.text(value.toString());
    }
}

QString jsonNumberText(double d)
{
    if (std::isnan(d))
        return QStringLiteral("NaN");
    if (std::isinf(d))
        return d < 0 ? QStringLiteral("-Infinity") : QStringLiteral("Infinity");
    return pythonFloatRepr(d);
}

QString yamlNumber(double d)
{
    if (std::isnan(d))
        return QStringLiteral(".nan");
    if (std::isinf(d))
        return d < 0 ? QStringLiteral("-.inf") : QStringLiteral(".inf");
    // PyYAML's represent_float: repr, and '1e-05' made '1.0e-05' so YAML 1.1 reads a float.
    QString r = pythonFloatRepr(d);
    if (!r.contains(QLatin1Char('.')) && r.contains(QLatin1Char('e')))
        r.replace(QLatin1Char('e'), QLatin1String(".0e"));
    return r;
}

QString yamlText(const QString &s);

QString plainText(const QString &s)
{
    return s;
}

// A mapping key in YAML: a scalar as any value is written.
QString yamlKey(const QString &k)
{
    return yamlScalar(k);
}

}  // namespace

QString pythonStr(const QVariant &value)
{
    static const Notation python{QLatin1StringView("None"),
                                 QLatin1StringView("True"),
                                 QLatin1StringView("False"),
                                 pythonFloatRepr,
                                 plainText,
                                 pythonRepr,
                                 pyStrRepr};
    return render(value, python);
}

QString pythonJsonDumps(const QVariant &value)
{
    static const Notation json{QLatin1StringView("null"),
                               QLatin1StringView("true"),
                               QLatin1StringView("false"),
                               jsonNumberText,
                               jsonString,
                               pythonJsonDumps,
                               jsonString};
    return render(value, json);
}

QString yamlScalar(const QVariant &value)
{
    static const Notation yaml{QLatin1StringView("null"),
                               QLatin1StringView("true"),
                               QLatin1StringView("false"),
                               yamlNumber,
                               yamlText,
                               yamlScalar,
                               yamlKey};
    return render(value, yaml);
}

namespace {

QString yamlText(const QString &s)
{
    // Plain only where nothing in it means YAML syntax (also inside a flow list) and PyYAML
    // reads it back as this very text; else double-quoted.
    static const QRegularExpression safe(
        QStringLiteral("^[A-Za-z0-9_./+~()$^-][^:#,\\[\\]{}\"'`\\x00-\\x1f\\x7f]*$"));
    const QVariant back = pyyamlScalar(s, true);
    const bool dash = s.startsWith(QLatin1Char('-')) && (s.size() == 1 || s.at(1).isSpace());
    if (!dash && safe.match(s).hasMatch() && !s.endsWith(QLatin1Char(' ')) &&
        back.typeId() == QMetaType::QString && back.toString() == s)
        return s;
    QString out(QLatin1Char('"'));
    for (const char32_t c : s.toUcs4()) {
        if (c == U'"' || c == U'\\')
            out += QLatin1Char('\\') + QString::fromUcs4(&c, 1);
        else if (c == U'\n')
            out += QLatin1String("\\n");
        else if (c == U'\t')
            out += QLatin1String("\\t");
        else if (c == U'\r')
            out += QLatin1String("\\r");
        else if (c < 0x20 || c == 0x7f)
            out += QLatin1String("\\x") + hex(c, 2);
        else
            out += QString::fromUcs4(&c, 1);
    }
    return out + QLatin1Char('"');
}

void yamlLines(const PyDict &dict, int indent, QByteArray &out)
{
    for (const auto &[k, v] : dict) {
        out += QByteArray(indent, ' ') + yamlScalar(k).toUtf8() + ':';
        if (isDict(v) && !v.value<PyDict>().isEmpty()) {
            out += '\n';
            yamlLines(v.value<PyDict>(), indent + 2, out);
        } else {
            out += ' ' + yamlScalar(v).toUtf8() + '\n';
        }
    }
}

}  // namespace

QByteArray pythonYamlMapping(const PyDict &dict)
{
    if (dict.isEmpty())
        return "{}\n";
    QByteArray out;
    yamlLines(dict, 0, out);
    return out;
}

}  // namespace orrery::core
