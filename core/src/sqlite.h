// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one wall around SQLite's C API: RAII handles, prepared statements with typed binds, and
// errors as exceptions carrying SQLite's own message. Nothing outside core/src includes sqlite3.h.
#pragma once

#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace orrery::core::sql {

class Error : public std::runtime_error {
public:
    Error(int code, const std::string &what) : std::runtime_error(what), m_code(code) { }
    int code() const { return m_code; }
    bool isBusy() const { return (m_code & 0xff) == SQLITE_BUSY || (m_code & 0xff) == SQLITE_LOCKED; }

private:
    int m_code;
};

struct DbCloser {
    void operator()(sqlite3 *db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
    void operator()(sqlite3_stmt *s) const { sqlite3_finalize(s); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

[[noreturn]] void fail(sqlite3 *db, int code, std::string_view context);

// A prepared statement. Bind indexes are 1-based as in SQLite; columns are 0-based.
class Stmt {
public:
    Stmt() = default;
    Stmt(sqlite3 *db, std::string_view sql);

    template<std::integral T>
    requires(!std::same_as<T, bool>) Stmt &bind(int i, T v)
    {
        return bindInt64(i, static_cast<std::int64_t>(v));
    }
    Stmt &bindInt64(int i, std::int64_t v);
    // NaN is stored as NULL (SQLite turns NaN into NULL anyway); callers that read it back map
    // NULL to NaN where the column means a metric value.
    Stmt &bind(int i, double v);
    Stmt &bind(int i, std::string_view text);
    Stmt &bind(int i, const char *text) { return bind(i, std::string_view(text)); }
    Stmt &bind(int i, const std::string &text) { return bind(i, std::string_view(text)); }
    Stmt &bindBlob(int i, const void *data, std::size_t size);
    Stmt &bindNull(int i);

    // Steps once: true when a row is available, false when done.
    bool step();
    // Steps to completion (for statements that return no rows) and resets.
    void exec();
    void reset();

    std::int64_t int64(int col) const { return sqlite3_column_int64(m_stmt.get(), col); }
    double real(int col) const;  // NULL → NaN
    bool isNull(int col) const { return sqlite3_column_type(m_stmt.get(), col) == SQLITE_NULL; }
    std::string_view text(int col) const;
    std::string_view blob(int col) const;

    sqlite3_stmt *get() const { return m_stmt.get(); }

private:
    sqlite3 *m_db = nullptr;
    std::unique_ptr<sqlite3_stmt, StmtFinalizer> m_stmt;
};

// Runs one or more statements with no parameters.
void execScript(sqlite3 *db, const char *sql);

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed without commit(). IMMEDIATE takes the
// write lock at the start, so two writers queue on the busy timeout instead of one of them
// failing with SQLITE_BUSY when it upgrades a read transaction to a write one.
class WriteTransaction {
public:
    explicit WriteTransaction(sqlite3 *db);
    ~WriteTransaction();
    WriteTransaction(const WriteTransaction &) = delete;
    WriteTransaction &operator=(const WriteTransaction &) = delete;
    void commit();

private:
    sqlite3 *m_db;
    bool m_done = false;
};

// BEGIN (deferred) for a consistent multi-statement read; nothing inside an open transaction.
class ReadTransaction {
public:
    explicit ReadTransaction(sqlite3 *db);
    ~ReadTransaction();
    ReadTransaction(const ReadTransaction &) = delete;
    ReadTransaction &operator=(const ReadTransaction &) = delete;

private:
    sqlite3 *m_db;
};

}  // namespace orrery::core::sql
