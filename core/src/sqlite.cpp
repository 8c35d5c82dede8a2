// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqlite.h"

#include <cmath>
#include <limits>

namespace orrery::core::sql {

void fail(sqlite3 *db, int code, std::string_view context)
{
    std::string message(context);
    message += ": ";
    message += db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    throw Error(code, message);
}

Stmt::Stmt(sqlite3 *db, std::string_view sql) : m_db(db)
{
    sqlite3_stmt *s = nullptr;
    const int rc =
        sqlite3_prepare_v3(db, sql.data(), int(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK)
        fail(db, rc, std::string("prepare '") + std::string(sql.substr(0, 80)) + "'");
    m_stmt.reset(s);
}

static void check(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK)
        fail(db, rc, what);
}

Stmt &Stmt::bindInt64(int i, std::int64_t v)
{
    check(m_db, sqlite3_bind_int64(m_stmt.get(), i, v), "bind");
    return *this;
}

Stmt &Stmt::bind(int i, double v)
{
    if (std::isnan(v))
        return bindNull(i);
    check(m_db, sqlite3_bind_double(m_stmt.get(), i, v), "bind");
    return *this;
}

Stmt &Stmt::bind(int i, std::string_view text)
{
    check(m_db, sqlite3_bind_text64(m_stmt.get(), i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
          "bind");
    return *this;
}

Stmt &Stmt::bindBlob(int i, const void *data, std::size_t size)
{
    check(m_db, sqlite3_bind_blob64(m_stmt.get(), i, data, size, SQLITE_TRANSIENT), "bind");
    return *this;
}

Stmt &Stmt::bindNull(int i)
{
    check(m_db, sqlite3_bind_null(m_stmt.get(), i), "bind");
    return *this;
}

bool Stmt::step()
{
    const int rc = sqlite3_step(m_stmt.get());
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    const int extended = sqlite3_extended_errcode(m_db);
    std::string message = std::string("step '") + sqlite3_sql(m_stmt.get()) + "': " + sqlite3_errmsg(m_db);
    sqlite3_reset(m_stmt.get());
    throw Error(extended ? extended : rc, message);
}

void Stmt::exec()
{
    while (step()) { }
    reset();
}

void Stmt::reset()
{
    sqlite3_reset(m_stmt.get());
    sqlite3_clear_bindings(m_stmt.get());
}

double Stmt::real(int col) const
{
    if (isNull(col))
        return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(m_stmt.get(), col);
}

std::string_view Stmt::text(int col) const
{
    const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt.get(), col));
    return p ? std::string_view(p, std::size_t(sqlite3_column_bytes(m_stmt.get(), col))) : std::string_view();
}

std::string_view Stmt::blob(int col) const
{
    const auto *p = static_cast<const char *>(sqlite3_column_blob(m_stmt.get(), col));
    return p ? std::string_view(p, std::size_t(sqlite3_column_bytes(m_stmt.get(), col))) : std::string_view();
}

void execScript(sqlite3 *db, const char *sql)
{
    char *error = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        std::string message = error ? error : sqlite3_errstr(rc);
        sqlite3_free(error);
        throw Error(sqlite3_extended_errcode(db), message);
    }
}

WriteTransaction::WriteTransaction(sqlite3 *db) : m_db(db)
{
    execScript(db, "BEGIN IMMEDIATE");
}

WriteTransaction::~WriteTransaction()
{
    if (!m_done)
        sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::commit()
{
    execScript(m_db, "COMMIT");
    m_done = true;
}

ReadTransaction::ReadTransaction(sqlite3 *db) : m_db(sqlite3_get_autocommit(db) ? db : nullptr)
{
    if (m_db)
        execScript(db, "BEGIN");
}

ReadTransaction::~ReadTransaction()
{
    if (m_db)
        sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr);
}

}  // namespace orrery::core::sql
