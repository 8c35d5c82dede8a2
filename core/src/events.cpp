// SPDX-License-Identifier: GPL-3.0-or-later
//
// simdjson's On-Demand API: ingest is bound by parsing (a metrics line is ~500 bytes for ~20
// values), and simdjson parses at GB/s where DOM parsers manage ~100 MB/s.
#include "orrery/core/events.h"

#include <simdjson.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace orrery::core {

static_assert(EventParser::kPadding >= simdjson::SIMDJSON_PADDING);

struct EventParser::Impl {
    simdjson::ondemand::parser parser;
    std::string rewritten;  // a line with Python's bare NaN/Infinity quoted (pythonNonFinite)
};

EventParser::EventParser() : d(std::make_unique<Impl>())
{ }

EventParser::~EventParser() = default;

namespace {

using namespace simdjson;

EventKind kindOf(std::string_view k)
{
    if (k == "metrics")
        return EventKind::Metrics;
    if (k == "system")
        return EventKind::System;
    if (k == "artifact")
        return EventKind::Artifact;
    if (k == "status")
        return EventKind::Status;
    if (k == "start")
        return EventKind::Start;
    if (k == "warning")
        return EventKind::Warning;
    if (k == "phases")
        return EventKind::Phases;
    if (k == "tags")
        return EventKind::Tags;
    return EventKind::Unknown;
}

bool nonFinite(std::string_view s, double &v)
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (s == "nan" || s == "NaN") {
        v = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (s == "inf" || s == "Infinity" || s == "+inf") {
        v = inf;
        return true;
    }
    if (s == "-inf" || s == "-Infinity") {
        v = -inf;
        return true;
    }
    return false;
}

std::string error(std::string_view what, simdjson::error_code e)
{
    std::string s(what);
    s += ": ";
    s += simdjson::error_message(e);
    return s;
}

// A JSON value as a param/tag string: strings unquoted, everything else as written.
std::string scalarText(ondemand::value v)
{
    ondemand::json_type t;
    if (v.type().get(t))
        return {};
    if (t == ondemand::json_type::string) {
        std::string_view s;
        if (!v.get_string().get(s))
            return std::string(s);
        return {};
    }
    std::string_view raw;
    if (t == ondemand::json_type::object || t == ondemand::json_type::array) {
        if (!simdjson::to_json_string(v).get(raw))
            return std::string(raw);
        return {};
    }
    raw = v.raw_json_token();
    while (!raw.empty() &&
           (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' || raw.back() == '\n'))
        raw.remove_suffix(1);
    return std::string(raw);
}

void flatten(ondemand::object obj, const std::string &prefix,
             std::vector<std::pair<std::string, std::string>> &out, int depth)
{
    for (auto field : obj) {
        std::string_view key;
        if (field.unescaped_key().get(key))
            return;
        std::string name = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
        ondemand::value v;
        if (field.value().get(v))
            return;
        ondemand::json_type t;
        if (v.type().get(t))
            return;
        if (t == ondemand::json_type::object && depth < 16) {
            ondemand::object inner;
            if (!v.get_object().get(inner))
                flatten(inner, name, out, depth + 1);
        } else {
            out.emplace_back(std::move(name), scalarText(v));
        }
    }
}

// Python's json.dumps writes float('nan') and float('inf') as the bare words NaN, Infinity and
// -Infinity, which JSON has not. The line with each such word outside a string quoted (the
// values parser reads "NaN", "Infinity", "-Infinity" as numbers), or nullopt when it has none.
std::optional<std::string> pythonNonFinite(std::string_view line)
{
    std::string out;
    bool inString = false, escaped = false, changed = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (inString) {
            escaped = !escaped && c == '\\';
            inString = escaped || c != '"';
            out += c;
            continue;
        }
        if (c == '"') {
            inString = true;
            out += c;
            continue;
        }
        bool replaced = false;
        for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
            const bool boundary =
                i + word.size() >= line.size() || !std::isalnum((unsigned char)line[i + word.size()]);
            if (line.substr(i, word.size()) == word && boundary) {
                out += '"';
                out += word;
                out += '"';
                i += word.size() - 1;
                replaced = changed = true;
                break;
            }
        }
        if (!replaced)
            out += c;
    }
    return changed ? std::optional(std::move(out)) : std::nullopt;
}

std::string parseLine(ondemand::parser &parser, std::string_view line, std::size_t readable, Event &out);

}  // namespace

std::string EventParser::parse(std::string_view line, std::size_t readable, Event &out)
{
    std::string error = parseLine(d->parser, line, readable, out);
    if (error.empty())
        return error;
    auto rewritten = pythonNonFinite(line);
    if (!rewritten)
        return error;
    d->rewritten = std::move(*rewritten);
    const std::size_t size = d->rewritten.size();
    d->rewritten.append(kPadding, ' ');
    std::string again =
        parseLine(d->parser, std::string_view(d->rewritten.data(), size), d->rewritten.size(), out);
    return again.empty() ? again : error;
}

namespace {

std::string parseLine(ondemand::parser &parser, std::string_view line, std::size_t readable, Event &out)
{
    out.kind = EventKind::Unknown;
    out.kindName = {};
    out.time = 0;
    out.hasStep = false;
    out.step = 0;
    out.values.clear();
    out.badValues.clear();
    out.runInfo.clear();
    out.params.clear();
    out.tags.clear();
    out.path = out.type = out.state = out.message = {};

    while (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (readable < line.size() + simdjson::SIMDJSON_PADDING)
        return "internal: line buffer without padding";

    ondemand::document doc;
    if (auto e = parser.iterate(line.data(), line.size(), readable).get(doc))
        return error("not JSON", e);
    ondemand::object obj;
    if (auto e = doc.get_object().get(obj))
        return error("not a JSON object", e);

    bool sawVersion = false;
    bool sawKind = false;
    // Fields in any order; one pass (On-Demand objects are forward-only).
    for (auto field : obj) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key))
            return error("bad key", e);
        ondemand::value v;
        if (auto e = field.value().get(v))
            return error("bad value", e);
        if (key == "v") {
            std::int64_t version = 0;
            if (v.get_int64().get(version) || version != 1)
                return "unsupported \"v\" (expected 1)";
            sawVersion = true;
        } else if (key == "t") {
            if (auto e = v.get_double().get(out.time))
                return error("\"t\" is not a number", e);
        } else if (key == "kind") {
            if (auto e = v.get_string().get(out.kindName))
                return error("\"kind\" is not a string", e);
            out.kind = kindOf(out.kindName);
            sawKind = true;
        } else if (key == "step") {
            if (v.get_int64().get(out.step)) {
                double x = 0;
                // 9.2e18: the int64 range (a float step beyond it is not a step; found by fuzz_events).
                if (v.get_double().get(x) || !std::isfinite(x) || std::abs(x) >= 9.2e18 || x != std::floor(x))
                    return "\"step\" is not an integer";
                out.step = std::int64_t(x);
            }
            out.hasStep = true;
        } else if (key == "values") {
            ondemand::object values;
            if (auto e = v.get_object().get(values))
                return error("\"values\" is not an object", e);
            for (auto entry : values) {
                std::string_view name;
                if (auto e = entry.unescaped_key().get(name))
                    return error("bad metric name", e);
                ondemand::value mv;
                if (auto e = entry.value().get(mv))
                    return error("bad metric value", e);
                double x = 0;
                ondemand::json_type t;
                if (auto e = mv.type().get(t))
                    return error("bad metric value", e);
                if (t == ondemand::json_type::number) {
                    if (auto e = mv.get_double().get(x))
                        return error("bad number", e);
                    out.values.emplace_back(name, x);
                } else if (std::string_view s;
                           t == ondemand::json_type::string && !mv.get_string().get(s) && nonFinite(s, x)) {
                    out.values.emplace_back(name, x);
                } else {
                    out.badValues.push_back(name);
                }
            }
        } else if (key == "run") {
            ondemand::object run;
            if (auto e = v.get_object().get(run))
                return error("\"run\" is not an object", e);
            for (auto entry : run) {
                std::string_view name;
                if (auto e = entry.unescaped_key().get(name))
                    return error("bad key in \"run\"", e);
                ondemand::value rv;
                if (auto e = entry.value().get(rv))
                    return error("bad value in \"run\"", e);
                if (name == "params") {
                    ondemand::object params;
                    if (auto e = rv.get_object().get(params))
                        return error("\"run.params\" is not an object", e);
                    flatten(params, {}, out.params, 0);
                } else {
                    out.runInfo.emplace_back(std::string(name), scalarText(rv));
                }
            }
        } else if (key == "tags") {
            ondemand::object tags;
            if (auto e = v.get_object().get(tags))
                return error("\"tags\" is not an object", e);
            flatten(tags, {}, out.tags, 0);
        } else if (key == "path" || key == "type" || key == "state" || key == "message") {
            std::string_view s;
            if (auto e = v.get_string().get(s))
                return error("\"" + std::string(key) + "\" is not a string", e);
            (key == "path"        ? out.path
                 : key == "type"  ? out.type
                 : key == "state" ? out.state
                                  : out.message) = s;
        }
        // Unknown keys are skipped (forward compatibility).
    }
    if (!sawVersion)
        return "missing \"v\"";
    if (!sawKind)
        return "missing \"kind\"";
    if (out.kind == EventKind::Metrics && !out.hasStep)
        return "metrics event without \"step\"";
    return {};
}

}  // namespace

}  // namespace orrery::core
