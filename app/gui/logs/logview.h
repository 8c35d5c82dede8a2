// SPDX-License-Identifier: GPL-3.0-or-later
//
// The live tail of a job's or trial's standard output and error (UX.md: "Why did trial 7 die?"),
// one tab per file, each a read-only monospace text (LogPane). Only the last kChunkBytes of a file are
// read first, cut at a line start; scrolling to the top (or "Load earlier") reads the chunk
// before it. While "Follow" is on, every file is polled (one size query each) and only the bytes
// past the last one read are appended; a file that shrank is read again from its tail, one not
// created yet is polled until it appears. Text passes through safeLogText (logtext.h) first: a log is
// untrusted bytes. Search (Ctrl+F, LogSearch) highlights every match, case-insensitively. An empty file
// says so, with its File::emptyHint (where the output went instead: the bundled trainer writes
// its progress to events.jsonl, not stdout). A trial's view has an attempt chooser (setAttempts):
// the window answers attemptChosen with that attempt's files (setFiles).
//
// Threads: the files are read through a LogSource (core::readLogFiles over this machine's or a
// cluster's executor: remote::LogReader) on a pool thread, one read of all the files at a time per view, so
// the window never waits on a silent cluster: a poll that comes while a read is still out is skipped, and a
// read that fails says why in the status line and is tried again at the next poll. The widget and everything
// it shows belong to the UI thread; results come back to it through a QFutureWatcher. A read still out when
// the view closes finishes on its own (it holds the source, not the view) and its result is dropped.
#pragma once

#include "logpane.h"
#include "logsearch.h"

#include "orrery/core/logread.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QFutureWatcher>
#include <QList>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace orrery::gui {

// Where a log's bytes come from: one batched read of the view's files, answered in the jobs'
// order (core::readLogFiles; the window's is a remote::LogReader for this machine or the
// cluster). It blocks (a cluster: a network round trip) and throws std::exception when the read
// fails: called on a pool thread, one call at a time, never on the UI thread.
using LogSource = std::function<QList<core::LogRead>(const QList<core::LogReadJob> &)>;
using LogRead = core::LogRead;

class LogView : public QWidget {
    Q_OBJECT
public:
    // Read first, and per "Load earlier" (core::kLogChunkBytes, the terminal monitor's tail too).
    static constexpr qint64 kChunkBytes = core::kLogChunkBytes;
    // A file that grew by more than this between two polls is read again from its tail (the
    // bytes in between are then not loaded: scroll back for them) rather than all appended.
    static constexpr qint64 kMaxAppendBytes = core::kLogMaxAppendBytes;
    static constexpr int kDefaultPollMs = 1000;

    using File = LogFile;  // the tab's label, the path, the hint while it is empty

    LogView(const QString &title, LogSource source, const QList<File> &files, QWidget *parent = nullptr);
    ~LogView() override;

    QString title() const { return m_title; }
    int fileCount() const { return int(m_files.size()); }
    File file(int index) const;
    int currentFile() const;
    void setCurrentFile(int index);
    // Shows other files (another attempt's) in place of these, `current` in front; a read still
    // out for the old files is dropped.
    void setFiles(const QList<File> &files, int current = 0);
    // The attempt chooser: hidden with fewer than two labels; `current` selected.
    void setAttempts(const QStringList &labels, int current);
    int currentAttempt() const;
    QStringList attemptLabels() const;

    // What file `index` shows, as plain text (the "earlier bytes not loaded" line and the
    // "(not created yet)" placeholder included).
    QString text(int index) const;
    // The byte offset the text shown starts at, and the one it ends at; -1: nothing loaded.
    qint64 loadedFrom(int index) const;
    qint64 loadedTo(int index) const;
    // Bytes read from the file so far, every read together.
    qint64 bytesRead(int index) const;
    // The last read of the file failed: why (empty: it did not).
    QString error(int index) const;
    QString statusText() const;
    QPlainTextEdit *editor(int index) const;

    bool isFollowing() const { return m_following; }
    void setFollowing(bool on);
    int pollInterval() const { return m_poll.interval(); }
    void setPollInterval(int ms) { m_poll.setInterval(ms); }
    bool isReading() const { return m_reading; }

    // Search in the current file: the field (Ctrl+F focuses it), the matches of its text, the
    // current one (0-based; -1: none) and what the view says ("3 of 17", "no match").
    QLineEdit *searchField() const { return m_search->field(); }
    int matchCount() const { return m_search->matchCount(); }
    int currentMatch() const { return m_search->currentMatch(); }
    QString matchText() const { return m_search->matchText(); }

public Q_SLOTS:
    // Polls every file now, or as soon as the read out comes back.
    void refresh();
    // Reads the chunk before the current file's first byte shown and puts it on top.
    void loadEarlier();
    void findNext() { m_search->findNext(); }
    void findPrevious() { m_search->findPrevious(); }

Q_SIGNALS:
    // After each read came back and what it found was shown (also when nothing had changed, or
    // it failed).
    void updated();
    // The user chose attempt `index` of setAttempts' labels.
    void attemptChosen(int index);

private:
    // The constructor's parts.
    QHBoxLayout *buildTopBar(const QString &title);
    void connectControls();

    void addFile(const File &file);
    void startRead();
    void applyReads(const QList<LogRead> &reads);
    void updateStatus();

    QString m_title;
    LogSource m_source;
    QList<LogPane> m_files;
    QTimer m_poll;
    QFutureWatcher<QList<LogRead>> m_watcher;
    bool m_reading = false;
    int m_generation = 0;  // bumped by setFiles: a read of older files is dropped
    int m_readGeneration = 0;  // the generation the read out was started for
    bool m_following = true;
    bool m_pollWanted = false;  // refresh() or Follow came while a read was out

    QTabWidget *m_tabs = nullptr;
    QComboBox *m_attempts = nullptr;
    QLabel *m_attemptsLabel = nullptr;
    QCheckBox *m_follow = nullptr;
    QPushButton *m_earlier = nullptr;
    QLabel *m_status = nullptr;
    LogSearch *m_search = nullptr;
};

}  // namespace orrery::gui
