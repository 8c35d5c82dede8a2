// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "orrery/core/version.h"

#include <QApplication>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("orrery"));
    QApplication::setOrganizationName(QStringLiteral("orrery"));
    QApplication::setApplicationDisplayName(QStringLiteral("Orrery"));
    QApplication::setApplicationVersion(orrery::core::version());
    QApplication::setDesktopFileName(QStringLiteral("orrery-gui"));

    orrery::gui::MainWindow window;
    window.show();
    return QApplication::exec();
}
