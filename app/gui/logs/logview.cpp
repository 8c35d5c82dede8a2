// SPDX-License-Identifier: GPL-3.0-or-later
#include "logview.h"

#include "blockingpool.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QTabWidget>
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

    m_search = new LogSearch([this] { return editor(currentFile()); }, this);
    QHBoxLayout *bottom = m_search->build();
    m_status = new QLabel;
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
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

// Ctrl+F, search, Load earlier, Follow, the tab shown, and the reads coming back.
void LogView::connectControls()
{
    // In the view only: the main window's Ctrl+F filters runs.
    auto *find = new QShortcut(QKeySequence::Find, this);
    find->setContext(Qt::WidgetWithChildrenShortcut);
    connect(find, &QShortcut::activated, this, [this] {
        searchField()->setFocus(Qt::ShortcutFocusReason);
        searchField()->selectAll();
    });
    m_search->connectControls();
    connect(m_earlier, &QPushButton::clicked, this, &LogView::loadEarlier);
    connect(m_follow, &QCheckBox::toggled, this, &LogView::setFollowing);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        for (LogPane &f : m_files)
            f.edit->setExtraSelections({});
        m_search->update(false);
        updateStatus();
    });

    connect(&m_watcher, &QFutureWatcher<QList<LogRead>>::finished, this,
            [this] { applyReads(m_watcher.result()); });
}

void LogView::addFile(const File &file)
{
    LogPane f(file);
    QScrollBar *bar = f.edit->verticalScrollBar();
    QPlainTextEdit *edit = f.edit;
    connect(bar, &QScrollBar::valueChanged, this, [this, edit](int) {
        for (LogPane &v : m_files)
            if (v.edit == edit && v.scrolled() && v.edit == m_tabs->currentWidget())
                loadEarlier();
    });
    connect(bar, &QScrollBar::rangeChanged, this, [this, edit, bar](int, int max) {
        for (LogPane &v : m_files)
            if (v.edit == edit && v.atBottom && m_following && bar->value() != max)
                v.scrollToEnd();
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
    m_search->resetMatches();
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
        for (LogPane &f : m_files) {
            f.atBottom = true;
            f.scrollToEnd();
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
        LogPane &f = m_files[i];
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
            changed = m_files[r.file].apply(r, m_following) || changed;
    if (changed)
        m_search->update(false);
    updateStatus();
    bool more = m_pollWanted;
    for (const LogPane &f : m_files)
        more = more || f.earlierWanted;
    if (more)
        startRead();
    Q_EMIT updated();
}

void LogView::updateStatus()
{
    const int index = currentFile();
    m_earlier->setEnabled(index >= 0 && index < m_files.size() && m_files[index].from > 0);
    if (index < 0 || index >= m_files.size()) {
        m_status->clear();
        return;
    }
    m_status->setText(m_files[index].status(m_following));
}

}  // namespace orrery::gui
