// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/capture.h"

#include <QFile>
#include <QStringList>

namespace orrery::core {

QList<std::pair<QString, QByteArray>> captureModuleFiles()
{
    QList<std::pair<QString, QByteArray>> out;
    for (const QString &name : {QStringLiteral("sitecustomize.py"), QStringLiteral("orrery_capture.py"),
                                QStringLiteral("orrery_mlflow.py"), QStringLiteral("orrery_events.py")}) {
        QFile f(QStringLiteral(":/orrery/python/") + name);
        if (f.open(QIODevice::ReadOnly))  // compiled in: missing only in a broken build
            out.append({name, f.readAll()});
    }
    return out;
}

QString captureDirName()
{
    return QStringLiteral(".orrery/python");
}

}  // namespace orrery::core
