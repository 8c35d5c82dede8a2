// SPDX-License-Identifier: GPL-3.0-or-later
//
// The store's schema as numbered migrations. Migration N takes a database at version N-1 to N
// (PRAGMA user_version). Never edit a migration that has shipped: add the next one.
#pragma once

#include <span>

struct sqlite3;

namespace orrery::core::schema {

struct Migration {
    int version;
    const char *sql;
    // Runs after the SQL, in the same transaction, for data that SQL alone cannot convert.
    void (*convert)(sqlite3 *db) = nullptr;
};

std::span<const Migration> migrations();
inline int currentVersion()
{
    return int(migrations().size());
}

}  // namespace orrery::core::schema
