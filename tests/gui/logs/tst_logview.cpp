// SPDX-License-Identifier: GPL-3.0-or-later
// The live log view, offscreen, on real files in a temporary directory: only the tail of a large
// log is read, scrolling to the top puts the chunk before it on top without moving what is seen,
// following appends only the new bytes, a truncated file is read again, a missing one is waited
// for, a failing or silent source neither blocks the window nor is asked twice at once; log
// bytes are made safe to show (a table of the pure function); search counts and moves.
#include "testsupport.h"

#include "logtext.h"
#include "logview.h"

#include "orrery/remote/logreader.h"

#include <QApplication>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBlock>

#include <atomic>
#include <memory>
#include <stdexcept>

using orrery::appcommon::safeLogText;
using orrery::gui::LogSource;
using orrery::gui::LogView;

namespace {

constexpr qint64 kChunk = LogView::kChunkBytes;

// Lines of many lengths ("line 0000123 xxx..."), so that a chunk's first byte falls inside a
// line, as in a real log.
struct BigLog {
    QByteArray bytes;
    QList<qint64> lineStarts;
};

BigLog bigLog(qint64 atLeast)
{
    BigLog log;
    for (int i = 0; log.bytes.size() < atLeast; ++i) {
        log.lineStarts.append(log.bytes.size());
        log.bytes +=
            "line " + QByteArray::number(i).rightJustified(7, '0') + ' ' + QByteArray(i % 97, 'x') + '\n';
    }
    return log;
}

bool writeFile(const QString &path, const QByteArray &data,
               QIODevice::OpenMode mode = QIODevice::WriteOnly | QIODevice::Truncate)
{
    QFile f(path);
    return f.open(mode) && f.write(data) == data.size();
}

bool appendFile(const QString &path, const QByteArray &data)
{
    return writeFile(path, data, QIODevice::WriteOnly | QIODevice::Append);
}

QList<LogView::File> stdoutOnly(const QString &path)
{
    return {{QStringLiteral("stdout"), path}};
}

QString earlierLine(qint64 bytes)
{
    return QStringLiteral("… %1 earlier bytes not loaded — scroll up for more").arg(bytes);
}

// What the view must show of `file` loaded from byte `from` on.
QString expectedText(const QByteArray &file, qint64 from)
{
    QString text;
    if (from > 0)
        text = earlierLine(from) + u'\n';
    return text + safeLogText(file.mid(from));
}

// The line at the top of the editor's viewport.
QTextBlock topBlock(QPlainTextEdit *edit)
{
    return edit->cursorForPosition(QPoint(0, 0)).block();
}

bool atBottom(QPlainTextEdit *edit)
{
    return edit->verticalScrollBar()->value() == edit->verticalScrollBar()->maximum();
}

// This machine's files, read as the window reads them (remote::LogReader).
LogSource localFiles()
{
    auto reader = std::make_shared<orrery::remote::LogReader>(QString());
    return [reader](const QList<orrery::core::LogReadJob> &jobs) { return reader->read(jobs); };
}

// The local files, through a read that can fail (a lost connection) or be held (a silent
// cluster) until released.
struct Script {
    std::atomic<bool> fail{false};
    std::atomic<bool> hold{false};
    std::atomic<int> calls{0};
    QSemaphore release;
};

LogSource scripted(const std::shared_ptr<Script> &script)
{
    return [script, local = localFiles()](const QList<orrery::core::LogReadJob> &jobs) {
        ++script->calls;
        if (script->hold)
            script->release.acquire();
        if (script->fail)
            throw std::runtime_error("connection to cluster lost");
        return local(jobs);
    };
}

}  // namespace

class TestLogView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void safeText_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("shown");
        QTest::newRow("plain lines") << QByteArray("a\nb\n") << QStringLiteral("a\nb\n");
        QTest::newRow("no newline at the end") << QByteArray("a\nb") << QStringLiteral("a\nb");
        QTest::newRow("colour codes vanish")
            << QByteArray("\x1b[31mred\x1b[0m and \x1b[1;32mok\x1b[m") << QStringLiteral("red and ok");
        QTest::newRow("cursor moves vanish") << QByteArray("\x1b[2K\x1b[1Gdone") << QStringLiteral("done");
        QTest::newRow("C1 CSI vanishes") << QByteArray("\xc2\x9b"
                                                       "31mred")
                                         << QStringLiteral("red");
        QTest::newRow("lone C1 CSI") << QByteArray("a\xc2\x9b") << QStringLiteral("a\uFFFD");
        QTest::newRow("other C1") << QByteArray("a\xc2\x85z") << QStringLiteral("a\uFFFDz");
        QTest::newRow("OSC title vanishes") << QByteArray("\x1b]0;my title\x07"
                                                          "done")
                                            << QStringLiteral("done");
        QTest::newRow("OSC link ended by ST")
            << QByteArray("\x1b]8;;http://x\x1b\\link") << QStringLiteral("link");
        QTest::newRow("charset escape vanishes") << QByteArray("\x1b(Bplain") << QStringLiteral("plain");
        QTest::newRow("stray ESC shown") << QByteArray("a\x1b") << QStringLiteral("a\u241B");
        QTest::newRow("unfinished CSI shown") << QByteArray("a\x1b[31") << QStringLiteral("a\u241B[31");
        QTest::newRow("progress keeps its last state")
            << QByteArray("10%\r50%\r100%\nnext\n") << QStringLiteral("100%\nnext\n");
        QTest::newRow("progress ended by CR") << QByteArray("10%\r50%\r") << QStringLiteral("50%");
        QTest::newRow("CRLF") << QByteArray("a\r\nb\r\n") << QStringLiteral("a\nb\n");
        QTest::newRow("bell") << QByteArray("ding\x07") << QStringLiteral("ding\u2407");
        QTest::newRow("backspace") << QByteArray("ab\bc") << QStringLiteral("ab\u2408c");
        QTest::newRow("NUL") << QByteArray("a\0b", 3) << QStringLiteral("a\u2400b");
        QTest::newRow("DEL") << QByteArray("a\x7f") << QStringLiteral("a\u2421");
        QTest::newRow("tab kept") << QByteArray("a\tb") << QStringLiteral("a\tb");
        QTest::newRow("invalid UTF-8") << QByteArray("bad\xffok") << QStringLiteral("bad\uFFFDok");
        QTest::newRow("truncated UTF-8") << QByteArray("caf\xc3") << QStringLiteral("caf\uFFFD");
        QTest::newRow("valid UTF-8 kept")
            << QByteArray("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80") << QStringLiteral("café ✓ \U0001F680");
        QTest::newRow("paragraph separator") << QByteArray("a\xe2\x80\xa9z") << QStringLiteral("a\uFFFDz");
        QTest::newRow("bidi override") << QByteArray("a\xe2\x80\xaez") << QStringLiteral("a\uFFFDz");
        QTest::newRow("empty") << QByteArray() << QString();
    }

    void safeText()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, shown);
        QCOMPARE(safeLogText(bytes), shown);
    }

    void largeFileLoadsOnlyItsTail()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big.out"));
        const BigLog log = bigLog(5'000'000);
        QVERIFY(writeFile(path, log.bytes));
        LogView view(QStringLiteral("trial 7"), localFiles(), stdoutOnly(path));
        QTRY_VERIFY(view.loadedFrom(0) >= 0);
        // One chunk and the byte before it (to see whether the chunk starts a line), no more.
        QVERIFY2(view.bytesRead(0) <= kChunk + 1, qPrintable(QString::number(view.bytesRead(0))));
        const qint64 from = view.loadedFrom(0);
        QVERIFY(from >= log.bytes.size() - kChunk);
        QVERIFY2(log.lineStarts.contains(from), "the first line shown is cut");
        QCOMPARE(view.loadedTo(0), log.bytes.size());
        QCOMPARE(view.text(0), expectedText(log.bytes, from));
        const QStringList lines = view.text(0).split(u'\n');
        QCOMPARE(lines[0], earlierLine(from));
        QCOMPARE(lines[1], QString::fromUtf8(log.bytes.mid(from, log.bytes.indexOf('\n', from) - from)));
        QVERIFY(view.statusText().contains(path));
    }

    void tailStartingAtALineKeepsIt()
    {
        // Lines of 64 bytes: the chunk's first byte starts a line, which must be kept whole.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("even.out"));
        QByteArray bytes;
        for (int i = 0; i < 3000; ++i)
            bytes += QByteArray::number(i).rightJustified(63, '.') + '\n';
        QVERIFY(writeFile(path, bytes));
        LogView view(QStringLiteral("even"), localFiles(), stdoutOnly(path));
        QTRY_VERIFY(view.loadedFrom(0) >= 0);
        QCOMPARE(view.loadedFrom(0), bytes.size() - kChunk);
        QCOMPARE(view.text(0), expectedText(bytes, bytes.size() - kChunk));
    }

    void scrollingToTheTopLoadsTheChunkBefore()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big.out"));
        const BigLog log = bigLog(1'000'000);
        QVERIFY(writeFile(path, log.bytes));
        LogView view(QStringLiteral("trial 7"), localFiles(), stdoutOnly(path));
        view.resize(700, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(view.loadedFrom(0) > 0);
        QPlainTextEdit *edit = view.editor(0);
        QScrollBar *bar = edit->verticalScrollBar();
        QTRY_VERIFY(bar->maximum() > 0 && atBottom(edit));  // a tail is shown from its end

        const qint64 from = view.loadedFrom(0);
        const qint64 read = view.bytesRead(0);
        const QString firstLine = view.text(0).section(u'\n', 1, 1);
        bar->setValue(0);  // the user scrolls to the top
        QCOMPARE(topBlock(edit).next().text(), firstLine);
        QTRY_VERIFY(view.loadedFrom(0) < from);
        const qint64 earlier = view.loadedFrom(0);
        QVERIFY(from - earlier <= kChunk);
        QVERIFY2(log.lineStarts.contains(earlier), "the first line shown is cut");
        QVERIFY(view.bytesRead(0) - read <= kChunk + 1);
        // Earlier lines on top, the old first line right after them, nothing lost or doubled.
        QCOMPARE(view.text(0), expectedText(log.bytes, earlier));
        // What was seen stays where it was: the old first line is still second from the top.
        QVERIFY(bar->value() > 0);
        QCOMPARE(topBlock(edit).next().text(), firstLine);

        // The button (or loadEarlier) reads the chunk before that one.
        view.loadEarlier();
        QTRY_VERIFY(view.loadedFrom(0) < earlier);
        QCOMPARE(view.text(0), expectedText(log.bytes, view.loadedFrom(0)));
    }

    void followingAppendsOnlyTheNewBytes()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.out"));
        QByteArray bytes;
        for (int i = 0; i < 200; ++i)
            bytes += "first " + QByteArray::number(i) + '\n';
        QVERIFY(writeFile(path, bytes));
        LogView view(QStringLiteral("trial 7"), localFiles(), stdoutOnly(path));
        QVERIFY(view.isFollowing());
        view.setPollInterval(20);
        view.resize(700, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_COMPARE(view.loadedTo(0), bytes.size());
        QPlainTextEdit *edit = view.editor(0);
        QTRY_VERIFY(edit->verticalScrollBar()->maximum() > 0 && atBottom(edit));
        const qint64 read = view.bytesRead(0);

        // A line, then a progress bar's line not finished yet: shown as it is so far.
        const QByteArray more = "tick 1\nprogress 10%\rprogress 50%";
        QVERIFY(appendFile(path, more));
        QTRY_VERIFY(view.text(0).endsWith(QStringLiteral("first 199\ntick 1\nprogress 50%")));
        QCOMPARE(view.bytesRead(0) - read, more.size());
        QVERIFY(atBottom(edit));
        // The line completes: replaced, not repeated.
        const QByteArray rest = "\rprogress 100%\n";
        QVERIFY(appendFile(path, rest));
        QTRY_VERIFY(view.text(0).endsWith(QStringLiteral("first 199\ntick 1\nprogress 100%\n")));
        QVERIFY(!view.text(0).contains(QStringLiteral("50%")));
        QCOMPARE(view.bytesRead(0) - read, more.size() + rest.size());
        QCOMPARE(view.loadedTo(0), bytes.size() + more.size() + rest.size());
        QVERIFY(atBottom(edit));

        // Scrolled up: lines still come, the view stays where the user put it.
        QScrollBar *bar = edit->verticalScrollBar();
        bar->setValue(bar->maximum() / 2);
        const int where = bar->value();
        QVERIFY(appendFile(path, "tick 2\n"));
        QTRY_VERIFY(view.text(0).endsWith(QStringLiteral("\ntick 2\n")));
        QCOMPARE(bar->value(), where);

        // Follow off: nothing more is read (waited a few poll intervals), until it is on again.
        view.setFollowing(false);
        QTRY_VERIFY(!view.isReading());
        const qint64 paused = view.bytesRead(0);
        QVERIFY(appendFile(path, "tick 3\n"));
        QTest::qWait(200);  // proves an absence: ten poll intervals
        QCOMPARE(view.bytesRead(0), paused);
        view.setFollowing(true);
        QTRY_VERIFY(view.text(0).endsWith(QStringLiteral("\ntick 3\n")));
        QVERIFY(atBottom(edit));
    }

    void fileGrownByALotIsReadFromItsTail()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.out"));
        QVERIFY(writeFile(path, "start\n"));
        LogView view(QStringLiteral("trial 7"), localFiles(), stdoutOnly(path));
        view.setPollInterval(20);
        QTRY_COMPARE(view.text(0), QStringLiteral("start\n"));
        const qint64 read = view.bytesRead(0);
        const BigLog burst = bigLog(LogView::kMaxAppendBytes + 1);
        QVERIFY(appendFile(path, burst.bytes));
        const QByteArray all = "start\n" + burst.bytes;
        QTRY_COMPARE(view.loadedTo(0), all.size());
        QVERIFY(view.bytesRead(0) - read <= kChunk + 1);
        QCOMPARE(view.text(0), expectedText(all, view.loadedFrom(0)));
    }

    void truncatedFileIsReadAgain()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.out"));
        QVERIFY(writeFile(path, "old line 1\nold line 2\n"));
        LogView view(QStringLiteral("trial 7"), localFiles(), stdoutOnly(path));
        view.setPollInterval(20);
        QTRY_COMPARE(view.text(0), QStringLiteral("old line 1\nold line 2\n"));
        QVERIFY(writeFile(path, "new\n"));  // rewritten, shorter: the next attempt's log
        QTRY_COMPARE(view.text(0), QStringLiteral("new\n"));
        QCOMPARE(view.loadedFrom(0), 0);
        QCOMPARE(view.loadedTo(0), 4);
    }

    void missingFileIsWaitedFor()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("run.out"));
        const QString err = dir.filePath(QStringLiteral("run.err"));
        QVERIFY(writeFile(out, "out\n"));
        LogView view(QStringLiteral("trial 7"), localFiles(),
                     {{QStringLiteral("stdout"), out}, {QStringLiteral("stderr"), err}});
        view.setPollInterval(20);
        QCOMPARE(view.fileCount(), 2);
        QTRY_COMPARE(view.text(1), QStringLiteral("(not created yet)"));
        QCOMPARE(view.text(0), QStringLiteral("out\n"));
        view.setCurrentFile(1);
        QVERIFY(view.statusText().contains(QStringLiteral("not created yet")));
        QVERIFY(writeFile(err, "Traceback (most recent call last):\n"));
        QTRY_COMPARE(view.text(1), QStringLiteral("Traceback (most recent call last):\n"));
        QVERIFY(!view.statusText().contains(QStringLiteral("not created yet")));
    }

    void failedReadIsShownAndTriedAgain()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.out"));
        QVERIFY(writeFile(path, "ok\n"));
        auto source = std::make_shared<Script>();
        source->fail = true;
        LogView view(QStringLiteral("trial 7"), scripted(source), stdoutOnly(path));
        view.setPollInterval(20);
        QTRY_VERIFY(view.error(0).contains(QStringLiteral("connection to cluster lost")));
        QVERIFY(view.statusText().contains(QStringLiteral("connection to cluster lost")));
        QVERIFY(view.loadedFrom(0) < 0);
        source->fail = false;
        QTRY_COMPARE(view.text(0), QStringLiteral("ok\n"));
        QVERIFY(view.error(0).isEmpty());
        QVERIFY(!view.statusText().contains(QStringLiteral("lost")));
    }

    void silentSourceBlocksNeitherWindowNorReadsTwice()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("run.out"));
        const QString err = dir.filePath(QStringLiteral("run.err"));
        QVERIFY(writeFile(out, "out\n"));
        QVERIFY(writeFile(err, "err\n"));
        auto source = std::make_shared<Script>();
        source->hold = true;
        LogView view(QStringLiteral("trial 7"), scripted(source),
                     {{QStringLiteral("stdout"), out}, {QStringLiteral("stderr"), err}});
        view.setPollInterval(10);
        QSignalSpy updated(&view, &LogView::updated);
        QTRY_COMPARE(source->calls.load(), 1);  // the one batched read of both files, held
        QVERIFY(view.isReading());
        // The UI thread runs on (this wait is its event loop: twenty poll intervals), and no
        // poll starts a second read while the first is out.
        QTest::qWait(200);
        QCOMPARE(source->calls.load(), 1);
        QCOMPARE(updated.count(), 0);
        source->hold = false;
        source->release.release();
        QTRY_COMPARE(view.text(0), QStringLiteral("out\n"));
        QTRY_COMPARE(view.text(1), QStringLiteral("err\n"));
    }

    void searchCountsAndMoves()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.out"));
        QByteArray bytes;
        const QStringList variants{QStringLiteral("Error"), QStringLiteral("ERROR"), QStringLiteral("error")};
        // 17 lines with "error" in one case or another, among lines without.
        for (int i = 0; i < 60; ++i) {
            if (i % 3 == 0 && i < 51)
                bytes += "step " + QByteArray::number(i) + ' ' + variants[i % 9 / 3].toUtf8() + ": nan\n";
            else
                bytes += "step " + QByteArray::number(i) + " loss 0.5\n";
        }
        QVERIFY(writeFile(path, bytes));
        LogView view(QStringLiteral("trial 7"), localFiles(), stdoutOnly(path));
        view.resize(700, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_COMPARE(view.loadedTo(0), bytes.size());
        QPlainTextEdit *edit = view.editor(0);

        QList<int> positions;
        const QString text = view.text(0);
        for (qsizetype p = text.indexOf(QStringLiteral("error"), 0, Qt::CaseInsensitive); p >= 0;
             p = text.indexOf(QStringLiteral("error"), p + 1, Qt::CaseInsensitive))
            positions.append(int(p));
        QCOMPARE(positions.size(), 17);

        view.searchField()->setText(QStringLiteral("eRRor"));
        QCOMPARE(view.matchCount(), 17);
        QCOMPARE(edit->extraSelections().size(), 17);
        const int first = view.currentMatch();
        QVERIFY(first >= 0);
        QCOMPARE(view.matchText(), QStringLiteral("%1 of 17").arg(first + 1));
        QCOMPARE(edit->textCursor().selectionStart(), positions[first]);
        QCOMPARE(edit->textCursor().selectedText().toLower(), QStringLiteral("error"));

        QTest::keyClick(view.searchField(), Qt::Key_Return);
        QCOMPARE(view.currentMatch(), (first + 1) % 17);
        QCOMPARE(edit->textCursor().selectionStart(), positions[(first + 1) % 17]);
        QTest::keyClick(view.searchField(), Qt::Key_Return, Qt::ShiftModifier);
        QTest::keyClick(view.searchField(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(view.currentMatch(), (first + 16) % 17);
        QCOMPARE(edit->textCursor().selectionStart(), positions[(first + 16) % 17]);
        QCOMPARE(view.matchText(), QStringLiteral("%1 of 17").arg((first + 16) % 17 + 1));

        view.searchField()->setText(QStringLiteral("no such thing"));
        QCOMPARE(view.matchCount(), 0);
        QCOMPARE(view.matchText(), QStringLiteral("no match"));
        QVERIFY(edit->extraSelections().isEmpty());

        // Ctrl+F in the view goes to the search field.
        view.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&view));
        edit->setFocus();
        QTRY_VERIFY(edit->hasFocus());
        QTest::keyClick(edit, Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(view.searchField()->hasFocus());
    }
};

ORRERY_TEST_MAIN(TestLogView, QApplication)
#include "tst_logview.moc"
