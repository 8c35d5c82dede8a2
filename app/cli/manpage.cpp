// SPDX-License-Identifier: GPL-3.0-or-later
#include "manpage.h"

#include "output.h"

#include <QRegularExpression>
#include <QSet>

#include <optional>

namespace orrery::cli {

namespace {

// An option as help text writes one: `--json`, `-f`, `--proxy-jump`; not the hyphen of `Ctrl-C`
// or `re-run`, and not a negative number.
const QRegularExpression &optionPattern()
{
    static const QRegularExpression re(QStringLiteral("(?<![\\w-])--?[A-Za-z][A-Za-z0-9-]*"));
    return re;
}

// A synopsis in roff: options bold, metavariables (FILE, NAME, SWEEP) italic, the rest as is.
QString synopsisRoff(const QString &synopsis)
{
    static const QRegularExpression re(QStringLiteral("(?<![\\w-])(--?[A-Za-z][A-Za-z0-9-]*)|"
                                                      "\\b([A-Z](?:[A-Z0-9_]*[A-Z0-9])?)\\b"));
    QString s;
    qsizetype at = 0;
    for (auto it = re.globalMatch(synopsis); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        s += roffEscape(synopsis.mid(at, m.capturedStart() - at));
        const bool option = m.capturedLength(1) > 0;
        s += (option ? QStringLiteral("\\fB") : QStringLiteral("\\fI")) + roffEscape(m.captured()) +
            QStringLiteral("\\fR");
        at = m.capturedEnd();
    }
    return s + roffEscape(synopsis.mid(at));
}

// `.TP` with a bold command line and its synopsis as the tag, the summary as the paragraph.
QString tagged(const QString &command, const QString &synopsis, const QString &summary)
{
    QString tag = QStringLiteral("\\fB") + roffEscape(command) + QStringLiteral("\\fR");
    if (!synopsis.isEmpty())
        tag += QLatin1Char(' ') + synopsisRoff(synopsis);
    return QStringLiteral(".TP\n") + tag + QLatin1Char('\n') + roffEscape(summary) + QLatin1Char('\n');
}

// Help text kept as the terminal shows it (its columns line up), indented.
QString preformatted(const QString &text)
{
    QString body = text;
    while (body.endsWith(QLatin1Char('\n')))
        body.chop(1);
    return QStringLiteral(".RS 4\n.nf\n") + roffEscape(body) + QStringLiteral("\n.fi\n.RE\n");
}

QString paragraphs(const QString &text)
{
    QString s;
    for (const QString &p : text.split(QStringLiteral("\n\n"), Qt::SkipEmptyParts))
        s += QStringLiteral(".PP\n") + roffEscape(p.trimmed()) + QLatin1Char('\n');
    return s;
}

// Words bash may take as they are: what the table names commands and verbs.
bool isPlainWord(const QString &w)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]*$"));
    return re.match(w).hasMatch();
}

QString shellWords(const QStringList &words)
{
    QStringList plain;
    for (const QString &w : words)
        if (isPlainWord(w) || optionPattern().match(w).capturedLength() == w.size())
            plain.append(w);
    return QLatin1Char('\'') + plain.join(QLatin1Char(' ')) + QLatin1Char('\'');
}

}  // namespace

QString fullCommandHelp(const CommandInfo &c)
{
    if (!c.ownHelp)
        return commandHelp(c);
    OutputCapture capture;
    c.run(Context{}, {QStringLiteral("--help")});
    return capture.text();
}

QString roffEscape(const QString &text)
{
    QString s;
    s.reserve(text.size() + text.size() / 8);
    for (const QChar ch : text) {
        switch (ch.unicode()) {
        case '\\':
            s += QStringLiteral("\\e");
            break;
        case '-':
            s += QStringLiteral("\\-");
            break;
        case '\'':
            s += QStringLiteral("\\(aq");
            break;
        case '`':
            s += QStringLiteral("\\(ga");
            break;
        default:
            s += ch;
        }
    }
    // A line that starts with a dot is a request; \& in front makes it text. (A leading quote,
    // the other control character, is already \(aq.)
    if (s.startsWith(QLatin1Char('.')))
        s.prepend(QStringLiteral("\\&"));
    s.replace(QStringLiteral("\n."), QStringLiteral("\n\\&."));
    return s;
}

namespace {

// The man page's sections, in their order: the head (title, NAME, SYNOPSIS, DESCRIPTION) with the
// version, OPTIONS, COMMANDS (one subsection per command of the table), EXIT STATUS and
// ENVIRONMENT, FILES and SEE ALSO.
QString manHead(const QString &version)
{
    return QStringLiteral(
               ".\\\" Generated from orrery's command table by `orrery help --man`; do not edit.\n"
               ".TH ORRERY 1 \"\" \"orrery %1\" \"User Commands\"\n"
               // Ragged right: a justified line spreads a synopsis's words apart.
               ".ad l\n"
               ".SH NAME\n"
               "orrery \\- the command line of Orrery, an experiment workbench for video diffusion "
               "training on Slurm clusters\n"
               ".SH SYNOPSIS\n"
               ".B orrery\n"
               "[\\fB\\-\\-db\\fR \\fIPATH\\fR] \\fIcommand\\fR [\\fIverb\\fR] [\\fIoptions\\fR]\n"
               ".br\n"
               ".B orrery help\n"
               "[\\fIcommand\\fR]\n"
               ".br\n"
               ".B orrery\n"
               "\\fB\\-\\-version\\fR | \\fB\\-\\-help\\fR\n"
               ".SH DESCRIPTION\n"
               ".B orrery\n"
               "submits hyperparameter sweeps of the trainer \\fBorrery\\-train\\fR on this machine or "
               "as Slurm job arrays on a cluster reached over SSH, follows them live, tracks every run "
               "in a local SQLite database, and compares and exports the runs. "
               "It is the headless face of Orrery: \\fBorrery\\-gui\\fR(1) shows the same database.\n")
        .arg(roffEscape(version));
}

QString manOptions()
{
    return QStringLiteral(
        ".SH OPTIONS\n"
        ".TP\n"
        "\\fB\\-\\-db\\fR \\fIPATH\\fR\n"
        "The tracking database (default: \\fB$ORRERY_DB\\fR, else "
        "\\fI~/.local/share/orrery/orrery.sqlite\\fR). It may stand anywhere on the line.\n"
        ".TP\n"
        "\\fB\\-V\\fR, \\fB\\-\\-version\\fR\n"
        "Print the version and exit.\n"
        ".TP\n"
        "\\fB\\-h\\fR, \\fB\\-\\-help\\fR\n"
        "Print every command and verb and exit; \\fBorrery help\\fR \\fIcommand\\fR (or "
        "\\fBorrery\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR) prints one command's options.\n");
}

// A command's subsection: its line (or its summary and a line per verb), then its own help or
// its notes.
QString manCommand(const CommandInfo &c, const HelpSource &help)
{
    QString m = QStringLiteral(".SS ") + roffEscape(c.name) + QLatin1Char('\n');
    if (c.verbs.isEmpty()) {
        m += tagged(QStringLiteral("orrery ") + c.name, c.synopsis, c.summary);
    } else {
        QString sentence = c.summary;
        if (!sentence.isEmpty())
            sentence[0] = sentence[0].toUpper();
        m += roffEscape(sentence) + QStringLiteral(".\n");
        for (const VerbInfo &v : c.verbs)
            m +=
                tagged(QStringLiteral("orrery ") + c.name + QLatin1Char(' ') + v.name, v.synopsis, v.summary);
    }
    if (c.ownHelp) {
        m += QStringLiteral(".PP\n\\fBorrery help ") + roffEscape(c.name) + QStringLiteral("\\fR:\n");
        m += preformatted(help(c));
    } else if (!c.helpNotes.isEmpty()) {
        m += paragraphs(c.helpNotes);
    }
    return m;
}

QString manExitStatusAndEnvironment()
{
    return QStringLiteral(
        ".SH EXIT STATUS\n"
        "0 when the operation succeeded, 1 when it failed, 2 for a usage error (said on standard "
        "error, with the usage).\n"
        ".SH ENVIRONMENT\n"
        ".TP\n"
        ".B ORRERY_DB\n"
        "The tracking database when \\fB\\-\\-db\\fR is not given.\n"
        ".TP\n"
        ".B ORRERY_TRAINER\n"
        "The \\fBorrery\\-train\\fR executable that local sweeps run and whose settings "
        "\\fBsweep plan\\fR checks; else the one beside \\fBorrery\\fR, else the first on "
        "\\fBPATH\\fR. The Debian package ships no trainer binary (it needs LibTorch): build one "
        "from \\fI/usr/share/orrery/trainer\\-source\\fR and point this variable at it.\n"
        ".TP\n"
        ".B ORRERY_CLI\n"
        "The \\fBorrery\\fR that a local sweep's detached supervisor runs (default: this one).\n"
        ".TP\n"
        ".B QT_LOGGING_RULES\n"
        "\\fBorrery.remote.debug=true\\fR prints every remote command.\n");
}

QString manFilesAndSeeAlso()
{
    return QStringLiteral(
        ".SH FILES\n"
        ".TP\n"
        ".I ~/.local/share/orrery/orrery.sqlite\n"
        "The tracking database (under \\fB$XDG_DATA_HOME\\fR where that is set); local run "
        "directories are in \\fIruns/\\fR beside it.\n"
        ".TP\n"
        ".I ~/.config/orrery/clusters/\n"
        "Cluster profiles (\\fINAME\\fR.json, never with a password) and their sbatch templates "
        "(\\fINAME\\fR.sbatch).\n"
        ".TP\n"
        ".I /usr/share/orrery/\n"
        "Example sweeps (\\fIsweeps/\\fR), trainer configs (\\fIconfigs/\\fR), the default sbatch "
        "template (\\fIsbatch/\\fR) and the trainer's source (\\fItrainer\\-source/\\fR), which "
        "builds \\fBorrery\\-train\\fR with CMake against a PyTorch installation.\n"
        ".SH SEE ALSO\n"
        ".BR orrery\\-gui (1),\n"
        ".BR orrery\\-train (1)\n");
}

}  // namespace

QString manPage(const QList<CommandInfo> &table, const QString &version, const HelpSource &help)
{
    QString m = manHead(version) + manOptions() + QStringLiteral(".SH COMMANDS\n");
    for (const CommandInfo &c : table)
        m += manCommand(c, help);
    return m + manExitStatusAndEnvironment() + manFilesAndSeeAlso();
}

QStringList optionsIn(const QString &text)
{
    static const QRegularExpression quoted(QStringLiteral("`[^`]*`"));
    QString plain = text;
    plain.remove(quoted);
    QStringList options;
    for (auto it = optionPattern().globalMatch(plain); it.hasNext();) {
        const QString o = it.next().captured();
        if (!options.contains(o))
            options.append(o);
    }
    return options;
}

QMap<QString, QStringList> verbOptions(const CommandInfo &c, const QString &fullHelp)
{
    QMap<QString, QStringList> options;
    auto add = [&](const QString &verb, const QStringList &found) {
        QStringList &list = options[verb];
        for (const QString &o : found)
            if (!list.contains(o))
                list.append(o);
    };
    QSet<QString> verbs;
    if (c.verbs.isEmpty())
        add(QString(), optionsIn(c.synopsis));
    for (const VerbInfo &v : c.verbs) {
        verbs.insert(v.name);
        add(v.name, optionsIn(v.synopsis));
    }
    // Which verb a line of help is about: the one it starts with (after "usage: orrery COMMAND"),
    // kept by the indented lines that follow; a line at the left margin that names no verb is
    // prose about them all and ends it.
    std::optional<QString> current;
    if (c.verbs.isEmpty())
        current = QString();
    for (const QString &line : fullHelp.split(QLatin1Char('\n'))) {
        if (!c.verbs.isEmpty()) {
            QStringList words = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
            for (const QString &prefix : {QStringLiteral("usage:"), QStringLiteral("orrery"), c.name})
                if (!words.isEmpty() && words.front() == prefix)
                    words.removeFirst();
            if (!words.isEmpty() && verbs.contains(words.front()))
                current = words.front();
            else if (line.isEmpty() || !line.front().isSpace())
                current.reset();
        }
        if (current)
            add(*current, optionsIn(line));
    }
    return options;
}

namespace {

// The completion function's first half: it finds the command and the verb on the line.
QString completionPreamble()
{
    return QStringLiteral(
        "# bash completion for orrery                                   -*- shell-script -*-\n"
        "# Generated from orrery's command table by `orrery help --bash-completion`; do not edit.\n"
        "# Completes commands, verbs and the options their help names; any other argument\n"
        "# completes as a file name (readline's default).\n"
        "\n"
        "_orrery()\n"
        "{\n"
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
        "    local command='' verb='' words='' i\n"
        "    # The command and the verb: the first two words that are not options (nor the\n"
        "    # value of --db, which COMP_WORDBREAKS may split at its '=').\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "        case ${COMP_WORDS[i]} in\n"
        "        --db)\n"
        "            ((i++))\n"
        "            [[ ${COMP_WORDS[i]} == = ]] && ((i++))\n"
        "            ;;\n"
        "        -*) ;;\n"
        "        *)\n"
        "            if [[ -z $command ]]; then\n"
        "                command=${COMP_WORDS[i]}\n"
        "            elif [[ -z $verb ]]; then\n"
        "                verb=${COMP_WORDS[i]}\n"
        "            fi\n"
        "            ;;\n"
        "        esac\n"
        "    done\n"
        "    if [[ $prev == --db || ($prev == = && ${COMP_WORDS[COMP_CWORD-2]} == --db) ]]; then\n"
        "        return  # a file name\n"
        "    fi\n");
}

// Its second half: the words to offer (%1: before a command, %2: after `help`, %3: the commands'
// cases), then the reply.
QString completionDispatch()
{
    return QStringLiteral(
        "    case $command in\n"
        "    '') words=%1 ;;\n"
        "    help) [[ -z $verb ]] && words=%2 ;;\n"
        "%3"
        "    esac\n"
        "    # After the verb, what does not start with a dash is an argument: a file name.\n"
        "    if [[ -n $verb && $cur != -* ]]; then\n"
        "        return\n"
        "    fi\n"
        "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
        "}\n"
        "complete -o default -F _orrery orrery\n");
}

// A command's case: its options, or its verbs and, after each verb, that verb's options.
QString completionCase(const CommandInfo &c, const QMap<QString, QStringList> &options)
{
    if (c.verbs.isEmpty())
        return QStringLiteral("    %1) words=%2 ;;\n").arg(c.name, shellWords(options.value(QString())));
    QStringList verbNames{QStringLiteral("--help")};
    QString verbCases;
    for (const VerbInfo &v : c.verbs) {
        if (!isPlainWord(v.name))
            continue;
        verbNames.append(v.name);
        verbCases +=
            QStringLiteral("        %1) words=%2 ;;\n").arg(v.name, shellWords(options.value(v.name)));
    }
    return QStringLiteral("    %1)\n"
                          "        case $verb in\n"
                          "        '') words=%2 ;;\n"
                          "%3"
                          "        esac\n"
                          "        ;;\n")
        .arg(c.name, shellWords(verbNames), verbCases);
}

}  // namespace

QString bashCompletion(const QList<CommandInfo> &table, const HelpSource &help)
{
    QStringList commands;
    for (const CommandInfo &c : table)
        commands.append(c.name);

    QString cases;
    for (const CommandInfo &c : table)
        if (isPlainWord(c.name))
            cases += completionCase(c, verbOptions(c, help(c)));

    return completionPreamble() +
        completionDispatch().arg(shellWords(QStringList{QStringLiteral("--db"), QStringLiteral("--help"),
                                                        QStringLiteral("--version"), QStringLiteral("help")} +
                                            commands),
                                 shellWords(commands), cases);
}

}  // namespace orrery::cli
