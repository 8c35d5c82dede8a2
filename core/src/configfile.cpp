// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/configfile.h"

#include "orrery/core/pyvalue.h"

#include <QFileInfo>
#include <QStringList>

namespace orrery::core {

std::optional<ConfigFormat> configFormatOf(const QString &path)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("yaml") || ext == QLatin1String("yml"))
        return ConfigFormat::Yaml;
    if (ext == QLatin1String("json"))
        return ConfigFormat::Json;
    return std::nullopt;
}

namespace {

// ---- YAML block mappings, line by line ------------------------------------------------------

struct YamlLine {
    qsizetype start = 0, end = 0;  // byte offsets of the line, without its '\n'
    int indent = 0;
    bool content = false;  // not blank, not a comment, not a document marker or directive
    bool item = false;  // a block list item ("- x" or "-")
};

// One `key: value` line of a block mapping.
struct YamlEntry {
    QString key;
    qsizetype colon = -1;  // offset of the ':' after the key
    qsizetype valueStart = -1, valueEnd = -1;  // the inline value (empty span: none)
    int line = 0;  // index into the lines
    int lastLine = 0;  // the last content line of its value
};

class YamlText {
public:
    explicit YamlText(QByteArray text) : m_text(std::move(text)) { split(); }

    const QByteArray &text() const { return m_text; }
    const QList<YamlLine> &lines() const { return m_lines; }
    QString error;

    // The entries of the block mapping whose entries sit at `indent` within lines [from, to).
    QList<YamlEntry> entries(int from, int to, int indent)
    {
        QList<YamlEntry> out;
        for (int i = from; i < to; ++i) {
            const YamlLine &l = m_lines[i];
            if (!l.content || l.indent != indent || l.item)
                continue;
            YamlEntry e;
            if (!parseEntry(l, e))
                continue;
            e.line = i;
            e.lastLine = i;
            for (int j = i + 1; j < to; ++j) {
                const YamlLine &n = m_lines[j];
                if (!n.content)
                    continue;
                if (n.indent < indent || (n.indent == indent && !n.item))
                    break;
                e.lastLine = j;
            }
            out.append(e);
        }
        return out;
    }

    // The indentation of the first content line in [from, to), -1 if none; `item` tells whether
    // it is a list item.
    int firstIndent(int from, int to, bool *item = nullptr) const
    {
        for (int i = from; i < to; ++i)
            if (m_lines[i].content) {
                if (item)
                    *item = m_lines[i].item;
                return m_lines[i].indent;
            }
        return -1;
    }

    QString inlineValue(const YamlEntry &e) const
    {
        return QString::fromUtf8(m_text.mid(e.valueStart, e.valueEnd - e.valueStart));
    }

private:
    void split()
    {
        qsizetype pos = 0;
        bool seenContent = false;
        while (pos <= m_text.size()) {
            qsizetype nl = m_text.indexOf('\n', pos);
            if (nl < 0)
                nl = m_text.size();
            YamlLine l;
            l.start = pos;
            l.end = nl > pos && m_text[nl - 1] == '\r' ? nl - 1 : nl;
            const QByteArray line = m_text.mid(l.start, l.end - l.start);
            while (l.indent < line.size() && line[l.indent] == ' ')
                ++l.indent;
            const QByteArray rest = line.mid(l.indent);
            const bool marker =
                l.indent == 0 && (line.startsWith("---") || line.startsWith("...") || line.startsWith('%'));
            if (marker && line.startsWith("---") && seenContent && error.isEmpty())
                error = QStringLiteral("the file holds several YAML documents; Orrery edits one");
            l.content = !rest.isEmpty() && !rest.startsWith('#') && !marker && !rest.trimmed().isEmpty();
            l.item = l.content && (rest == "-" || rest.startsWith("- ") || rest.startsWith("-\t"));
            seenContent = seenContent || l.content;
            m_lines.append(l);
            if (nl >= m_text.size())
                break;
            pos = nl + 1;
        }
    }

    // "key: value  # comment" (key plain, 'single' or "double" quoted).
    bool parseEntry(const YamlLine &l, YamlEntry &e) const
    {
        const qsizetype begin = l.start + l.indent;
        qsizetype p = begin;
        const auto at = [&](qsizetype i) { return i < l.end ? m_text[i] : '\n'; };
        QString key;
        if (at(p) == '"' || at(p) == '\'') {
            const char q = at(p);
            QByteArray raw;
            ++p;
            while (p < l.end) {
                if (q == '\'' && at(p) == '\'' && at(p + 1) == '\'') {
                    raw += '\'';
                    p += 2;
                } else if (q == '"' && at(p) == '\\' && p + 1 < l.end) {
                    const char c = at(p + 1);
                    raw += c == 'n' ? '\n' : c == 't' ? '\t' : c;
                    p += 2;
                } else if (at(p) == q) {
                    break;
                } else {
                    raw += at(p++);
                }
            }
            if (at(p) != q)
                return false;
            ++p;
            while (at(p) == ' ')
                ++p;
            if (at(p) != ':')
                return false;
            key = QString::fromUtf8(raw);
        } else {
            if (at(p) == '{' || at(p) == '[' || at(p) == '?' || at(p) == '#')
                return false;
            // The first ':' followed by a blank or the end of the line.
            while (p < l.end &&
                   !(at(p) == ':' && (at(p + 1) == ' ' || at(p + 1) == '\t' || at(p + 1) == '\n'))) {
                if (at(p) == '#' && p > begin && (at(p - 1) == ' ' || at(p - 1) == '\t'))
                    return false;
                ++p;
            }
            if (p >= l.end)
                return false;
            key = QString::fromUtf8(m_text.mid(begin, p - begin)).trimmed();
        }
        e.key = key;
        e.colon = p;
        qsizetype v = p + 1;
        while (v < l.end && (at(v) == ' ' || at(v) == '\t'))
            ++v;
        if (v >= l.end || at(v) == '#') {
            e.valueStart = e.valueEnd = v;
            return true;
        }
        e.valueStart = v;
        // The value ends at a comment (" #") outside quotes, else at the end of the line.
        qsizetype end = l.end;
        if (at(v) == '"' || at(v) == '\'') {
            const char q = at(v);
            qsizetype i = v + 1;
            while (i < l.end) {
                if (q == '"' && at(i) == '\\') {
                    i += 2;
                    continue;
                }
                if (at(i) == q) {
                    if (q == '\'' && at(i + 1) == '\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                ++i;
            }
            for (qsizetype j = i + 1; j < l.end; ++j)
                if (at(j) == '#' && (at(j - 1) == ' ' || at(j - 1) == '\t')) {
                    end = j;
                    break;
                }
        } else {
            for (qsizetype j = v + 1; j < l.end; ++j)
                if (at(j) == '#' && (at(j - 1) == ' ' || at(j - 1) == '\t')) {
                    end = j;
                    break;
                }
        }
        while (end > v && (at(end - 1) == ' ' || at(end - 1) == '\t'))
            --end;
        e.valueEnd = end;
        return true;
    }

    QByteArray m_text;
    QList<YamlLine> m_lines;
};

// Sets one dotted key in YAML text; returns the new text or sets *error.
QByteArray setYaml(const QByteArray &text, const QString &dotted, const QVariant &value, bool allowNew,
                   QString *error)
{
    YamlText doc(text);
    if (!doc.error.isEmpty()) {
        *error = doc.error;
        return {};
    }
    const QStringList parts = dotted.split(QLatin1Char('.'));
    const int lineCount = int(doc.lines().size());
    int from = 0, to = lineCount;
    bool firstIsItem = false;
    int indent = doc.firstIndent(from, to, &firstIsItem);
    if (indent >= 0 && firstIsItem) {
        *error = QStringLiteral("the file is a YAML list, not a mapping of keys");
        return {};
    }
    int done = 0;  // parts found so far
    QString path;
    const QString newValue = yamlScalar(value);
    while (indent >= 0) {
        const QList<YamlEntry> entries = doc.entries(from, to, indent);
        if (entries.isEmpty() && doc.firstIndent(from, to) >= 0) {
            *error = QStringLiteral("%1 is not a block mapping Orrery can edit (a flow mapping {...} or "
                                    "a list?); write it as indented `key: value` lines")
                         .arg(path.isEmpty() ? QStringLiteral("the file") : path);
            return {};
        }
        // A key spelt with dots (`optim.lr:`) is found as well as nested sections; the longest
        // spelling first.
        const YamlEntry *found = nullptr;
        int used = 0;
        for (int n = int(parts.size()) - done; n >= 1 && !found; --n) {
            const QString want = parts.mid(done, n).join(QLatin1Char('.'));
            for (const YamlEntry &e : entries)
                if (e.key == want) {
                    found = &e;
                    used = n;
                    break;
                }
        }
        if (!found)
            break;
        const YamlEntry e = *found;
        done += used;
        path = parts.mid(0, done).join(QLatin1Char('.'));
        const bool hasInline = e.valueEnd > e.valueStart;
        const QString inlineText = doc.inlineValue(e);
        bool childItem = false;
        const int childIndent = doc.firstIndent(e.line + 1, e.lastLine + 1, &childItem);
        if (done == int(parts.size())) {
            // The value itself: an inline value or block scalar or block list is replaced; a
            // section is not a value.
            if (!hasInline && childIndent >= 0 && !childItem) {
                *error = QStringLiteral("%1 is a section (a mapping) in the config, not a value").arg(path);
                return {};
            }
            const YamlLine &keyLine = doc.lines()[e.line];
            const YamlLine &last = doc.lines()[e.lastLine];
            QByteArray out = text.left(e.colon + 1);
            out += ' ';
            out += newValue.toUtf8();
            if (e.lastLine == e.line && hasInline) {
                out += text.mid(e.valueEnd);  // the comment and the rest of the file
            } else {
                // A block list, a block scalar or a value spanning lines: replaced by one line
                // (the key line's comment kept).
                const QByteArray keyRest = text.mid(e.valueEnd, keyLine.end - e.valueEnd);
                if (!hasInline && !keyRest.trimmed().isEmpty())
                    out += "  " + keyRest.trimmed();
                else if (hasInline && e.lastLine == e.line)
                    out += keyRest;
                out += text.mid(last.end);
            }
            return out;
        }
        // Go into the section.
        if (hasInline) {
            *error = inlineText.startsWith(QLatin1Char('{'))
                ? QStringLiteral("%1 is a flow mapping ({...}); Orrery edits block mappings: write it as "
                                 "indented `key: value` lines")
                      .arg(path)
                : QStringLiteral("%1 is a value in the config, not a section with %2")
                      .arg(path, parts.mid(done).join(QLatin1Char('.')));
            return {};
        }
        if (childIndent >= 0 && childItem) {
            *error = QStringLiteral("%1 is a list in the config; Orrery sets keys of mappings").arg(path);
            return {};
        }
        from = e.line + 1;
        to = e.lastLine + 1;
        if (childIndent < 0) {
            // `key:` with nothing under it (null): new keys go right below it.
            indent = doc.lines()[e.line].indent + 2;
            from = to = e.line + 1;
            break;
        }
        indent = childIndent;
    }
    if (!allowNew) {
        *error = path.isEmpty() || done == 0 ? QStringLiteral("the config has no key %1").arg(parts.front())
                                             : QStringLiteral("the config has no key %1 in %2")
                                                   .arg(parts.mid(done).join(QLatin1Char('.')), path);
        return {};
    }
    // Appended after the last content line of the mapping it belongs in.
    if (indent < 0)
        indent = 0;
    int after = -1;
    for (int i = from; i < to; ++i)
        if (doc.lines()[i].content)
            after = i;
    if (after < 0 && from > 0)
        after = from - 1;
    QByteArray add;
    for (int i = done; i < int(parts.size()); ++i) {
        add += QByteArray(indent + 2 * (i - done), ' ') + yamlScalar(parts[i]).toUtf8() + ':';
        add += i + 1 == int(parts.size()) ? ' ' + newValue.toUtf8() + '\n' : QByteArray("\n");
    }
    if (after < 0) {
        QByteArray out = text;
        if (!out.isEmpty() && !out.endsWith('\n'))
            out += '\n';
        return out + add;
    }
    const qsizetype at = doc.lines()[after].end;
    // Past the line's '\n' (a '\r\n' file keeps its '\r' on the old line).
    qsizetype insert = text.indexOf('\n', at);
    if (insert < 0)
        return text + '\n' + add;
    return text.left(insert + 1) + add + text.mid(insert + 1);
}

// ---- JSON ------------------------------------------------------------------------------------

struct JsonMember {
    QString key;
    qsizetype keyStart = 0;
    qsizetype valueStart = 0, valueEnd = 0;
};

class JsonScanner {
public:
    explicit JsonScanner(const QByteArray &t) : m_t(t) { }
    QString error;

    void ws(qsizetype &p) const
    {
        while (p < m_t.size() && (m_t[p] == ' ' || m_t[p] == '\n' || m_t[p] == '\r' || m_t[p] == '\t'))
            ++p;
    }
    // Skips one value from p; false on malformed JSON.
    bool skip(qsizetype &p)
    {
        ws(p);
        if (p >= m_t.size())
            return fail(p);
        const char c = m_t[p];
        if (c == '"') {
            QString s;
            return string(p, s);
        }
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            ++p;
            ws(p);
            if (p < m_t.size() && m_t[p] == close) {
                ++p;
                return true;
            }
            while (true) {
                if (c == '{') {
                    QString k;
                    ws(p);
                    if (!string(p, k))
                        return false;
                    ws(p);
                    if (p >= m_t.size() || m_t[p] != ':')
                        return fail(p);
                    ++p;
                }
                if (!skip(p))
                    return false;
                ws(p);
                if (p < m_t.size() && m_t[p] == ',') {
                    ++p;
                    continue;
                }
                if (p < m_t.size() && m_t[p] == close) {
                    ++p;
                    return true;
                }
                return fail(p);
            }
        }
        const qsizetype start = p;
        while (p < m_t.size() && QByteArrayView("+-.0123456789eEtruefalsnNaIiy").contains(m_t[p]))
            ++p;
        return p > start || fail(p);
    }
    bool string(qsizetype &p, QString &out)
    {
        if (p >= m_t.size() || m_t[p] != '"')
            return fail(p);
        const qsizetype start = p++;
        while (p < m_t.size() && m_t[p] != '"')
            p += m_t[p] == '\\' ? 2 : 1;
        if (p >= m_t.size())
            return fail(p);
        ++p;
        // The text between the quotes; \" and \\ decoded (other escapes are rare in config keys
        // and then simply do not match a parameter's name).
        out = QString::fromUtf8(m_t.mid(start + 1, p - start - 2));
        out.replace(QLatin1String("\\\""), QLatin1String("\""));
        out.replace(QLatin1String("\\\\"), QLatin1String("\\"));
        return true;
    }
    // The members of the object starting at p ('{').
    std::optional<QList<JsonMember>> members(qsizetype p, qsizetype *close)
    {
        QList<JsonMember> out;
        ws(p);
        if (p >= m_t.size() || m_t[p] != '{')
            return std::nullopt;
        ++p;
        ws(p);
        if (p < m_t.size() && m_t[p] == '}') {
            *close = p;
            return out;
        }
        while (true) {
            ws(p);
            JsonMember m;
            m.keyStart = p;
            if (!string(p, m.key))
                return std::nullopt;
            ws(p);
            if (p >= m_t.size() || m_t[p] != ':') {
                fail(p);
                return std::nullopt;
            }
            ++p;
            ws(p);
            m.valueStart = p;
            if (!skip(p))
                return std::nullopt;
            m.valueEnd = p;
            out.append(m);
            ws(p);
            if (p < m_t.size() && m_t[p] == ',') {
                ++p;
                continue;
            }
            if (p < m_t.size() && m_t[p] == '}') {
                *close = p;
                return out;
            }
            fail(p);
            return std::nullopt;
        }
    }

private:
    bool fail(qsizetype p)
    {
        if (error.isEmpty())
            error = QStringLiteral("malformed JSON at byte %1").arg(p);
        return false;
    }
    const QByteArray &m_t;
};

QString jsonNested(const QStringList &parts, int from, const QVariant &value)
{
    QString v = pythonJsonDumps(value);
    for (int i = int(parts.size()) - 1; i > from; --i)
        v = QLatin1Char('{') + pythonJsonDumps(parts[i]) + QLatin1String(": ") + v + QLatin1Char('}');
    return pythonJsonDumps(parts[from]) + QLatin1String(": ") + v;
}

QByteArray setJson(const QByteArray &text, const QString &dotted, const QVariant &value, bool allowNew,
                   QString *error)
{
    JsonScanner scan(text);
    const QStringList parts = dotted.split(QLatin1Char('.'));
    qsizetype object = 0;
    scan.ws(object);
    {
        qsizetype end = object;
        if (!scan.skip(end)) {
            *error = scan.error;
            return {};
        }
        scan.ws(end);
        if (end != text.size()) {
            *error = QStringLiteral("malformed JSON: text after the top-level value at byte %1").arg(end);
            return {};
        }
    }
    int done = 0;
    QString path;
    while (true) {
        qsizetype close = 0;
        const auto members = scan.members(object, &close);
        if (!members) {
            *error = path.isEmpty() ? QStringLiteral("the file is not a JSON object")
                                    : QStringLiteral("%1 is a value in the config, not an object with %2")
                                          .arg(path, parts.mid(done).join(QLatin1Char('.')));
            return {};
        }
        const JsonMember *found = nullptr;
        int used = 0;
        for (int n = int(parts.size()) - done; n >= 1 && !found; --n) {
            const QString want = parts.mid(done, n).join(QLatin1Char('.'));
            for (const JsonMember &m : *members)
                if (m.key == want) {
                    found = &m;
                    used = n;
                    break;
                }
        }
        if (!found) {
            if (!allowNew) {
                *error = done == 0 ? QStringLiteral("the config has no key %1").arg(parts.front())
                                   : QStringLiteral("the config has no key %1 in %2")
                                         .arg(parts.mid(done).join(QLatin1Char('.')), path);
                return {};
            }
            const QString member = jsonNested(parts, done, value);
            if (members->isEmpty())
                return text.left(close) + member.toUtf8() + text.mid(close);
            // Laid out as the object's last member is: on its own line with its indentation, or
            // after ", ".
            const JsonMember &last = members->back();
            const qsizetype nl = text.lastIndexOf('\n', last.keyStart);
            const QByteArray before = text.mid(nl + 1, last.keyStart - nl - 1);
            const bool ownLine = nl >= 0 && before.trimmed().isEmpty() && nl > object;
            const QByteArray sep = ownLine ? "\n" + before : QByteArray(" ");
            return text.left(last.valueEnd) + ',' + sep + member.toUtf8() + text.mid(last.valueEnd);
        }
        done += used;
        path = parts.mid(0, done).join(QLatin1Char('.'));
        if (done == int(parts.size())) {
            if (text[found->valueStart] == '{') {
                *error = QStringLiteral("%1 is an object in the config, not a value").arg(path);
                return {};
            }
            return text.left(found->valueStart) + pythonJsonDumps(value).toUtf8() + text.mid(found->valueEnd);
        }
        object = found->valueStart;
    }
}

}  // namespace

ConfigEdit setConfigValues(const QByteArray &base, ConfigFormat format,
                           const QList<std::pair<QString, QVariant>> &values, bool allowNewKeys)
{
    ConfigEdit out;
    out.text = base;
    for (const auto &[key, value] : values) {
        QString error;
        QByteArray next = format == ConfigFormat::Yaml ? setYaml(out.text, key, value, allowNewKeys, &error)
                                                       : setJson(out.text, key, value, allowNewKeys, &error);
        if (!error.isEmpty()) {
            out.error = error;
            out.key = key;
            out.text.clear();
            return out;
        }
        out.text = std::move(next);
    }
    return out;
}

}  // namespace orrery::core
