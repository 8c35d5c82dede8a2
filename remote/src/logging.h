// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QLoggingCategory>

// QT_LOGGING_RULES="orrery.remote.debug=true" shows every command sent and its exit status.
Q_DECLARE_LOGGING_CATEGORY(lcRemote)
