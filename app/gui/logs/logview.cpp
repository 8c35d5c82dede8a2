// SPDX-License-Identifier: GPL-3.0-or-later
#include "logview.h"

#include "blockingpool.h"
#include "logtext.h"

#include <QCheckBox>
#include <QColor>
#include <QComboBox>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextEdit>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <stdexcept>

namespace orrery::gui {

// --- the worker's reads -------------------------------------------------------------------------

namespace {

// On a pool thread: one batched read of every job; a failed read fails each job, saying why.
QList<LogRead> readAll(const LogSource &source, const QList<core::LogReadJob> &jobs)
{
    try {
        return source(jobs);
    } catch (const std::exception &e) {
        QList<LogRead> failed;
        for (const core::LogReadJob &job : jobs) {
            LogRead r;
            r.file = job.file;
            r.error = QString::fromUtf8(e.what());
            failed.append(r);
        }
        return failed;
    }
}

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

// --- the view -----------------------------------------------------------------------------------

LogView::LogView(const QString &title, LogSource source, const QList<File> &files, QWidget *parent)
    : QWidget(parent), m_title(title), m_source(std::move(source))
{
    setWindowTitle(title);

    QHBoxLayout *top = buildTopBar(title);
    m_tabs = new QTabWidget;
    m_tabs->setDocumentMode(true);
    for (const File &file : files)
        addFile(file);

    QHBoxLayout *bottom = buildSearchBar();
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_tabs, 1);
    layout->addLayout(bottom);
    layout->addWidget(m_status);
    connectControls();
    m_poll.setInterval(kDefaultPollMs);
    connect(&m_poll, &QTimer::timeout, this, [this] {
        if (!m_reading)
            startRead();
    });
    m_poll.start();
    startRead();
}

// The title, the attempt chooser, Load earlier and Follow.
QHBoxLayout *LogView::buildTopBar(const QString &title)
{
    auto *heading = new QLabel(title);
    QFont bold = heading->font();
    bold.setBold(true);
    heading->setFont(bold);
    heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_earlier = new QPushButton(tr("Load earlier"));
    m_earlier->setToolTip(tr("Read the %1 KiB before the first line shown").arg(kChunkBytes / 1024));
    m_follow = new QCheckBox(tr("Follow"));
    m_follow->setChecked(true);
    m_follow->setToolTip(tr("Read what is new every second, and keep the view at the end"));
    m_attemptsLabel = new QLabel(tr("Attempt:"));
    m_attempts = new QComboBox;
    m_attempts->setObjectName(QStringLiteral("logAttempts"));
    m_attempts->setToolTip(tr("Each attempt's own output (the latest first shown)"));
    m_attemptsLabel->hide();
    m_attempts->hide();
    connect(m_attempts, &QComboBox::activated, this, &LogView::attemptChosen);
    auto *top = new QHBoxLayout;
    top->addWidget(heading, 1);
    top->addWidget(m_attemptsLabel);
    top->addWidget(m_attempts);
    top->addWidget(m_earlier);
    top->addWidget(m_follow);
    return top;
}

// Find, previous and next, and the match count.
QHBoxLayout *LogView::buildSearchBar()
{
    m_search = new QLineEdit;
    m_search->setObjectName(QStringLiteral("logSearch"));
    m_search->setPlaceholderText(tr("Find (Ctrl+F; Enter: next, Shift+Enter: previous)"));
    m_search->setClearButtonEnabled(true);
    m_search->installEventFilter(this);
    m_previous = new QToolButton;
    m_previous->setArrowType(Qt::UpArrow);
    m_previous->setToolTip(tr("Previous match (Shift+Enter)"));
    m_next = new QToolButton;
    m_next->setArrowType(Qt::DownArrow);
    m_next->setToolTip(tr("Next match (Enter)"));
    m_matchLabel = new QLabel;
    m_status = new QLabel;
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_search, 1);
    bottom->addWidget(m_previous);
    bottom->addWidget(m_next);
    bottom->addWidget(m_matchLabel);
    return bottom;
}

// Ctrl+F, search, Load earlier, Follow, the tab shown, and the reads coming back.
void LogView::connectControls()
{
    // In the view only: the main window's Ctrl+F filters runs.
    auto *find = new QShortcut(QKeySequence::Find, this);
    find->setContext(Qt::WidgetWithChildrenShortcut);
    connect(find, &QShortcut::activated, this, [this] {
        m_search->setFocus(Qt::ShortcutFocusReason);
        m_search->selectAll();
    });
    connect(m_search, &QLineEdit::textChanged, this, [this] { updateMatches(true); });
    connect(m_next, &QToolButton::clicked, this, &LogView::findNext);
    connect(m_previous, &QToolButton::clicked, this, &LogView::findPrevious);
    connect(m_earlier, &QPushButton::clicked, this, &LogView::loadEarlier);
    connect(m_follow, &QCheckBox::toggled, this, &LogView::setFollowing);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        for (FileView &f : m_files)
            f.edit->setExtraSelections({});
        updateMatches(false);
        updateStatus();
    });

    connect(&m_watcher, &QFutureWatcher<QList<LogRead>>::finished, this,
            [this] { applyReads(m_watcher.result()); });
}

void LogView::addFile(const File &file)
{
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    FileView f;
    f.file = file;
    f.edit = new QPlainTextEdit;
    f.edit->setObjectName(QStringLiteral("log-") + file.label);
    f.edit->setReadOnly(true);
    f.edit->setUndoRedoEnabled(false);
    f.edit->setFont(mono);
    // One line of the file, one line of the view: scroll-back keeps its place by line count.
    f.edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    f.edit->setTabStopDistance(8 * QFontMetricsF(mono).horizontalAdvance(QLatin1Char(' ')));
    f.edit->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    QScrollBar *bar = f.edit->verticalScrollBar();
    QPlainTextEdit *edit = f.edit;
    connect(bar, &QScrollBar::valueChanged, this, [this, edit](int) {
        for (FileView &v : m_files)
            if (v.edit == edit)
                onScrolled(v);
    });
    connect(bar, &QScrollBar::rangeChanged, this, [this, edit, bar](int, int max) {
        for (FileView &v : m_files)
            if (v.edit == edit && v.atBottom && m_following && bar->value() != max) {
                m_adjusting = true;
                bar->setValue(max);
                m_adjusting = false;
            }
    });
    m_tabs->addTab(f.edit, file.label);
    m_tabs->setTabToolTip(m_tabs->count() - 1, file.path);
    m_files.append(f);
}

LogView::~LogView()
{
    // QWidget deletes the children after this object's members are gone: none of their signals
    // (a tab removed, a scroll bar's range) may reach it then.
    const QList<QObject *> children = findChildren<QObject *>();
    for (QObject *child : children)
        disconnect(child, nullptr, this, nullptr);
}

LogView::File LogView::file(int index) const
{
    return m_files.value(index).file;
}

int LogView::currentFile() const
{
    return m_tabs->currentIndex();
}

void LogView::setCurrentFile(int index)
{
    m_tabs->setCurrentIndex(index);
}

void LogView::setFiles(const QList<File> &files, int current)
{
    ++m_generation;
    {
        const QSignalBlocker block(m_tabs);
        while (m_tabs->count() > 0) {
            QWidget *edit = m_tabs->widget(0);
            m_tabs->removeTab(0);
            disconnect(edit, nullptr, this, nullptr);
            if (auto *text = qobject_cast<QPlainTextEdit *>(edit))
                disconnect(text->verticalScrollBar(), nullptr, this, nullptr);
            edit->deleteLater();
        }
        m_files.clear();
        for (const File &file : files)
            addFile(file);
    }
    m_matches.clear();
    m_currentMatch = -1;
    setCurrentFile(std::clamp(current, 0, std::max(0, int(files.size()) - 1)));
    updateStatus();
    refresh();
}

void LogView::setAttempts(const QStringList &labels, int current)
{
    const QSignalBlocker block(m_attempts);
    m_attempts->clear();
    m_attempts->addItems(labels);
    m_attempts->setCurrentIndex(current);
    m_attempts->setVisible(labels.size() > 1);
    m_attemptsLabel->setVisible(labels.size() > 1);
}

int LogView::currentAttempt() const
{
    return m_attempts->currentIndex();
}

QStringList LogView::attemptLabels() const
{
    QStringList labels;
    for (int i = 0; i < m_attempts->count(); ++i)
        labels.append(m_attempts->itemText(i));
    return labels;
}

QString LogView::text(int index) const
{
    return index >= 0 && index < m_files.size() ? m_files[index].edit->toPlainText() : QString();
}

qint64 LogView::loadedFrom(int index) const
{
    return m_files.value(index).from;
}

qint64 LogView::loadedTo(int index) const
{
    return m_files.value(index).end;
}

qint64 LogView::bytesRead(int index) const
{
    return m_files.value(index).bytesRead;
}

QString LogView::error(int index) const
{
    return m_files.value(index).error;
}

QString LogView::statusText() const
{
    return m_status->text();
}

QPlainTextEdit *LogView::editor(int index) const
{
    return m_files.value(index).edit;
}

void LogView::setFollowing(bool on)
{
    if (on == m_following)
        return;
    m_following = on;
    {
        const QSignalBlocker block(m_follow);
        m_follow->setChecked(on);
    }
    if (on) {
        for (FileView &f : m_files) {
            f.atBottom = true;
            m_adjusting = true;
            f.edit->verticalScrollBar()->setValue(f.edit->verticalScrollBar()->maximum());
            m_adjusting = false;
        }
        m_poll.start();
        refresh();
    } else {
        m_poll.stop();
    }
    updateStatus();
}

void LogView::refresh()
{
    if (m_reading)
        m_pollWanted = true;
    else
        startRead();
}

void LogView::loadEarlier()
{
    const int index = currentFile();
    if (index < 0 || index >= m_files.size() || m_files[index].from <= 0)
        return;
    m_files[index].earlierWanted = true;
    if (!m_reading)
        startRead();
}

void LogView::startRead()
{
    if (m_reading || m_files.isEmpty())
        return;
    // Scroll-back first (the user is waiting on it); a poll due meanwhile comes at the next tick.
    QList<core::LogReadJob> jobs;
    for (int i = 0; i < m_files.size(); ++i) {
        FileView &f = m_files[i];
        if (f.earlierWanted && f.from > 0)
            jobs.append({core::LogReadJob::Kind::Earlier, i, f.file.path, f.from, f.end});
        f.earlierWanted = false;
    }
    if (jobs.isEmpty()) {
        for (int i = 0; i < m_files.size(); ++i)
            jobs.append(
                {core::LogReadJob::Kind::Poll, i, m_files[i].file.path, m_files[i].from, m_files[i].end});
        m_pollWanted = false;
    }
    m_reading = true;
    m_readGeneration = m_generation;
    // The task holds the source, not the view: a view closed meanwhile drops the result.
    m_watcher.setFuture(
        QtConcurrent::run(blockingPool(), [source = m_source, jobs] { return readAll(source, jobs); }));
}

void LogView::applyReads(const QList<LogRead> &reads)
{
    m_reading = false;
    if (m_readGeneration != m_generation) {  // the files changed meanwhile: read the new ones
        startRead();
        return;
    }
    bool changed = false;
    for (const LogRead &r : reads)
        if (r.file >= 0 && r.file < m_files.size())
            changed = apply(m_files[r.file], r) || changed;
    if (changed)
        updateMatches(false);
    updateStatus();
    bool more = m_pollWanted;
    for (const FileView &f : m_files)
        more = more || f.earlierWanted;
    if (more)
        startRead();
    Q_EMIT updated();
}

bool LogView::apply(FileView &f, const LogRead &r)
{
    f.bytesRead += r.bytesRead;
    if (r.size >= 0)
        f.size = r.size;
    if (r.kind == LogRead::Kind::Failed) {
        f.error = r.error;
        return false;
    }
    f.error.clear();
    switch (r.kind) {
    case LogRead::Kind::Missing:
        showMissing(f);
        return true;
    case LogRead::Kind::Tail:
        showTail(f, r);
        return true;
    case LogRead::Kind::Append:
        append(f, r);
        return true;
    case LogRead::Kind::Earlier:
        prepend(f, r);
        return true;
    case LogRead::Kind::Unchanged:
    case LogRead::Kind::Failed:
        break;
    }
    return false;
}

QString LogView::earlierLine(qint64 bytes)
{
    return tr("… %1 earlier bytes not loaded — scroll up for more").arg(bytes);
}

void LogView::showMissing(FileView &f)
{
    if (!f.missing || f.edit->document()->isEmpty()) {
        m_adjusting = true;
        f.edit->setPlainText(tr("(not created yet)"));
        m_adjusting = false;
    }
    f.missing = true;
    f.from = f.end = f.size = -1;
    f.partial.clear();
}

void LogView::showTail(FileView &f, const LogRead &r)
{
    auto [complete, partial] = splitLastLine(r.data);
    QString text;
    if (r.offset > 0)
        text = earlierLine(r.offset) + u'\n';
    text += appcommon::safeLogText(complete) + appcommon::safeLogText(partial);
    f.emptyShown = r.offset == 0 && r.data.isEmpty();
    if (f.emptyShown) {
        // Blank would look like a view that failed: say the file is there and empty, and where
        // the output went instead when the window knows.
        text = tr("(empty: %1 exists but nothing was written to it)").arg(f.file.path);
        if (!f.file.emptyHint.isEmpty())
            text += u'\n' + f.file.emptyHint;
    }
    m_adjusting = true;
    f.edit->setPlainText(text);
    // A tail is read to be seen from its end (the freshest lines).
    f.atBottom = true;
    f.edit->verticalScrollBar()->setValue(f.edit->verticalScrollBar()->maximum());
    m_adjusting = false;
    f.missing = false;
    f.from = r.offset;
    f.end = r.offset + r.data.size();
    f.partial = partial;
}

void LogView::append(FileView &f, const LogRead &r)
{
    if (r.offset != f.end) {
        f.end = -1;  // not where this view stopped (cannot happen with one read at a time): reload
        return;
    }
    auto [complete, partial] = splitLastLine(f.partial + r.data);
    QScrollBar *bar = f.edit->verticalScrollBar();
    m_adjusting = true;
    if (f.emptyShown) {  // the first bytes of a file that was empty replace the note
        f.edit->clear();
        f.emptyShown = false;
    }
    // The document's last block is the partial line shown (empty when there is none): replaced.
    QTextCursor cursor(f.edit->document());
    cursor.movePosition(QTextCursor::End);
    cursor.movePosition(QTextCursor::StartOfBlock, QTextCursor::KeepAnchor);
    cursor.insertText(appcommon::safeLogText(complete) + appcommon::safeLogText(partial));
    if (f.atBottom && m_following)
        bar->setValue(bar->maximum());
    m_adjusting = false;
    f.end = r.offset + r.data.size();
    f.partial = partial;
}

void LogView::prepend(FileView &f, const LogRead &r)
{
    // The chunk must end where the text shown begins; else the file changed under it, and the
    // next poll reads it again from its tail.
    if (f.from <= 0 || r.offset + r.data.size() != f.from)
        return;
    QString text;
    if (r.offset > 0)
        text = earlierLine(r.offset) + u'\n';
    text += appcommon::safeLogText(r.data);
    if (text.endsWith(u'\n'))
        text.chop(1);  // the first block's own line break follows
    QTextDocument *doc = f.edit->document();
    QScrollBar *bar = f.edit->verticalScrollBar();
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
    f.from = r.offset;
}

void LogView::onScrolled(FileView &f)
{
    if (m_adjusting)
        return;
    const QScrollBar *bar = f.edit->verticalScrollBar();
    f.atBottom = bar->value() >= bar->maximum();
    if (bar->value() == bar->minimum() && bar->maximum() > bar->minimum() && f.from > 0 &&
        f.edit == m_tabs->currentWidget())
        loadEarlier();
}

void LogView::updateStatus()
{
    const int index = currentFile();
    m_earlier->setEnabled(index >= 0 && index < m_files.size() && m_files[index].from > 0);
    if (index < 0 || index >= m_files.size()) {
        m_status->clear();
        return;
    }
    const FileView &f = m_files[index];
    QString s;
    if (!f.error.isEmpty())
        s = tr("%1: read failed: %2 (%3)")
                .arg(f.file.path, f.error,
                     m_following ? tr("trying again at the next poll") : tr("turn on Follow to try again"));
    else if (f.missing)
        s = tr("%1: not created yet%2").arg(f.file.path, m_following ? tr(", waiting for it") : QString());
    else if (f.from < 0)
        s = tr("%1: reading…").arg(f.file.path);
    else if (f.emptyShown)
        s = tr("%1: empty%2").arg(f.file.path, m_following ? tr(", following") : QString());
    else
        s = tr("%1: bytes %2–%3 of %4 shown%5")
                .arg(f.file.path)
                .arg(f.from)
                .arg(f.end)
                .arg(f.size)
                .arg(m_following ? tr(", following") : QString());
    m_status->setText(s);
}

// --- search -------------------------------------------------------------------------------------

void LogView::updateMatches(bool jumpFromView)
{
    m_matches.clear();
    m_currentMatch = -1;
    QPlainTextEdit *edit = editor(currentFile());
    const QString needle = m_search->text();
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
    if (edit) {
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
            c.setPosition(m_matches[i] + int(needle.size()), QTextCursor::KeepAnchor);
            selections.append({c, i == m_currentMatch ? current : match});
        }
        edit->setExtraSelections(selections);
    }
    m_previous->setEnabled(!m_matches.isEmpty());
    m_next->setEnabled(!m_matches.isEmpty());
    m_matchLabel->setText(matchText());
}

void LogView::selectMatch(int index)
{
    QPlainTextEdit *edit = editor(currentFile());
    if (!edit || index < 0 || index >= m_matches.size())
        return;
    m_currentMatch = index;
    QTextCursor c(edit->document());
    c.setPosition(m_matches[index]);
    c.setPosition(m_matches[index] + int(m_search->text().size()), QTextCursor::KeepAnchor);
    edit->setTextCursor(c);
    edit->ensureCursorVisible();
}

void LogView::findNext()
{
    if (m_matches.isEmpty())
        return;
    selectMatch(m_currentMatch < 0 ? 0 : (m_currentMatch + 1) % int(m_matches.size()));
    updateMatches(false);
}

void LogView::findPrevious()
{
    if (m_matches.isEmpty())
        return;
    const int n = int(m_matches.size());
    selectMatch(m_currentMatch < 0 ? n - 1 : (m_currentMatch + n - 1) % n);
    updateMatches(false);
}

QString LogView::matchText() const
{
    if (m_search->text().isEmpty())
        return {};
    if (m_matches.isEmpty())
        return tr("no match");
    if (m_currentMatch < 0)
        return m_matches.size() == 1 ? tr("1 match") : tr("%1 matches").arg(m_matches.size());
    return tr("%1 of %2").arg(m_currentMatch + 1).arg(m_matches.size());
}

bool LogView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_search && event->type() == QEvent::KeyPress) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            if (key->modifiers() & Qt::ShiftModifier)
                findPrevious();
            else
                findNext();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace orrery::gui
