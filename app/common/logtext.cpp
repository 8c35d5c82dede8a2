// SPDX-License-Identifier: GPL-3.0-or-later
#include "logtext.h"

#include <QStringView>

namespace orrery::appcommon {

namespace {

// Characters that would reorder the text around them (bidi embeddings, overrides, isolates) or
// start a new line in the view without a '\n' (U+2028, U+2029).
bool isLayoutControl(char16_t u)
{
    return u == 0x2028 || u == 0x2029 || (u >= 0x202a && u <= 0x202e) || (u >= 0x2066 && u <= 0x2069);
}

bool between(QChar c, char16_t low, char16_t high)
{
    return c.unicode() >= low && c.unicode() <= high;
}

// Where the escape sequence that starts at line[i] (ESC or the C1 CSI) ends; -1: it is not a
// complete one (ECMA-48: CSI parameters 0x30-0x3F, intermediates 0x20-0x2F, a final 0x40-0x7E;
// OSC up to BEL or ST; other escapes: intermediates, then a final 0x30-0x7E).
qsizetype escapeEnd(QStringView line, qsizetype i)
{
    const qsizetype n = line.size();
    qsizetype j = i + 1;
    if (line[i] == QChar(0x1b)) {
        if (j >= n)
            return -1;
        if (line[j] == u']') {
            for (++j; j < n; ++j) {
                if (line[j] == QChar(0x07))
                    return j + 1;
                if (line[j] == QChar(0x1b) && j + 1 < n && line[j + 1] == u'\\')
                    return j + 2;
            }
            return -1;
        }
        if (line[j] != u'[') {
            while (j < n && between(line[j], 0x20, 0x2f))
                ++j;
            return j < n && between(line[j], 0x30, 0x7e) ? j + 1 : -1;
        }
        ++j;
    }
    while (j < n && between(line[j], 0x30, 0x3f))
        ++j;
    while (j < n && between(line[j], 0x20, 0x2f))
        ++j;
    return j < n && between(line[j], 0x40, 0x7e) ? j + 1 : -1;
}

void appendSafeLine(QString &out, QStringView line)
{
    while (line.endsWith(u'\r'))
        line.chop(1);
    if (const qsizetype cr = line.lastIndexOf(u'\r'); cr >= 0)
        line = line.mid(cr + 1);
    for (qsizetype i = 0; i < line.size();) {
        const char16_t u = line[i].unicode();
        if (u == u'\t' || (u >= 0x20 && u < 0x7f) || (u >= 0xa0 && !isLayoutControl(u))) {
            out += line[i++];
            continue;
        }
        if (u == 0x1b || u == 0x9b) {
            if (const qsizetype end = escapeEnd(line, i); end > 0) {
                i = end;
                continue;
            }
        }
        if (u < 0x20)
            out += QChar(char16_t(0x2400 + u));  // the control pictures block: U+2400 + the code
        else if (u == 0x7f)
            out += QChar(char16_t(0x2421));  // SYMBOL FOR DELETE
        else
            out += QChar(QChar::ReplacementCharacter);
        ++i;
    }
}

}  // namespace

QString safeLogText(QByteArrayView bytes)
{
    const QString text = QString::fromUtf8(bytes);
    QString out;
    out.reserve(text.size());
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = text.indexOf(u'\n', start);
        appendSafeLine(out, QStringView(text).mid(start, nl < 0 ? text.size() - start : nl - start));
        if (nl < 0)
            break;
        out += u'\n';
        start = nl + 1;
    }
    return out;
}

}  // namespace orrery::appcommon
