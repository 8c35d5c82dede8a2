// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one error below the faces (docs/errors.md): every exception core and remote raise is a
// core::Error with a kind and a message said for a person. The specific classes (StoreError,
// RemoteError, DeployError, OperationError, ...) derive from it and add what their callers read
// (a phase, a log tail, the SSH failure); a face that only reports catches core::Error at its one
// boundary and decides from the kind (an exit status, a colour, whether to retry).
//
// Text that does not parse is not an exception but an answer: a parser returns Parsed<T>, what it
// found or the problem it met (docs/errors.md "Parsers return what they found and the problems").
#pragma once

#include <QString>
#include <QtGlobal>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

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

// Throws Error(Failed, message): the operation failed (a file unreadable, a write refused).
[[noreturn]] inline void fail(const QString &message)
{
    throw Error(Error::Kind::Failed, message);
}

// Why a parser found nothing, said for a person as the face shows it ("no value after the
// operator in 'lr >='"). A Parsed<T> is made from one, so a parser says `return Problem{message};`.
struct Problem {
    QString message;
};

// A parser's answer: the value it found or the Problem that kept it from finding one, never both
// (an out-string beside an optional could be set, stale or forgotten). Made implicitly from
// either, so a parser returns `value;` or `Problem{...};`; a caller tests it (`if (!parsed)`),
// shows problem() and reads the value. Copyable and movable as T is, so a move-only T works.
// The part of std::expected<T, QString> the parsers need; GCC 12's library has no std::expected.
template<typename T>
class [[nodiscard]] Parsed {
public:
    Parsed(T value) : m_value(std::move(value)) { }
    Parsed(Problem problem) : m_problem(std::move(problem.message)) { }

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }

    // The value; only where ok() (a debug build stops here with the problem otherwise).
    const T &value() const
    {
        Q_ASSERT_X(ok(), "Parsed::value", qPrintable(m_problem));
        return *m_value;
    }
    T &value()
    {
        Q_ASSERT_X(ok(), "Parsed::value", qPrintable(m_problem));
        return *m_value;
    }
    const T &operator*() const { return value(); }
    T &operator*() { return value(); }
    const T *operator->() const { return std::addressof(value()); }
    T *operator->() { return std::addressof(value()); }

    // What went wrong; empty when ok().
    QString problem() const { return m_problem; }
    // The value, or `fallback` where there is none (the problem is then dropped).
    T valueOr(T fallback) const
    {
        if (ok())
            return *m_value;
        return fallback;
    }

private:
    std::optional<T> m_value;
    QString m_problem;
};

}  // namespace orrery::core
