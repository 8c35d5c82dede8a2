// SPDX-License-Identifier: GPL-3.0-or-later
//
// Find in a LogView's current file: the search bar under the text (the field, previous, next and
// the match count). Every match of the field's text is highlighted, case-insensitively, the
// current one selected and scrolled into view; Enter and Shift+Enter in the field (or the
// arrows) go to the next and the previous, wrapping; the label says "3 of 17" or "no match".
// Typing searches on from the match selected, else from the top of the view. The bar's widgets
// have no parent until the view's layout takes them; the search is the view's child. UI thread
// only.
#pragma once

#include <QList>
#include <QObject>
#include <QString>

#include <functional>

class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QToolButton;

namespace orrery::gui {

class LogSearch : public QObject {
    Q_OBJECT
public:
    // `currentEditor`: the current file's text (nullptr: none).
    LogSearch(std::function<QPlainTextEdit *()> currentEditor, QObject *parent);

    QHBoxLayout *build();
    // The field's, next's and previous' signals (after the view has its controls).
    void connectControls();

    QLineEdit *field() const { return m_field; }
    int matchCount() const { return int(m_matches.size()); }
    int currentMatch() const { return m_currentMatch; }  // 0-based; -1: none
    QString matchText() const;

    // Finds the matches in the current file's text again and highlights them; `jumpFromView`:
    // selects the first from the match selected, else from the top of the view.
    void update(bool jumpFromView);
    void resetMatches();  // the files changed: none yet
    void findNext();
    void findPrevious();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void selectMatch(int index);
    void highlight(QPlainTextEdit *edit, qsizetype length);

    std::function<QPlainTextEdit *()> m_currentEditor;
    QLineEdit *m_field = nullptr;
    QToolButton *m_previous = nullptr;
    QToolButton *m_next = nullptr;
    QLabel *m_matchLabel = nullptr;
    QList<int> m_matches;  // positions in the current file's text
    int m_currentMatch = -1;
};

}  // namespace orrery::gui
