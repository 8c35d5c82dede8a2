// SPDX-License-Identifier: GPL-3.0-or-later
//
// The trainer's configuration: one schema of dotted keys (type, default, meaning, limits), a YAML
// file plus `--set key=value` overrides, validated before any work starts. `--print-schema`
// prints the schema; the sweep validator reads it (as JSON).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace orrery::train {

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

using Value = std::variant<std::int64_t, double, bool, std::string>;

enum class Type { Int, Float, Bool, String };

struct KeySpec {
    std::string key;
    Type type;
    Value fallback;
    std::string meaning;
    double min = -1e300, max = 1e300;  // Int/Float
    std::vector<std::string> choices;  // String: allowed values (empty: any)
};

const std::vector<KeySpec> &schema();

class Config {
public:
    // Defaults for every key.
    Config();

    std::int64_t i(const std::string &key) const;
    double f(const std::string &key) const;
    bool b(const std::string &key) const;
    const std::string &s(const std::string &key) const;
    // A comma-separated list of numbers ("1,2,2").
    std::vector<double> list(const std::string &key) const;

    // Sets a key from text (YAML scalar or --set value), checking type and limits. `origin`
    // names where it came from for the error message ("config.yaml:12", "--set").
    void set(const std::string &key, const std::string &text, const std::string &origin);

    // The resolved configuration as YAML (nested maps), what the run dir keeps.
    std::string toYaml() const;
    // The params of the run (every key → its value as text), for the start event.
    std::map<std::string, std::string> flat() const;

private:
    std::map<std::string, Value> m_values;
};

// Loads `path` (may be empty) and applies `overrides` ("key=value"); throws ConfigError with the
// file and line, or the override, that is wrong.
Config loadConfig(const std::string &path, const std::vector<std::string> &overrides);

// The schema as a table (text) or JSON (for the sweep validator).
std::string formatSchema(bool json);

std::string valueText(const Value &v);

}  // namespace orrery::train
