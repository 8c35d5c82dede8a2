// SPDX-License-Identifier: GPL-3.0-or-later
#include "logsearch.h"

#include <QColor>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextEdit>
#include <QToolButton>

#include <algorithm>

namespace orrery::gui {

LogSearch::LogSearch(std::function<QPlainTextEdit *()> currentEditor, QObject *parent)
    : QObject(parent), m_currentEditor(std::move(currentEditor))
{ }

// Find, previous and next, and the match count.
QHBoxLayout *LogSearch::build()
{
    m_field = new QLineEdit;
    m_field->setObjectName(QStringLiteral("logSearch"));
    m_field->setPlaceholderText(tr("Find (Ctrl+F; Enter: next, Shift+Enter: previous)"));
    m_field->setClearButtonEnabled(true);
    m_field->installEventFilter(this);
    m_previous = new QToolButton;
    m_previous->setArrowType(Qt::UpArrow);
    m_previous->setToolTip(tr("Previous match (Shift+Enter)"));
    m_next = new QToolButton;
    m_next->setArrowType(Qt::DownArrow);
    m_next->setToolTip(tr("Next match (Enter)"));
    m_matchLabel = new QLabel;
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_field, 1);
    bottom->addWidget(m_previous);
    bottom->addWidget(m_next);
    bottom->addWidget(m_matchLabel);
    return bottom;
}

void LogSearch::connectControls()
{
    connect(m_field, &QLineEdit::textChanged, this, [this] { update(true); });
    connect(m_next, &QToolButton::clicked, this, &LogSearch::findNext);
    connect(m_previous, &QToolButton::clicked, this, &LogSearch::findPrevious);
}

void LogSearch::update(bool jumpFromView)
{
    m_matches.clear();
    m_currentMatch = -1;
    QPlainTextEdit *edit = m_currentEditor();
    const QString needle = m_field->text();
    if (edit && !needle.isEmpty()) {
        const QString hay = edit->toPlainText();  // one position per character, as the document's
        for (qsizetype p = hay.indexOf(needle, 0, Qt::CaseInsensitive); p >= 0;
             p = hay.indexOf(needle, p + needle.size(), Qt::CaseInsensitive))
            m_matches.append(int(p));
        const QTextCursor cursor = edit->textCursor();
        if (jumpFromView) {
            // Typing searches on from the match selected, else from the top of the view.
            const int from = cursor.hasSelection() ? cursor.selectionStart()
                                                   : edit->cursorForPosition(QPoint(0, 0)).block().position();
            const auto it = std::lower_bound(m_matches.cbegin(), m_matches.cend(), from);
            if (!m_matches.isEmpty())
                selectMatch(it == m_matches.cend() ? 0 : int(it - m_matches.cbegin()));
        } else if (cursor.hasSelection() &&
                   cursor.selectionEnd() - cursor.selectionStart() == needle.size()) {
            // Text came or went: the match selected is still the current one (the document
            // moved the cursor with the text).
            m_currentMatch = int(m_matches.indexOf(cursor.selectionStart()));
        }
    }
    if (edit)
        highlight(edit, needle.size());
    m_previous->setEnabled(!m_matches.isEmpty());
    m_next->setEnabled(!m_matches.isEmpty());
    m_matchLabel->setText(matchText());
}

void LogSearch::highlight(QPlainTextEdit *edit, qsizetype length)
{
    // Dark text on the highlight, whatever the theme's text colour.
    QTextCharFormat match, current;
    match.setBackground(QColor(0xff, 0xe0, 0x4d));
    match.setForeground(Qt::black);
    current.setBackground(QColor(0xff, 0x98, 0x1a));
    current.setForeground(Qt::black);
    QList<QTextEdit::ExtraSelection> selections;
    selections.reserve(m_matches.size());
    for (int i = 0; i < m_matches.size(); ++i) {
        QTextCursor c(edit->document());
        c.setPosition(m_matches[i]);
        c.setPosition(m_matches[i] + int(length), QTextCursor::KeepAnchor);
        selections.append({c, i == m_currentMatch ? current : match});
    }
    edit->setExtraSelections(selections);
}

void LogSearch::resetMatches()
{
    m_matches.clear();
    m_currentMatch = -1;
}

void LogSearch::selectMatch(int index)
{
    QPlainTextEdit *edit = m_currentEditor();
    if (!edit || index < 0 || index >= m_matches.size())
        return;
    m_currentMatch = index;
    QTextCursor c(edit->document());
    c.setPosition(m_matches[index]);
    c.setPosition(m_matches[index] + int(m_field->text().size()), QTextCursor::KeepAnchor);
    edit->setTextCursor(c);
    edit->ensureCursorVisible();
}

void LogSearch::findNext()
{
    if (m_matches.isEmpty())
        return;
    selectMatch(m_currentMatch < 0 ? 0 : (m_currentMatch + 1) % int(m_matches.size()));
    update(false);
}

void LogSearch::findPrevious()
{
    if (m_matches.isEmpty())
        return;
    const int n = int(m_matches.size());
    selectMatch(m_currentMatch < 0 ? n - 1 : (m_currentMatch + n - 1) % n);
    update(false);
}

QString LogSearch::matchText() const
{
    if (m_field->text().isEmpty())
        return {};
    if (m_matches.isEmpty())
        return tr("no match");
    if (m_currentMatch < 0)
        return m_matches.size() == 1 ? tr("1 match") : tr("%1 matches").arg(m_matches.size());
    return tr("%1 of %2").arg(m_currentMatch + 1).arg(m_matches.size());
}

bool LogSearch::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_field && event->type() == QEvent::KeyPress) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            if (key->modifiers() & Qt::ShiftModifier)
                findPrevious();
            else
                findNext();
            return true;
        }
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace orrery::gui
