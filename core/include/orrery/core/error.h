// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one error below the faces (docs/errors.md): every exception core and remote raise is a
// core::Error with a kind and a message said for a person. The specific classes (StoreError,
// RemoteError, DeployError, OperationError, ...) derive from it and add what their callers read
// (a phase, a log tail, the SSH failure); a face that only reports catches core::Error at its one
// boundary and decides from the kind (an exit status, a colour, whether to retry).
#pragma once

#include <QString>

#include <stdexcept>
#include <string>

namespace orrery::core {

class Error : public std::runtime_error {
public:
    enum class Kind {
        Invalid,  // the request or input is wrong: a spec, a value, a name, a refused action
        NotFound,  // what was asked for is not there (a run deleted since, no such profile)
        Conflict,  // it is there but in the way (a profile of that name, a lease held elsewhere)
        Failed,  // the operation failed: a file unreadable, a command refused, a build broken
        Cancelled,  // the caller cancelled it; nothing of it stays
        Unavailable,  // not now: a cluster unreachable, a disk full, a lock held; may work later
    };
    Error(Kind kind, const QString &message) : std::runtime_error(message.toStdString()), m_kind(kind) { }
    Error(Kind kind, const std::string &message) : std::runtime_error(message), m_kind(kind) { }
    Error(Kind kind, const char *message) : std::runtime_error(message), m_kind(kind) { }

    Kind errorKind() const noexcept { return m_kind; }
    // The message for a person (what went wrong, and where it helps, what to do).
    QString message() const { return QString::fromUtf8(what()); }

private:
    Kind m_kind;
};

// "invalid", "not found", ... for logs and JSON.
QString errorKindName(Error::Kind kind);

}  // namespace orrery::core
