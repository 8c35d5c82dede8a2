// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/error.h"

namespace orrery::core {

QString errorKindName(Error::Kind kind)
{
    switch (kind) {
    case Error::Kind::Invalid:
        return QStringLiteral("invalid");
    case Error::Kind::NotFound:
        return QStringLiteral("not found");
    case Error::Kind::Conflict:
        return QStringLiteral("conflict");
    case Error::Kind::Failed:
        return QStringLiteral("failed");
    case Error::Kind::Cancelled:
        return QStringLiteral("cancelled");
    case Error::Kind::Unavailable:
        break;
    }
    return QStringLiteral("unavailable");
}

}  // namespace orrery::core
