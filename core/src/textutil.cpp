// SPDX-License-Identifier: GPL-3.0-or-later
#include "textutil.h"

#include <QStringDecoder>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace orrery::core {

std::optional<QString> decodeUtf8(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder(bytes);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

bool containsControl(const QString &text)
{
    return std::any_of(text.begin(), text.end(),
                       [](QChar c) { return c.unicode() < 0x20 || c.unicode() == 0x7f; });
}

QString quoted(const QString &text)
{
    return QLatin1Char('\'') + escapeControl(text) + QLatin1Char('\'');
}

QString escapeControl(const QString &text)
{
    QString out;
    for (const QChar c : text) {
        if (c == QLatin1Char('\n'))
            out += QStringLiteral("\\n");
        else if (c == QLatin1Char('\t'))
            out += QStringLiteral("\\t");
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out;
}

std::optional<double> parseDouble(const QString &text)
{
    const std::string s = text.trimmed().toStdString();
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::optional<qint64> parseInteger(const QString &text)
{
    const std::string s = text.trimmed().toStdString();
    qint64 v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!s.empty() && ec == std::errc() && end == s.data() + s.size())
        return v;
    // W&B files write integers as 1e3; 9e15 keeps them exact in a double.
    const auto d = parseDouble(text);
    if (d && *d == std::floor(*d) && std::abs(*d) <= 9e15)
        return qint64(*d);
    return std::nullopt;
}

std::optional<bool> parseBool(const QString &text)
{
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("true") || t == QLatin1String("yes") || t == QLatin1String("on"))
        return true;
    if (t == QLatin1String("false") || t == QLatin1String("no") || t == QLatin1String("off"))
        return false;
    return std::nullopt;
}

QString formatDouble(double v)
{
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? QString::fromLatin1(buf, end - buf) : QString::number(v, 'g', 17);
}

namespace {

// Optimal string alignment distance: a swap of two neighbours (valeus) costs one edit.
int editDistance(const QString &a, const QString &b)
{
    const qsizetype n = a.size(), m = b.size();
    std::vector<std::vector<int>> d(std::size_t(n + 1), std::vector<int>(std::size_t(m + 1)));
    for (qsizetype i = 0; i <= n; ++i)
        d[i][0] = int(i);
    for (qsizetype j = 0; j <= m; ++j)
        d[0][j] = int(j);
    for (qsizetype i = 1; i <= n; ++i)
        for (qsizetype j = 1; j <= m; ++j) {
            d[i][j] = std::min(
                {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

}  // namespace

QString closestWord(const QString &word, const QStringList &known)
{
    QString best;
    int bestDistance = std::max<int>(2, int(word.size()) / 3) + 1;  // a typo, not another word
    for (const QString &k : known) {
        const int d = editDistance(word.toLower(), k.toLower());
        if (d < bestDistance) {
            bestDistance = d;
            best = k;
        }
    }
    if (!best.isEmpty())
        return best;
    // `gpus` for `gpus_per_node`: the start of a longer key.
    if (word.size() >= 3)
        for (const QString &k : known)
            if (k.startsWith(word, Qt::CaseInsensitive))
                return k;
    // `lr` for `optim.lr`: the section was left out.
    const QString leaf = word.section(QLatin1Char('.'), -1);
    for (const QString &k : known)
        if (k.section(QLatin1Char('.'), -1) == leaf)
            return k;
    return {};
}

}  // namespace orrery::core
