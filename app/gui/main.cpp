// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "orrery/core/paths.h"

#include <QApplication>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    orrery::core::applyApplicationIdentity();
    QApplication::setApplicationDisplayName(QStringLiteral("Orrery"));
    QApplication::setDesktopFileName(QStringLiteral("orrery-gui"));

    orrery::gui::MainWindow window;
    window.show();
    return QApplication::exec();
}
