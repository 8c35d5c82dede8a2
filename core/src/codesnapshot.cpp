// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/codesnapshot.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace orrery::core {

QByteArray codeScript()
{
    QFile f(QStringLiteral(":/orrery/sweep/orrery-code.sh"));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();  // compiled in
}

QString codeScriptPath(const QString &sweepDir)
{
    return QDir(sweepDir).filePath(QStringLiteral(".orrery/orrery-code.sh"));
}

QString codeSnapshotDir(const QString &sweepDir)
{
    return QDir(sweepDir).filePath(QStringLiteral("code"));
}

QString trialWorkDirName()
{
    return QStringLiteral("work");
}

QString trialWorkDir(const QString &runDir)
{
    return QDir(runDir).filePath(trialWorkDirName());
}

QStringList codeSnapshotOptions(const CommandSpec::Code &code)
{
    QStringList out;
    for (const QString &l : code.link)
        out << QStringLiteral("--link") << l;
    for (const QString &f : code.fresh)
        out << QStringLiteral("--fresh") << f;
    return out;
}

Parsed<CodeSnapshot> parseCodeSnapshot(const QByteArray &json)
{
    QJsonParseError e{};
    const QJsonDocument doc = QJsonDocument::fromJson(json.trimmed(), &e);
    if (!doc.isObject() || !doc.object().contains(QLatin1String("source")))
        return Problem{
            QStringLiteral("the code snapshot's record is not one (%1): %2")
                .arg(e.error == QJsonParseError::NoError ? QStringLiteral("no source") : e.errorString(),
                     QString::fromUtf8(json.left(200)))};
    const QJsonObject o = doc.object();
    CodeSnapshot s;
    s.source = o.value(QLatin1String("source")).toString();
    s.files = o.value(QLatin1String("files")).toInteger();
    s.bytes = o.value(QLatin1String("bytes")).toInteger();
    s.vcs = o.value(QLatin1String("vcs")).toString();
    const QJsonObject git = o.value(QLatin1String("git")).toObject();
    s.gitCommit = git.value(QLatin1String("commit")).toString();
    s.gitBranch = git.value(QLatin1String("branch")).toString();
    s.gitRoot = git.value(QLatin1String("root")).toString();
    s.gitDirty = git.value(QLatin1String("dirty")).toBool();
    s.diffPath = git.value(QLatin1String("diff")).toString();
    for (const QJsonValue v : o.value(QLatin1String("linked")).toArray())
        s.linked << v.toString();
    return s;
}

QList<std::pair<QString, QString>> codeSnapshotTags(const CodeSnapshot &s)
{
    QList<std::pair<QString, QString>> tags{{QStringLiteral("orrery.code.source"), s.source},
                                            {QStringLiteral("orrery.code.files"), QString::number(s.files)}};
    if (s.vcs == QLatin1String("git")) {
        if (!s.gitCommit.isEmpty())
            tags.append({QStringLiteral("mlflow.source.git.commit"), s.gitCommit});
        if (!s.gitBranch.isEmpty())
            tags.append({QStringLiteral("mlflow.source.git.branch"), s.gitBranch});
        tags.append({QStringLiteral("orrery.code.git_dirty"),
                     s.gitDirty ? QStringLiteral("true") : QStringLiteral("false")});
    } else if (s.vcs == QLatin1String("home")) {  // nothing frozen: every entry linked
        tags.append({QStringLiteral("orrery.code.frozen"),
                     QStringLiteral("false (workdir is the home directory: name your project's directory)")});
    } else {
        tags.append({QStringLiteral("orrery.code.git_dirty"), QStringLiteral("unknown (no git)")});
    }
    if (!s.linked.isEmpty())
        tags.append({QStringLiteral("orrery.code.linked"), s.linked.join(QStringLiteral(", "))});
    return tags;
}

}  // namespace orrery::core
