// SPDX-License-Identifier: GPL-3.0-or-later
// orrery(1) and the bash completion, both generated from the command table (app/cli/manpage.cpp):
// every command, verb and option of the table is in them, the page renders without a groff
// warning, the real binary prints the same text the build installs, and the completion script,
// sourced in a real bash, completes `orrery sw<TAB>` and `orrery sweep <TAB>` from the table.
#include "command_table.h"
#include "manpage.h"
#include "testsupport.h"

#include "orrery/core/version.h"

#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace orrery::cli;

namespace {

using orrery::test::Ran;

Ran run(const QString &program, const QStringList &args, const QByteArray &input = {})
{
    return orrery::test::runProcess(program, args, input);
}

const CommandInfo &command(const QString &name)
{
    for (const CommandInfo &c : commandTable())
        if (c.name == name)
            return c;
    qFatal("no command %s in the table", qPrintable(name));
}

QStringList verbNames(const QString &commandName)
{
    QStringList names;
    for (const VerbInfo &v : command(commandName).verbs)
        names.append(v.name);
    return names;
}

QStringList sorted(QStringList list)
{
    list.sort();
    return list;
}

}  // namespace

class TestCliDocs : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_completion;  // the generated script, written once

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI must name the built orrery");
        m_completion = m_dir.filePath(QStringLiteral("orrery.bash"));
        QFile f(m_completion);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bashCompletion(commandTable()).toUtf8());
    }

    void roffEscape_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("roff");
        QTest::newRow("plain") << QStringLiteral("every sweep") << QStringLiteral("every sweep");
        QTest::newRow("hyphens are minus signs") << QStringLiteral("--json") << QStringLiteral("\\-\\-json");
        QTest::newRow("backslash") << QStringLiteral("a\\b") << QStringLiteral("a\\eb");
        QTest::newRow("apostrophe") << QStringLiteral("trial's") << QStringLiteral("trial\\(aqs");
        QTest::newRow("backquote") << QStringLiteral("`x`") << QStringLiteral("\\(gax\\(ga");
        QTest::newRow("leading dot is not a request")
            << QStringLiteral(".hidden") << QStringLiteral("\\&.hidden");
        QTest::newRow("dot after a newline") << QStringLiteral("a\n.b") << QStringLiteral("a\n\\&.b");
        QTest::newRow("leading quote is not a request") << QStringLiteral("'q") << QStringLiteral("\\(aqq");
    }
    void roffEscape()
    {
        QFETCH(QString, text);
        QFETCH(QString, roff);
        QCOMPARE(orrery::cli::roffEscape(text), roff);
    }

    void optionsIn_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("synopsis") << QStringLiteral("FILE [--cluster NAME] [--json]")
                                  << QStringList{QStringLiteral("--cluster"), QStringLiteral("--json")};
        QTest::newRow("short option")
            << QStringLiteral("SWEEP TRIAL [-f]") << QStringList{QStringLiteral("-f")};
        QTest::newRow("not the hyphen of a word")
            << QStringLiteral("Ctrl-C detaches, re-run") << QStringList{};
        QTest::newRow("not a negative number") << QStringLiteral("step -1") << QStringList{};
        QTest::newRow("not another program's, in backquotes")
            << QStringLiteral("against `orrery-train --print-schema`, with --cluster")
            << QStringList{QStringLiteral("--cluster")};
        QTest::newRow("once each") << QStringLiteral("--json, then --json=x")
                                   << QStringList{QStringLiteral("--json")};
    }
    void optionsIn()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, options);
        QCOMPARE(orrery::cli::optionsIn(text), options);
    }

    void verbOptionsFollowTheVerbsLines()
    {
        CommandInfo c;
        c.name = QStringLiteral("thing");
        c.verbs = {VerbInfo{QStringLiteral("add"), QStringLiteral("NAME [--one]"), {}},
                   VerbInfo{QStringLiteral("list"), QStringLiteral("[--json]"), {}}};
        const QString help = QStringLiteral("usage: orrery thing add NAME [--one]\n"
                                            "                        [--two] [--three]\n"
                                            "       orrery thing list [--json] [--all]\n"
                                            "Prose about them all mentions --nothing.\n"
                                            "  add NAME --four   the second form of a usage\n");
        const QMap<QString, QStringList> options = verbOptions(c, help);
        QCOMPARE(options.value(QStringLiteral("add")),
                 (QStringList{QStringLiteral("--one"), QStringLiteral("--two"), QStringLiteral("--three"),
                              QStringLiteral("--four")}));
        QCOMPARE(options.value(QStringLiteral("list")),
                 (QStringList{QStringLiteral("--json"), QStringLiteral("--all")}));
    }

    void verbOptionsOfTheRealCommands()
    {
        // The options only the commands' own help names: a completion from the table alone would
        // miss them.
        const auto sweep =
            verbOptions(command(QStringLiteral("sweep")), fullCommandHelp(command(QStringLiteral("sweep"))));
        for (const char *o : {"--cluster", "--dry-run", "--watch", "--json"})
            QVERIFY2(sweep.value(QStringLiteral("submit")).contains(QString::fromUtf8(o)), o);
        QCOMPARE(sweep.value(QStringLiteral("logs")), QStringList{QStringLiteral("-f")});
        QCOMPARE(sweep.value(QStringLiteral("stop")), QStringList{QStringLiteral("--reason")});
        QVERIFY(sweep.value(QStringLiteral("retry")).isEmpty());
        const auto cluster = verbOptions(command(QStringLiteral("cluster")),
                                         fullCommandHelp(command(QStringLiteral("cluster"))));
        for (const char *o : {"--host", "--proxy-jump", "--known-hosts", "--setup", "--force"})
            QVERIFY2(cluster.value(QStringLiteral("add")).contains(QString::fromUtf8(o)), o);
        QVERIFY(!cluster.value(QStringLiteral("list")).contains(QStringLiteral("--force")));
        const auto monitor = verbOptions(command(QStringLiteral("monitor")),
                                         fullCommandHelp(command(QStringLiteral("monitor"))));
        for (const char *o : {"--cluster", "--refresh", "--no-follow"})
            QVERIFY2(monitor.value(QString()).contains(QString::fromUtf8(o)), o);
    }

    void manPageHasEveryCommandVerbAndOption()
    {
        const QString page = manPage(commandTable(), orrery::core::version());
        QVERIFY(page.startsWith(QStringLiteral(".\\\" Generated")));
        QVERIFY(page.contains(QStringLiteral(".TH ORRERY 1 \"\" \"orrery ") + orrery::core::version()));
        for (const char *section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS",
                                    "ENVIRONMENT", "FILES", "SEE ALSO"})
            QVERIFY2(page.contains(QStringLiteral("\n.SH ") + QString::fromUtf8(section) + QLatin1Char('\n')),
                     section);
        for (const CommandInfo &c : commandTable()) {
            QVERIFY2(page.contains(QStringLiteral("\n.SS ") + c.name + QLatin1Char('\n')),
                     qPrintable(c.name));
            if (c.verbs.isEmpty())
                QVERIFY2(page.contains(QStringLiteral("\\fBorrery ") + c.name + QStringLiteral("\\fR")),
                         qPrintable(c.name));
            for (const VerbInfo &v : c.verbs) {
                const QString row = QStringLiteral("\\fBorrery ") + c.name + QLatin1Char(' ') + v.name;
                QVERIFY2(page.contains(row + QStringLiteral("\\fR")), qPrintable(row));
            }
            for (const QStringList &options : verbOptions(c, fullCommandHelp(c)))
                for (const QString &o : options)
                    QVERIFY2(page.contains(orrery::cli::roffEscape(o)),
                             qPrintable(c.name + QLatin1Char(' ') + o));
        }
        // No line of text may start with a dot or a quote unless it is one of the page's requests.
        for (const QString &line : page.split(QLatin1Char('\n'))) {
            if (line.startsWith(QLatin1Char('\'')))
                QFAIL(qPrintable(line));
            if (line.startsWith(QLatin1Char('.'))) {
                static const QRegularExpression request(
                    QStringLiteral("^\\.(\\\\\"|TH|SH|SS|TP|PP|B|BR|I|br|RS|RE|nf|fi|ad)( |$)"));
                QVERIFY2(request.match(line).hasMatch(), qPrintable(line));
            }
        }
    }

    void manPageRendersWithoutWarnings()
    {
        const QString groff = QStandardPaths::findExecutable(QStringLiteral("groff"));
        if (groff.isEmpty())
            QSKIP("groff is not installed (Debian groff-base)");
        const QByteArray page = manPage(commandTable(), orrery::core::version()).toUtf8();
        // -ww: every warning; -z: no output, only the diagnostics.
        const Ran check = run(
            groff,
            {QStringLiteral("-man"), QStringLiteral("-Tutf8"), QStringLiteral("-ww"), QStringLiteral("-z")},
            page);
        QCOMPARE(check.code, 0);
        QVERIFY2(check.err.isEmpty(), qPrintable(check.err));
        // Plain text: no bold or underline, neither as overstrikes nor as terminal escapes.
        const Ran text = run(groff,
                             {QStringLiteral("-man"), QStringLiteral("-Tascii"), QStringLiteral("-P-c"),
                              QStringLiteral("-P-b"), QStringLiteral("-P-u")},
                             page);
        QCOMPARE(text.code, 0);
        const QString plain = text.out;
        QVERIFY2(plain.contains(QStringLiteral("orrery sweep submit FILE [--cluster NAME]")),
                 qPrintable(plain));
        QVERIFY(plain.contains(QStringLiteral("--dry-run")));
    }

    void theBinaryPrintsWhatTheBuildInstalls()
    {
        const Ran man =
            run(qEnvironmentVariable("ORRERY_CLI"), {QStringLiteral("help"), QStringLiteral("--man")});
        QCOMPARE(man.code, 0);
        QCOMPARE(man.out, manPage(commandTable(), orrery::core::version()));
        const Ran completion = run(qEnvironmentVariable("ORRERY_CLI"),
                                   {QStringLiteral("help"), QStringLiteral("--bash-completion")});
        QCOMPARE(completion.code, 0);
        QCOMPARE(completion.out, bashCompletion(commandTable()));
        // Still hidden: `orrery --help` lists commands, not the generators.
        const Ran help = run(qEnvironmentVariable("ORRERY_CLI"), {QStringLiteral("--help")});
        QVERIFY(!help.out.contains(QStringLiteral("--man")));
    }

    void completionInBash_data()
    {
        QTest::addColumn<QStringList>("words");  // as bash splits the line; the last is the one completed
        QTest::addColumn<QStringList>("expected");
        const QString e;
        QStringList commands;
        for (const CommandInfo &c : commandTable())
            commands.append(c.name);
        QTest::newRow("orrery sw<TAB>") << QStringList{QStringLiteral("orrery"), QStringLiteral("sw")}
                                        << QStringList{QStringLiteral("sweep")};
        QTest::newRow("orrery sweep <TAB>")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("sweep"), e}
            << QStringList{QStringLiteral("--help")} + verbNames(QStringLiteral("sweep"));
        QTest::newRow("orrery runs <TAB>")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("runs"), e}
            << QStringList{QStringLiteral("--help")} + verbNames(QStringLiteral("runs"));
        QTest::newRow("orrery <TAB>") << QStringList{QStringLiteral("orrery"), e}
                                      << QStringList{QStringLiteral("--db"), QStringLiteral("--help"),
                                                     QStringLiteral("--version"), QStringLiteral("help")} +
                commands;
        QTest::newRow("after --db PATH")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("--db"), QStringLiteral("x.sqlite"),
                           QStringLiteral("sweep"), QStringLiteral("pl")}
            << QStringList{QStringLiteral("plan")};
        QTest::newRow("after --db=PATH, split at =")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("--db"), QStringLiteral("="),
                           QStringLiteral("x.sqlite"), QStringLiteral("ru")}
            << QStringList{QStringLiteral("runs")};
        QTest::newRow("--db takes a file")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("--db"), e} << QStringList{};
        QTest::newRow("an option of the verb from its help")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("sweep"), QStringLiteral("submit"),
                           QStringLiteral("--d")}
            << QStringList{QStringLiteral("--dry-run")};
        QTest::newRow("an argument is a file name")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("sweep"), QStringLiteral("submit"),
                           QStringLiteral("res")}
            << QStringList{};
        QTest::newRow("cluster add --pro<TAB>")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("cluster"), QStringLiteral("add"),
                           QStringLiteral("hpc"), QStringLiteral("--pro")}
            << QStringList{QStringLiteral("--proxy-jump")};
        // A command without verbs: its options (doctor's synopsis names --json, and more as it grows).
        const QStringList doctorOptions = orrery::cli::optionsIn(command(QStringLiteral("doctor")).synopsis);
        QVERIFY(doctorOptions.contains(QStringLiteral("--json")));
        QTest::newRow("a command without verbs")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("doctor"), e} << doctorOptions;
        QTest::newRow("help sw<TAB>")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("help"), QStringLiteral("sw")}
            << QStringList{QStringLiteral("sweep")};
        QTest::newRow("an unknown command")
            << QStringList{QStringLiteral("orrery"), QStringLiteral("frob"), e} << QStringList{};
    }
    void completionInBash()
    {
        QFETCH(QStringList, words);
        QFETCH(QStringList, expected);
        const QString bash = QStandardPaths::findExecutable(QStringLiteral("bash"));
        QVERIFY(!bash.isEmpty());
        // What bash does on TAB: COMP_WORDS/COMP_CWORD set, the function that `complete` registered
        // for orrery called, COMPREPLY read back.
        const QString harness =
            QStringLiteral("source \"$1\"; shift\n"
                           "spec=$(complete -p orrery) || exit 3\n"
                           "[[ $spec == *'-F _orrery'* ]] || exit 4\n"
                           "COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()\n"
                           "_orrery\n"
                           "printf '%s\\n' \"${COMPREPLY[@]}\"\n");
        const Ran r =
            run(bash,
                QStringList{QStringLiteral("--norc"), QStringLiteral("--noprofile"), QStringLiteral("-c"),
                            harness, QStringLiteral("harness"), m_completion} +
                    words);
        QVERIFY2(r.code == 0 && r.err.isEmpty(),
                 qPrintable(QString::number(r.code) + QLatin1Char(' ') + r.err));
        QCOMPARE(sorted(r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)), sorted(expected));
    }
};

QTEST_GUILESS_MAIN(TestCliDocs)
#include "tst_cli_docs.moc"
