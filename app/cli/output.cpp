// SPDX-License-Identifier: GPL-3.0-or-later
#include "output.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <stdexcept>

namespace orrery::cli {

namespace {
OutputCapture *g_capture = nullptr;
}  // namespace

OutputCapture::OutputCapture()
{
    if (g_capture)
        throw std::logic_error("orrery: OutputCapture is not reentrant");
    g_capture = this;
}

OutputCapture::~OutputCapture()
{
    g_capture = nullptr;
}

void out(const QString &text)
{
    if (g_capture) {
        g_capture->m_text += text;
        return;
    }
    const QByteArray bytes = text.toUtf8();
    std::fwrite(bytes.constData(), 1, static_cast<size_t>(bytes.size()), stdout);
    std::fflush(stdout);
}

void err(const QString &text)
{
    const QByteArray bytes = text.toUtf8();
    std::fwrite(bytes.constData(), 1, static_cast<size_t>(bytes.size()), stderr);
}

QString formatTable(const QStringList &header, const QList<QStringList> &rows)
{
    QList<qsizetype> widths(header.size(), 0);
    auto measure = [&](const QStringList &row) {
        for (qsizetype i = 0; i < row.size() && i < widths.size(); ++i)
            widths[i] = std::max(widths[i], row[i].size());
    };
    measure(header);
    for (const QStringList &row : rows)
        measure(row);
    QString text;
    auto appendRow = [&](const QStringList &row) {
        QString line;
        for (qsizetype i = 0; i < row.size() && i < widths.size(); ++i) {
            if (i)
                line += QLatin1String("  ");
            line += i + 1 < row.size() ? row[i].leftJustified(widths[i]) : row[i];
        }
        text += line + QLatin1Char('\n');
    };
    appendRow(header);
    for (const QStringList &row : rows)
        appendRow(row);
    return text;
}

void printJson(const QJsonValue &value, bool oneLine)
{
    const QJsonDocument doc =
        value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    const QByteArray text = doc.toJson(oneLine ? QJsonDocument::Compact : QJsonDocument::Indented);
    out(QString::fromUtf8(text) + (oneLine ? QStringLiteral("\n") : QString()));
}

}  // namespace orrery::cli
