// SPDX-License-Identifier: GPL-3.0-or-later
//
// Reading runs and metric histories.
#include "storeimpl.h"

#include <QRegularExpression>

#include <functional>
#include <future>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orrery::core {

using sql::Stmt;

Parsed<QList<RunCondition>> parseRunFilter(const QString &text)
{
    QList<RunCondition> out;
    QStringList terms;
    QString term;
    QChar quote;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (!quote.isNull()) {
            if (c == quote)
                quote = QChar();
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'') || c == QLatin1Char('`')) {
            quote = c;
        } else if (c.isSpace() &&
                   text.mid(i + 1, 3).compare(QLatin1String("and"), Qt::CaseInsensitive) == 0 &&
                   (i + 4 >= text.size() || text[i + 4].isSpace())) {
            terms.push_back(term);
            term.clear();
            i += 4;
            continue;
        }
        term += c;
    }
    terms.push_back(term);
    for (const QString &t : std::as_const(terms)) {
        if (t.trimmed().isEmpty()) {
            if (terms.size() == 1)
                break;  // no filter at all
            return Problem{QStringLiteral("an empty term around AND in '%1'").arg(text)};
        }
        auto c = parseRunCondition(t.trimmed());
        if (!c)
            return Problem{c.problem()};
        out.push_back(*c);
    }
    return out;
}

Parsed<RunCondition> parseRunCondition(const QString &text)
{
    // scope.key op value; the key may contain dots, slashes and spaces, so the operator is the
    // first one that follows it (LIKE needs spaces around it).
    static const QRegularExpression re(
        QStringLiteral(R"(^\s*(params|param|tags|tag|metrics|metric|attributes|attribute|attr)\.(.+?)\s*)"
                       R"((<=|>=|!=|<>|==|=|<|>|\sLIKE\s)\s*(.*?)\s*$)"),
        QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(text);
    if (!m.hasMatch())
        return Problem{QStringLiteral("cannot read the filter '%1': expected SCOPE.KEY OP VALUE, e.g. "
                                      "\"params.optim.lr = 0.001\" or \"metrics.eval/loss < 0.2\"")
                           .arg(text)};
    RunCondition c;
    const QString scope = m.captured(1).toLower();
    c.scope = scope.startsWith(QLatin1String("param")) ? RunCondition::Scope::Param
        : scope.startsWith(QLatin1String("tag"))       ? RunCondition::Scope::Tag
        : scope.startsWith(QLatin1String("metric"))    ? RunCondition::Scope::Metric
                                                       : RunCondition::Scope::Attribute;
    c.key = m.captured(2);
    if (c.key.size() >= 2 && c.key.startsWith(QLatin1Char('`')) && c.key.endsWith(QLatin1Char('`')))
        c.key = c.key.mid(1, c.key.size() - 2);
    const QString op = m.captured(3).trimmed().toUpper();
    c.op = op == QLatin1String("<=")                               ? RunCondition::Op::Le
        : op == QLatin1String(">=")                                ? RunCondition::Op::Ge
        : (op == QLatin1String("!=") || op == QLatin1String("<>")) ? RunCondition::Op::Ne
        : op == QLatin1String("<")                                 ? RunCondition::Op::Lt
        : op == QLatin1String(">")                                 ? RunCondition::Op::Gt
        : op == QLatin1String("LIKE")                              ? RunCondition::Op::Like
                                                                   : RunCondition::Op::Eq;
    c.value = m.captured(4);
    // What is left after the operator is the value, whatever it is, so a slip of the keyboard
    // (`>== banana`, `>= `) would otherwise filter on '= banana' or '' and quietly show no runs.
    if (c.value.isEmpty())
        return Problem{QStringLiteral("no value after the operator in '%1'").arg(text)};
    if (QStringView(u"=<>!").contains(c.value.front()))
        return Problem{QStringLiteral("'%1': one operator expected (=, !=, <, <=, >, >=, LIKE), found '%2%3'")
                           .arg(text, m.captured(3).trimmed(), QString(c.value.front()))};
    if (c.value.size() >= 2 &&
        (c.value.front() == QLatin1Char('"') || c.value.front() == QLatin1Char('\'')) &&
        c.value.back() == c.value.front())
        c.value = c.value.mid(1, c.value.size() - 2);
    if (c.scope == RunCondition::Scope::Metric) {
        bool ok = false;
        c.value.toDouble(&ok);
        if (!ok || c.op == RunCondition::Op::Like)
            return Problem{QStringLiteral("metric filters compare numbers: '%1'").arg(text)};
    }
    const bool ordering =
        c.op != RunCondition::Op::Eq && c.op != RunCondition::Op::Ne && c.op != RunCondition::Op::Like;
    if (c.scope == RunCondition::Scope::Param && ordering) {
        // The store orders a param numerically only when the value is a number (queryRuns); text
        // ordering of '1e-3' against 'banana' is never what was meant.
        bool ok = false;
        c.value.toDouble(&ok);
        if (!ok)
            return Problem{
                QStringLiteral("'%1': <, <=, >, >= compare numbers and '%2' is not one").arg(text, c.value)};
    }
    if (c.scope == RunCondition::Scope::Attribute) {
        static const QStringList known = {QStringLiteral("status"), QStringLiteral("name"),
                                          QStringLiteral("run_dir"), QStringLiteral("run_id"),
                                          QStringLiteral("uuid")};
        if (!known.contains(c.key.toLower()))
            return Problem{QStringLiteral("unknown attribute '%1' (one of: %2)")
                               .arg(c.key, known.join(QLatin1String(", ")))};
        c.key = c.key.toLower();
    }
    return c;
}

namespace {

const char *sqlOp(RunCondition::Op op)
{
    switch (op) {
    case RunCondition::Op::Eq:
        return "=";
    case RunCondition::Op::Ne:
        return "!=";
    case RunCondition::Op::Lt:
        return "<";
    case RunCondition::Op::Le:
        return "<=";
    case RunCondition::Op::Gt:
        return ">";
    case RunCondition::Op::Ge:
        return ">=";
    case RunCondition::Op::Like:
        return "LIKE";
    }
    return "=";
}

// A bound value: text, or a number when the comparison is an ordering of numbers.
struct Bind {
    std::string text;
    std::optional<double> number;
    std::optional<qint64> integer;
};

}  // namespace

namespace {
// Finds a std::string key by a string_view without making a string of it.
struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// Every run's values of the chosen keys in `table` (params or tags), by one pass over the
// table: its primary key is (run_id, key) and it has no rowid, so the pass comes run by run, each
// run's keys in order, and each run's map is made at once, growing at its end. Runs without any
// of the keys are left out. Touches nothing but `db`, so it can run on a connection of its own.
struct ChosenValues {
    qint64 run = 0;
    QMap<QString, QString> values;
};
std::vector<ChosenValues> scanChosen(sqlite3 *db, const char *table, const QStringList &keys)
{
    std::vector<std::string> owned;
    owned.reserve(std::size_t(keys.size()));
    for (const QString &key : keys)
        owned.push_back(utf8(key));
    // Each key's values shared between the runs that hold them: a sweep's runs repeat a few
    // values per param (a grid's, a constant's), and 1.2M strings of their own were a third of
    // the read (bench_runs_scale). A key with many distinct values (a learning rate drawn at
    // random) stops being shared past kShared of them.
    constexpr std::size_t kShared = 256;
    struct Key {
        const QString *name;
        std::unordered_map<std::string, QString, TextHash, std::equal_to<>> values;
    };
    std::unordered_map<std::string_view, Key> wanted;
    for (qsizetype i = 0; i < keys.size(); ++i)
        wanted.emplace(owned[std::size_t(i)], Key{&keys[i], {}});
    std::vector<ChosenValues> out;
    Stmt all(db, std::string("SELECT run_id, key, value FROM ") + table);
    while (all.step()) {
        const auto key = wanted.find(all.text(1));
        if (key == wanted.end())
            continue;
        const qint64 run = all.int64(0);
        if (out.empty() || out.back().run != run)
            out.push_back({run, {}});
        Key &k = key->second;
        const std::string_view text = all.text(2);
        QString value;
        if (const auto it = k.values.find(text); it != k.values.end())
            value = it->second;
        else if (value = qstr(text); k.values.size() < kShared)
            k.values.emplace(std::string(text), value);
        QMap<QString, QString> &values = out.back().values;
        values.insert(values.cend(), *k.name, value);  // keys come in order: the hint is right
    }
    return out;
}

// Hands each scanned run's values to its row (moved: nothing is copied).
void giveChosen(std::vector<ChosenValues> &&scanned, QList<RunRow> &rows,
                const std::unordered_map<qint64, qsizetype> &index, QMap<QString, QString> RunRow::*member)
{
    for (ChosenValues &v : scanned)
        if (const auto row = index.find(v.run); row != index.end())
            rows[row->second].*member = std::move(v.values);
}

// Many keys of many runs (a table of every param) are read by one pass over the table: the key
// is not indexed by run, so a statement per key was a scan per key (100 keys of 100,000 runs
// read 120M rows, 7-20 s in bench_runs_scale).
bool scansWhole(const QStringList &keys, qsizetype runs)
{
    return runs >= 64 && keys.size() > 4;
}

// From this many runs the params' pass of a whole table runs on a second connection.
constexpr qsizetype kConcurrentRuns = 5000;

// The chosen keys of `table` (params or tags) for the rows: one statement per key, by the
// table's primary key for a few runs, else one scan of the key's rows, or of the whole table.
void readChosen(TrackingStore::Impl &d, const char *table, const QStringList &keys, QList<RunRow> &rows,
                const std::unordered_map<qint64, qsizetype> &index, QMap<QString, QString> RunRow::*member)
{
    if (keys.isEmpty() || rows.isEmpty())
        return;
    const bool few = rows.size() < 64;
    if (scansWhole(keys, rows.size())) {
        giveChosen(scanChosen(d.db.get(), table, keys), rows, index, member);
        return;
    }
    Stmt s(d.db.get(),
           few ? std::string("SELECT run_id, value FROM ") + table + " WHERE run_id = ? AND key = ?"
               : std::string("SELECT run_id, value FROM ") + table + " WHERE key = ?");
    for (const QString &key : keys) {
        const std::string k = utf8(key);
        auto read = [&] {
            while (s.step()) {
                auto it = index.find(s.int64(0));
                if (it != index.end())
                    (rows[it->second].*member).insert(key, qstr(s.text(1)));
            }
            s.reset();
        };
        if (few) {
            for (const RunRow &row : std::as_const(rows)) {
                s.bind(1, row.run.id).bind(2, k);
                read();
            }
        } else {
            s.bind(1, k);
            read();
        }
    }
}
}  // namespace

QList<RunRow> TrackingStore::queryRuns(const RunQuery &q,
                                       const std::function<void(const QList<RunRow> &)> &withoutParams) const
{
    return d->guarded("queryRuns", [&] {
        // Outside a transaction of this connection's own (whose writes another connection does
        // not see), and for a database in a file, the params' pass can run on a connection of
        // its own (below).
        const bool ownTransaction = sqlite3_get_autocommit(d->db.get()) == 0;
        sql::ReadTransaction read(d->db.get());
        std::future<std::vector<ChosenValues>> params;
        if (!ownTransaction && scansWhole(q.params, kConcurrentRuns)) {
            Stmt &last = d->stmt("SELECT coalesce(max(run_id), 0) FROM runs");
            const qint64 runs = last.step() ? last.int64(0) : 0;  // at least the count of runs
            last.reset();
            const char *file = sqlite3_db_filename(d->db.get(), "main");
            // A table of every param of many runs (the window's snapshot): the pass over the
            // params, the longest part of the read, runs beside the read of the runs and their
            // metrics (bench_runs_scale, 100,000 runs: 370 of 600 ms). Its connection reads the
            // file as it is a moment after this one: a run made in between has its params read
            // and no row (they are left out); a run deleted in between keeps its row, without
            // params, until the next read.
            if (runs >= kConcurrentRuns && file && *file)
                params = std::async(std::launch::async, [path = std::string(file), keys = q.params] {
                    const sql::DbHandle other = Impl::openReader(path);
                    return scanChosen(other.get(), "params", keys);
                });
        }
        std::string where = q.includeArchived ? "WHERE r.lifecycle_stage IN ('active', 'archived')"
                                              : "WHERE r.lifecycle_stage = 'active'";
        std::vector<Bind> binds;
        if (q.experiment) {
            where += " AND e.name = ?";
            binds.push_back({utf8(*q.experiment), {}, {}});
        }
        if (q.sweep) {
            where += " AND r.run_id IN (SELECT run_id FROM trials WHERE sweep_id = ?)";
            binds.push_back({{}, {}, *q.sweep});
        }
        for (const RunCondition &c : q.conditions) {
            const std::string op = sqlOp(c.op);
            const bool ordering = c.op != RunCondition::Op::Eq && c.op != RunCondition::Op::Ne &&
                c.op != RunCondition::Op::Like;
            bool numeric = false;
            const double number = c.value.toDouble(&numeric);
            switch (c.scope) {
            case RunCondition::Scope::Param:
            case RunCondition::Scope::Tag: {
                const char *table = c.scope == RunCondition::Scope::Param ? "params" : "tags";
                const std::string lhs = ordering && numeric ? "CAST(x.value AS REAL)" : "x.value";
                where += std::string(" AND EXISTS (SELECT 1 FROM ") + table +
                    " x WHERE x.run_id = r.run_id AND x.key = ? AND " + lhs + " " + op + " ?)";
                binds.push_back({utf8(c.key), {}, {}});
                binds.push_back(ordering && numeric ? Bind{{}, number, {}} : Bind{utf8(c.value), {}, {}});
                break;
            }
            case RunCondition::Scope::Metric:
                where +=
                    " AND EXISTS (SELECT 1 FROM latest_metrics l JOIN metric_keys k ON k.key_id = l.key_id "
                    "WHERE l.run_id = r.run_id AND k.name = ? AND l.value " +
                    op + " ?)";
                binds.push_back({utf8(c.key), {}, {}});
                binds.push_back({{}, number, {}});
                break;
            case RunCondition::Scope::Attribute: {
                const std::string column = c.key == QLatin1String("status") ? "r.status"
                    : c.key == QLatin1String("name")                        ? "r.name"
                    : c.key == QLatin1String("run_dir")                     ? "r.run_dir"
                    : c.key == QLatin1String("uuid")                        ? "r.run_uuid"
                                                                            : "r.run_id";
                where += " AND " + column + " " + op + " ?";
                if (c.key == QLatin1String("status"))
                    binds.push_back({utf8(c.value.toUpper()), {}, {}});
                else if (c.key == QLatin1String("run_id"))
                    binds.push_back({{}, {}, c.value.toLongLong()});
                else
                    binds.push_back({utf8(c.value), {}, {}});
                break;
            }
            }
        }
        std::string order = " ORDER BY r.start_time DESC, r.run_id DESC";
        std::string select = Impl::kRunColumns;
        if (!q.orderByMetric.isEmpty()) {
            // Runs without the metric (or with NaN) sort last either way.
            select.insert(select.find(" FROM runs"),
                          ", (SELECT l.value FROM latest_metrics l WHERE l.run_id = r.run_id AND l.key_id = "
                          "(SELECT key_id FROM metric_keys WHERE name = ?)) AS sort_value");
            binds.insert(binds.begin(), {utf8(q.orderByMetric), {}, {}});
            order = std::string(" ORDER BY sort_value IS NULL, sort_value ") +
                (q.descending ? "DESC" : "ASC") + ", r.run_id";
        }
        std::string text = select + where + order;
        if (q.limit > 0)
            text += " LIMIT " + std::to_string(q.limit);
        Stmt s(d->db.get(), text);
        int i = 1;
        for (const Bind &b : binds) {
            if (b.integer)
                s.bind(i++, *b.integer);
            else if (b.number)
                s.bind(i++, *b.number);
            else
                s.bind(i++, b.text);
        }
        QList<RunRow> rows;
        std::unordered_map<qint64, qsizetype> index;
        while (s.step()) {
            RunRow row;
            row.run = Impl::readRun(s);
            index.emplace(row.run.id, rows.size());
            rows.push_back(std::move(row));
        }
        if (rows.isEmpty()) {
            if (withoutParams)
                withoutParams(rows);
            return rows;
        }
        // Latest metrics of the selected runs: one pass in primary-key order (by run), which
        // beats one lookup per run once the list holds more than a few runs. Key names come
        // from one read of metric_keys, ranked by name so each run's list sorts on integers.
        std::vector<QString> names;
        std::vector<int> rank;
        {
            Stmt &k = d->stmt("SELECT key_id, name FROM metric_keys ORDER BY name");
            int r = 0;
            while (k.step()) {
                const auto id = std::size_t(k.int64(0));
                if (id >= names.size()) {
                    names.resize(id + 1);
                    rank.resize(id + 1);
                }
                names[id] = qstr(k.text(1));
                rank[id] = r++;
            }
            k.reset();
        }
        const bool few = rows.size() < 64;
        Stmt latest(d->db.get(),
                    few ? "SELECT run_id, metrics FROM run_latest WHERE run_id = ?"
                        : "SELECT run_id, metrics FROM run_latest");
        // One flat vector (row, key rank, metric): no allocation per run.
        struct Entry {
            qsizetype row;
            int rank;
            LatestMetric metric;
        };
        std::vector<Entry> entries;
        entries.reserve(std::size_t(rows.size()) * 16);
        auto readLatest = [&] {
            while (latest.step()) {
                auto it = index.find(latest.int64(0));
                if (it == index.end())
                    continue;
                const qsizetype row = it->second;
                const bool ok = decodeRunLatest(latest.blob(1), [&](qint64 key, const LatestMetric &m) {
                    if (key < 0 || std::size_t(key) >= names.size())
                        return;
                    Entry &e = entries.emplace_back(Entry{row, rank[std::size_t(key)], m});
                    e.metric.key = names[std::size_t(key)];
                });
                if (!ok)
                    throw StoreError("the latest metrics of run " + std::to_string(latest.int64(0)) +
                                     " are corrupt");
            }
            latest.reset();
        };
        if (few) {
            for (const RunRow &row : rows) {
                latest.bind(1, row.run.id);
                readLatest();
            }
        } else {
            readLatest();
        }
        QStringList tags = q.tags;
        if (!tags.contains(QLatin1String(kBaselineTag)))
            tags.append(QLatin1String(kBaselineTag));
        readChosen(*d, "tags", tags, rows, index, &RunRow::tags);
        // Each run's entries are contiguous: sort each group by key name, no global sort.
        for (std::size_t from = 0; from < entries.size();) {
            std::size_t to = from;
            while (to < entries.size() && entries[to].row == entries[from].row)
                ++to;
            std::sort(entries.begin() + std::ptrdiff_t(from), entries.begin() + std::ptrdiff_t(to),
                      [](const Entry &a, const Entry &b) { return a.rank < b.rank; });
            QList<LatestMetric> &list = rows[entries[from].row].latest;
            list.reserve(list.size() + qsizetype(to - from));
            for (; from < to; ++from)
                list.push_back(std::move(entries[from].metric));
        }
        if (withoutParams)
            withoutParams(rows);
        if (params.valid())
            giveChosen(params.get(), rows, index, &RunRow::params);
        else
            readChosen(*d, "params", q.params, rows, index, &RunRow::params);
        return rows;
    });
}

const LatestMetric *RunRow::metric(const QString &key) const
{
    for (const LatestMetric &m : latest)
        if (m.key == key)
            return &m;
    return nullptr;
}

QStringList TrackingStore::metricKeys() const
{
    return d->guarded("metricKeys", [&] {
        QStringList out;
        Stmt &s = d->stmt("SELECT name FROM metric_keys k WHERE EXISTS (SELECT 1 FROM latest_metrics l "
                          "WHERE l.key_id = k.key_id) ORDER BY name");
        while (s.step())
            out.push_back(qstr(s.text(0)));
        s.reset();
        return out;
    });
}

QStringList TrackingStore::paramKeys() const
{
    return d->guarded("paramKeys", [&] {
        QStringList out;
        // One index seek per key (params_by_key), not a DISTINCT over every param row: the next
        // key is the least one above the last, until there is none.
        Stmt &s = d->stmt("WITH RECURSIVE k(key) AS (SELECT min(key) FROM params UNION ALL "
                          "SELECT (SELECT min(key) FROM params WHERE key > k.key) FROM k "
                          "WHERE k.key IS NOT NULL) SELECT key FROM k WHERE key IS NOT NULL");
        while (s.step())
            out.push_back(qstr(s.text(0)));
        s.reset();
        return out;
    });
}

QStringList TrackingStore::metricKeys(RunId run) const
{
    return d->guarded("metricKeys", [&] {
        QStringList out;
        Stmt &s = d->stmt("SELECT k.name FROM latest_metrics l JOIN metric_keys k ON k.key_id = l.key_id "
                          "WHERE l.run_id = ? ORDER BY k.name");
        s.bind(1, run);
        while (s.step())
            out.push_back(qstr(s.text(0)));
        s.reset();
        return out;
    });
}

MetricHistory TrackingStore::history(RunId run, const QString &key, const HistoryQuery &q) const
{
    return d->guarded("history", [&] {
        MetricHistory out;
        const auto keyId = d->keyId(utf8(key));
        if (!keyId)
            return out;
        sql::ReadTransaction read(d->db.get());
        const bool byStep = q.axis == XAxis::Step;
        // Chunks are keyed by step: a step range reads only the chunks it overlaps, a time range
        // reads them all (times are not indexed; a run's time follows its steps anyway).
        const std::int64_t stepMin = byStep ? q.from : std::numeric_limits<std::int64_t>::min();
        const std::int64_t stepMax = byStep ? q.to : std::numeric_limits<std::int64_t>::max();
        // Chunks never overlap (appendSeries), so the ones in [stepMin, stepMax] are the last
        // one starting at or before stepMin and those starting after it up to stepMax: both
        // bounds on the primary key, whatever the zoom (a `last_step >= ?` test would read
        // every chunk before the range, blobs included, on each query).
        std::int64_t firstChunk = stepMin;
        {
            Stmt &before = d->stmt("SELECT max(first_step) FROM metric_chunks WHERE run_id = ? AND key_id = "
                                   "? AND first_step <= ?");
            before.bind(1, run).bind(2, *keyId).bind(3, stepMin);
            if (before.step() && !before.isNull(0))
                firstChunk = before.int64(0);
            before.reset();
        }
        // First the chunks' headers (the blobs stay unread): how many points, which steps.
        Stmt &range =
            d->stmt("SELECT coalesce(sum(count), 0), min(first_step), max(last_step) FROM metric_chunks "
                    "WHERE run_id = ? AND key_id = ? AND first_step BETWEEN ? AND ? AND last_step >= ?");
        range.bind(1, run).bind(2, *keyId).bind(3, firstChunk).bind(4, stepMax).bind(5, stepMin);
        range.step();
        const std::int64_t estimate = range.int64(0);
        const std::int64_t first = range.int64(1), last = range.int64(2);
        range.reset();
        if (estimate == 0)
            return out;
        if (q.axis == XAxis::RelativeTime) {
            Stmt &start = d->stmt("SELECT start_time FROM runs WHERE run_id = ?");
            start.bind(1, run);
            if (start.step())
                out.origin = start.int64(0);
            start.reset();
        }
        std::vector<MetricPoint> points;  // time axes: in range, before deciding raw or buckets
        const bool raw = q.buckets <= 0 || estimate <= 2 * std::int64_t(q.buckets);
        std::int64_t lo = byStep ? std::max<std::int64_t>(q.from, first) : q.from;
        std::int64_t hi = byStep ? std::min<std::int64_t>(q.to, last) : q.to;
        std::optional<MinMaxBucketer> bucketer;
        if (raw || !byStep)
            points.reserve(std::size_t(estimate));
        else
            bucketer.emplace(lo, hi, q.buckets);
        bool originFromFirstPoint = q.axis == XAxis::RelativeTime && out.origin <= 0;
        auto xOf = [&](const MetricPoint &p) -> std::int64_t {
            return q.axis == XAxis::Step    ? p.step
                : q.axis == XAxis::WallTime ? p.timeMs
                                            : p.timeMs - out.origin;
        };
        Stmt &s = d->stmt(
            "SELECT points FROM metric_chunks WHERE run_id = ? AND key_id = ? AND first_step BETWEEN ? AND ? "
            "AND last_step >= ? ORDER BY first_step");
        s.bind(1, run).bind(2, *keyId).bind(3, firstChunk).bind(4, stepMax).bind(5, stepMin);
        while (s.step()) {
            const bool ok = forEachPoint(s.blob(0), [&](const MetricPoint &p) {
                if (originFromFirstPoint) {
                    out.origin = p.timeMs;
                    originFromFirstPoint = false;
                }
                const std::int64_t x = xOf(p);
                if (x < lo || x > hi)
                    return;
                if (bucketer) {
                    ++out.pointsInRange;
                    bucketer->add(p);
                } else {
                    points.push_back(p);
                }
            });
            if (!ok) {
                s.reset();
                throw StoreError("a metric chunk of run " + std::to_string(run) + " is corrupt");
            }
        }
        s.reset();
        if (bucketer) {
            out.downsampled = true;
            out.buckets = bucketer->finish();
            out.points = flatten(out.buckets);
            return out;
        }
        out.pointsInRange = qint64(points.size());
        if (q.buckets <= 0 || out.pointsInRange <= 2 * std::int64_t(q.buckets)) {
            out.points = std::move(points);
            return out;
        }
        // A time range with more points than the plot has room for: buckets over its x extent.
        std::int64_t xMin = std::numeric_limits<std::int64_t>::max(),
                     xMax = std::numeric_limits<std::int64_t>::min();
        for (const MetricPoint &p : points) {
            xMin = std::min(xMin, xOf(p));
            xMax = std::max(xMax, xOf(p));
        }
        MinMaxBucketer byX(std::max(lo, xMin), std::min(hi, xMax), q.buckets);
        for (const MetricPoint &p : points)
            byX.add(p, xOf(p));
        out.downsampled = true;
        out.buckets = byX.finish();
        out.points = flatten(out.buckets);
        return out;
    });
}

std::optional<std::pair<qint64, qint64>> TrackingStore::seriesVersion(RunId run, const QString &key) const
{
    return d->guarded("seriesVersion", [&]() -> std::optional<std::pair<qint64, qint64>> {
        const auto keyId = d->keyId(utf8(key));
        if (!keyId)
            return std::nullopt;
        Stmt &s = d->stmt("SELECT count, step FROM latest_metrics WHERE run_id = ? AND key_id = ?");
        s.bind(1, run).bind(2, *keyId);
        std::optional<std::pair<qint64, qint64>> out;
        if (s.step())
            out = std::pair<qint64, qint64>{s.int64(0), s.int64(1)};
        s.reset();
        return out;
    });
}

std::vector<MetricPoint> TrackingStore::allPoints(RunId run, const QString &key) const
{
    return history(run, key, {}).points;
}

qint64 TrackingStore::pointCount(RunId run) const
{
    return d->guarded("pointCount", [&] {
        Stmt &s = d->stmt("SELECT coalesce(sum(count), 0) FROM latest_metrics WHERE run_id = ?");
        s.bind(1, run);
        s.step();
        const qint64 n = s.int64(0);
        s.reset();
        return n;
    });
}

}  // namespace orrery::core
