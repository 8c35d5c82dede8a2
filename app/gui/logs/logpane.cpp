// SPDX-License-Identifier: GPL-3.0-or-later
#include "logpane.h"

#include "logtext.h"

#include <QFontDatabase>
#include <QFontMetricsF>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTextCursor>
#include <QTextDocument>

#include <utility>

namespace orrery::gui {

namespace {

// The raw bytes split at the last '\n': the complete lines, and what follows (the last line so
// far, no '\n' yet).
std::pair<QByteArray, QByteArray> splitLastLine(const QByteArray &data)
{
    const qsizetype nl = data.lastIndexOf('\n');
    QByteArray partial = data.mid(nl + 1);
    // A progress bar rewrites its line with '\r' and may never end it: keep from its last '\r'
    // on (safeLogText shows only what follows it), so the line held does not grow for hours.
    qsizetype end = partial.size();
    while (end > 0 && partial[end - 1] == '\r')
        --end;
    if (const qsizetype cr = end > 0 ? partial.lastIndexOf('\r', end - 1) : -1; cr > 0)
        partial = partial.mid(cr);
    return {data.left(nl + 1), partial};
}

}  // namespace

LogPane::LogPane(const LogFile &logFile) : file(logFile)
{
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    edit = new QPlainTextEdit;
    edit->setObjectName(QStringLiteral("log-") + file.label);
    edit->setReadOnly(true);
    edit->setUndoRedoEnabled(false);
    edit->setFont(mono);
    // One line of the file, one line of the view: scroll-back keeps its place by line count.
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    edit->setTabStopDistance(8 * QFontMetricsF(mono).horizontalAdvance(QLatin1Char(' ')));
    edit->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
}

bool LogPane::apply(const core::LogRead &r, bool following)
{
    bytesRead += r.bytesRead;
    if (r.size >= 0)
        size = r.size;
    if (r.kind == core::LogRead::Kind::Failed) {
        error = r.error;
        return false;
    }
    error.clear();
    switch (r.kind) {
    case core::LogRead::Kind::Missing:
        showMissing();
        return true;
    case core::LogRead::Kind::Tail:
        showTail(r);
        return true;
    case core::LogRead::Kind::Append:
        append(r, following);
        return true;
    case core::LogRead::Kind::Earlier:
        prepend(r);
        return true;
    case core::LogRead::Kind::Unchanged:
    case core::LogRead::Kind::Failed:
        break;
    }
    return false;
}

bool LogPane::scrolled()
{
    if (m_adjusting)
        return false;
    const QScrollBar *bar = edit->verticalScrollBar();
    atBottom = bar->value() >= bar->maximum();
    return bar->value() == bar->minimum() && bar->maximum() > bar->minimum() && from > 0;
}

void LogPane::scrollToEnd()
{
    m_adjusting = true;
    edit->verticalScrollBar()->setValue(edit->verticalScrollBar()->maximum());
    m_adjusting = false;
}

QString LogPane::status(bool following) const
{
    if (!error.isEmpty())
        return tr("%1: read failed: %2 (%3)")
            .arg(file.path, error,
                 following ? tr("trying again at the next poll") : tr("turn on Follow to try again"));
    if (missing)
        return tr("%1: not created yet%2").arg(file.path, following ? tr(", waiting for it") : QString());
    if (from < 0)
        return tr("%1: reading…").arg(file.path);
    if (emptyShown)
        return tr("%1: empty%2").arg(file.path, following ? tr(", following") : QString());
    return tr("%1: bytes %2–%3 of %4 shown%5")
        .arg(file.path)
        .arg(from)
        .arg(end)
        .arg(size)
        .arg(following ? tr(", following") : QString());
}

QString LogPane::earlierLine(qint64 bytes)
{
    return tr("… %1 earlier bytes not loaded — scroll up for more").arg(bytes);
}

void LogPane::showMissing()
{
    if (!missing || edit->document()->isEmpty()) {
        m_adjusting = true;
        edit->setPlainText(tr("(not created yet)"));
        m_adjusting = false;
    }
    missing = true;
    from = end = size = -1;
    partial.clear();
}

void LogPane::showTail(const core::LogRead &r)
{
    auto [complete, unfinished] = splitLastLine(r.data);
    QString text;
    if (r.offset > 0)
        text = earlierLine(r.offset) + u'\n';
    text += appcommon::safeLogText(complete) + appcommon::safeLogText(unfinished);
    emptyShown = r.offset == 0 && r.data.isEmpty();
    if (emptyShown) {
        // Blank would look like a view that failed: say the file is there and empty, and where
        // the output went instead when the window knows.
        text = tr("(empty: %1 exists but nothing was written to it)").arg(file.path);
        if (!file.emptyHint.isEmpty())
            text += u'\n' + file.emptyHint;
    }
    m_adjusting = true;
    edit->setPlainText(text);
    // A tail is read to be seen from its end (the freshest lines).
    atBottom = true;
    edit->verticalScrollBar()->setValue(edit->verticalScrollBar()->maximum());
    m_adjusting = false;
    missing = false;
    from = r.offset;
    end = r.offset + r.data.size();
    partial = unfinished;
}

void LogPane::append(const core::LogRead &r, bool following)
{
    if (r.offset != end) {
        end = -1;  // not where this view stopped (cannot happen with one read at a time): reload
        return;
    }
    auto [complete, unfinished] = splitLastLine(partial + r.data);
    QScrollBar *bar = edit->verticalScrollBar();
    m_adjusting = true;
    if (emptyShown) {  // the first bytes of a file that was empty replace the note
        edit->clear();
        emptyShown = false;
    }
    // The document's last block is the partial line shown (empty when there is none): replaced.
    QTextCursor cursor(edit->document());
    cursor.movePosition(QTextCursor::End);
    cursor.movePosition(QTextCursor::StartOfBlock, QTextCursor::KeepAnchor);
    cursor.insertText(appcommon::safeLogText(complete) + appcommon::safeLogText(unfinished));
    if (atBottom && following)
        bar->setValue(bar->maximum());
    m_adjusting = false;
    end = r.offset + r.data.size();
    partial = unfinished;
}

void LogPane::prepend(const core::LogRead &r)
{
    // The chunk must end where the text shown begins; else the file changed under it, and the
    // next poll reads it again from its tail.
    if (from <= 0 || r.offset + r.data.size() != from)
        return;
    QString text;
    if (r.offset > 0)
        text = earlierLine(r.offset) + u'\n';
    text += appcommon::safeLogText(r.data);
    if (text.endsWith(u'\n'))
        text.chop(1);  // the first block's own line break follows
    QTextDocument *doc = edit->document();
    QScrollBar *bar = edit->verticalScrollBar();
    const int value = bar->value();
    const int blocks = doc->blockCount();
    m_adjusting = true;
    // The first block is the "earlier bytes not loaded" line: replaced by the new lines (and a
    // new such line unless the file's start was reached).
    QTextCursor cursor(doc);
    cursor.movePosition(QTextCursor::Start);
    cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    cursor.insertText(text);
    // The lines seen stay where they were: one block is one line (no wrapping).
    bar->setValue(value + doc->blockCount() - blocks);
    m_adjusting = false;
    from = r.offset;
}

}  // namespace orrery::gui
