// SPDX-License-Identifier: GPL-3.0-or-later
//
// One file of a LogView: its tab's read-only monospace text and which of the file's bytes that
// text shows. A read's bytes go in by their kind (core::LogRead): a tail replaces the text (after a
// line saying how many earlier bytes are not loaded), new bytes continue the last line, an
// earlier chunk goes on top with the lines in view kept in place, and a file not created yet or
// empty says so. Text passes through safeLogText (logtext.h) first: a log is untrusted bytes.
// One line of the file is one line of the text (no wrapping), so scroll-back keeps its place by
// line count. The view owns the pane and its editor (the tab takes it); UI thread only.
#pragma once

#include "orrery/core/logread.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QString>

class QPlainTextEdit;

namespace orrery::gui {

// A file a LogView shows (LogView::File).
struct LogFile {
    QString label;  // the tab: "stdout", "stderr"
    QString path;  // as the source knows it
    QString emptyHint = {};  // shown under "(empty)" while the file has no byte
};

class LogPane {
    Q_DECLARE_TR_FUNCTIONS(LogPane)
public:
    LogPane() = default;  // no file and no editor (QList::value's, out of range)
    // Makes the pane's editor, without a parent: the view's tab takes it.
    explicit LogPane(const LogFile &logFile);

    // Puts the read's bytes in (`following`: the end stays in view as it grows); true: the text
    // shown changed.
    bool apply(const core::LogRead &r, bool following);
    // After the user moved the scroll bar: whether the view is at the end now (atBottom); true
    // when it reached the top and there are earlier bytes to read.
    bool scrolled();
    // The end in view (the pane moves the scroll bar itself: scrolled() ignores it).
    void scrollToEnd();
    // The view's status line for this file.
    QString status(bool following) const;

    LogFile file;
    QPlainTextEdit *edit = nullptr;
    qint64 from = -1;  // the byte offset of the first byte shown; -1: nothing loaded
    qint64 end = -1;  // the offset past the last byte read
    qint64 size = -1;  // at the last poll
    QByteArray partial;  // the last line without its '\n' yet (shown; replaced as it grows)
    qint64 bytesRead = 0;
    QString error;  // why the last read failed (empty: it did not)
    bool missing = false;
    bool earlierWanted = false;
    bool atBottom = true;  // auto-scroll: the user has not scrolled up from the end
    bool emptyShown = false;  // the "(empty)" note is the text, not the file's bytes

private:
    void showMissing();
    void showTail(const core::LogRead &r);
    void append(const core::LogRead &r, bool following);
    void prepend(const core::LogRead &r);
    static QString earlierLine(qint64 bytes);

    bool m_adjusting = false;  // the pane is moving its scroll bar itself
};

}  // namespace orrery::gui
