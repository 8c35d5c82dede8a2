// SPDX-License-Identifier: GPL-3.0-or-later
//
// Parameter importance (importance.h): a Pearson correlation per param and a small seeded random
// forest whose out-of-bag permutation importance says how much each param explains the metric.
#include "orrery/core/importance.h"

#include "orrery/core/store.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace orrery::core {

namespace {

// The forest's input: one row per run, one column per param (numbers; categories by rank).
struct Table {
    std::vector<std::vector<double>> x;  // [run][param]
    std::vector<double> y;
};

// A regression tree grown to the options' depth; nodes in one vector, children by index.
class Tree {
public:
    Tree(const Table &t, const ImportanceOptions &o) : m_t(t), m_o(o) { }

    void grow(std::vector<int> rows) { split(std::move(rows), 0); }

    double predict(const std::vector<double> &x) const
    {
        int n = 0;
        while (m_nodes[size_t(n)].feature >= 0) {
            const Node &node = m_nodes[size_t(n)];
            n = x[size_t(node.feature)] <= node.threshold ? node.left : node.right;
        }
        return m_nodes[size_t(n)].value;
    }

private:
    struct Node {
        int feature = -1;  // -1: a leaf
        double threshold = 0, value = 0;
        int left = -1, right = -1;
    };

    int split(std::vector<int> rows, int depth)
    {
        const int self = int(m_nodes.size());
        m_nodes.push_back({});
        double sum = 0;
        for (int r : rows)
            sum += m_t.y[size_t(r)];
        const double n = double(rows.size());
        m_nodes[size_t(self)].value = sum / n;
        if (depth >= m_o.maxDepth || rows.size() < size_t(2 * m_o.minLeaf))
            return self;
        // The best threshold of every param: the largest drop of the squared error, found by one
        // scan of the rows sorted by that param with running sums.
        const size_t params = m_t.x.empty() ? 0 : m_t.x.front().size();
        double bestGain = 1e-12 * std::max(1.0, sum * sum / n);
        int bestFeature = -1;
        double bestThreshold = 0;
        std::vector<int> sorted = rows;
        for (size_t f = 0; f < params; ++f) {
            std::sort(sorted.begin(), sorted.end(),
                      [&](int a, int b) { return m_t.x[size_t(a)][f] < m_t.x[size_t(b)][f]; });
            double left = 0;
            for (size_t k = 1; k < sorted.size(); ++k) {
                left += m_t.y[size_t(sorted[k - 1])];
                const double xa = m_t.x[size_t(sorted[k - 1])][f], xb = m_t.x[size_t(sorted[k])][f];
                if (xa == xb || k < size_t(m_o.minLeaf) || sorted.size() - k < size_t(m_o.minLeaf))
                    continue;
                const double nl = double(k), nr = n - nl, right = sum - left;
                const double gain = left * left / nl + right * right / nr - sum * sum / n;
                if (gain > bestGain) {
                    bestGain = gain;
                    bestFeature = int(f);
                    bestThreshold = (xa + xb) / 2;
                }
            }
        }
        if (bestFeature < 0)
            return self;
        std::vector<int> lo, hi;
        for (int r : rows)
            (m_t.x[size_t(r)][size_t(bestFeature)] <= bestThreshold ? lo : hi).push_back(r);
        rows = {};
        const int left = split(std::move(lo), depth + 1);
        const int right = split(std::move(hi), depth + 1);
        Node &node = m_nodes[size_t(self)];
        node.feature = bestFeature;
        node.threshold = bestThreshold;
        node.left = left;
        node.right = right;
        return self;
    }

    const Table &m_t;
    const ImportanceOptions &m_o;
    std::vector<Node> m_nodes;
};

// A number of a param's text, or nullopt (text, or not finite).
std::optional<double> number(const QString &text)
{
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::optional<double> pearson(const std::vector<double> &x, const std::vector<double> &y)
{
    const size_t n = x.size();
    if (n < 2)
        return std::nullopt;
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / double(n);
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / double(n);
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0 || syy <= 0)
        return std::nullopt;
    return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

// Fisher-Yates with the forest's generator: the same order on every platform (std::shuffle's
// and the distributions' algorithms are the library's choice).
void shuffle(std::vector<double> &v, std::mt19937_64 &rng)
{
    for (size_t i = v.size(); i > 1; --i)
        std::swap(v[i - 1], v[size_t(rng() % i)]);
}

// The params the forest sees: the swept ones, then the others that are numbers and vary.
QList<ParamImportance> chooseParams(const QList<const ImportanceRun *> &runs, const QList<SweptParam> &swept)
{
    QList<ParamImportance> out;
    QSet<QString> taken;
    for (const SweptParam &s : swept) {
        ParamImportance p;
        p.key = s.key;
        p.swept = true;
        p.log = s.log;
        for (const ImportanceRun *r : runs) {
            const auto it = r->params.constFind(s.key);
            if (it != r->params.cend() && !number(*it))
                p.categorical = true;
        }
        p.log = p.log && !p.categorical;
        out.push_back(p);
        taken.insert(s.key);
    }
    QMap<QString, QList<double>> values;  // sorted keys: a stable order for equal importances
    QSet<QString> textual;
    for (const ImportanceRun *r : runs)
        for (auto it = r->params.cbegin(); it != r->params.cend(); ++it) {
            if (taken.contains(it.key()) || textual.contains(it.key()))
                continue;
            if (const auto v = number(*it))
                values[it.key()].push_back(*v);
            else
                textual.insert(it.key());
        }
    for (auto it = values.cbegin(); it != values.cend(); ++it) {
        if (textual.contains(it.key()))
            continue;
        const auto [lo, hi] = std::minmax_element(it->begin(), it->end());
        if (*lo == *hi)
            continue;  // a constant explains nothing
        ParamImportance p;
        p.key = it.key();
        p.log = *lo > 0 && *hi / *lo >= 10;
        out.push_back(p);
    }
    return out;
}

}  // namespace

ImportanceResult paramImportance(const QList<ImportanceRun> &all, const QList<SweptParam> &swept,
                                 const ImportanceOptions &o)
{
    ImportanceResult result;
    QList<const ImportanceRun *> runs;
    for (const ImportanceRun &r : all)
        if (std::isfinite(r.metric))
            runs.push_back(&r);
    result.runsUsed = int(runs.size());
    result.runsLeftOut = int(all.size() - runs.size());
    if (runs.size() < std::max(2, o.minRuns)) {
        result.problem = QStringLiteral("not enough runs: %1 with the metric, at least %2 needed")
                             .arg(runs.size())
                             .arg(std::max(2, o.minRuns));
        return result;
    }
    result.params = chooseParams(runs, swept);
    if (result.params.isEmpty()) {
        result.problem = QStringLiteral("no param varies among the %1 runs").arg(runs.size());
        return result;
    }

    // The table, and each param's correlation on the way.
    Table t;
    const size_t n = size_t(runs.size()), p = size_t(result.params.size());
    t.y.reserve(n);
    for (const ImportanceRun *r : runs)
        t.y.push_back(r->metric);
    t.x.assign(n, std::vector<double>(p, 0.0));
    for (size_t f = 0; f < p; ++f) {
        ParamImportance &param = result.params[qsizetype(f)];
        if (param.categorical) {
            // Categories ranked by their mean metric: a threshold on the rank is the best split
            // of the categories into two sets.
            QHash<QString, std::pair<double, int>> means;
            for (const ImportanceRun *r : runs) {
                auto &[sum, count] = means[r->params.value(param.key)];
                sum += r->metric;
                ++count;
                param.runs += r->params.contains(param.key) ? 1 : 0;
            }
            QStringList order = means.keys();
            std::sort(order.begin(), order.end(), [&](const QString &a, const QString &b) {
                const double ma = means[a].first / means[a].second, mb = means[b].first / means[b].second;
                return ma != mb ? ma < mb : a < b;
            });
            for (size_t i = 0; i < n; ++i)
                t.x[i][f] = double(order.indexOf(runs[qsizetype(i)]->params.value(param.key)));
            continue;
        }
        std::vector<double> xs, ys;
        std::vector<bool> has(n, false);
        for (size_t i = 0; i < n; ++i) {
            auto v = number(runs[qsizetype(i)]->params.value(param.key));
            if (!v || (param.log && *v <= 0))
                continue;
            t.x[i][f] = param.log ? std::log10(*v) : *v;
            has[i] = true;
            xs.push_back(t.x[i][f]);
            ys.push_back(t.y[i]);
        }
        param.runs = int(xs.size());
        param.correlation = pearson(xs, ys);
        if (xs.size() < n) {  // the runs without it take the median
            std::vector<double> sorted = xs;
            std::sort(sorted.begin(), sorted.end());
            const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
            for (size_t i = 0; i < n; ++i)
                if (!has[i])
                    t.x[i][f] = median;
        }
    }

    // The forest, and each param's permutation importance on every tree's out-of-bag runs.
    std::mt19937_64 rng(o.seed);
    std::vector<double> rise(p, 0.0);
    const size_t draws = std::min(n, size_t(std::max(o.maxSamples, 2)));
    for (int tree = 0; tree < o.trees; ++tree) {
        std::vector<int> bag(draws);
        std::vector<bool> inBag(n, false);
        for (int &r : bag) {
            r = int(rng() % n);
            inBag[size_t(r)] = true;
        }
        std::vector<int> oob;
        for (size_t i = 0; i < n && oob.size() < draws; ++i)
            if (!inBag[i])
                oob.push_back(int(i));
        if (oob.size() < 2)
            continue;  // nothing to measure on (a tiny sweep's unlucky draw)
        Tree model(t, o);
        model.grow(std::move(bag));
        double base = 0;
        for (int r : oob) {
            const double e = model.predict(t.x[size_t(r)]) - t.y[size_t(r)];
            base += e * e;
        }
        std::vector<double> column(oob.size()), row;
        for (size_t f = 0; f < p; ++f) {
            for (size_t k = 0; k < oob.size(); ++k)
                column[k] = t.x[size_t(oob[k])][f];
            shuffle(column, rng);
            double err = 0;
            for (size_t k = 0; k < oob.size(); ++k) {
                row = t.x[size_t(oob[k])];
                row[f] = column[k];
                const double e = model.predict(row) - t.y[size_t(oob[k])];
                err += e * e;
            }
            rise[f] += (err - base) / double(oob.size());
        }
    }
    double total = 0;
    for (double &r : rise) {
        r = std::max(0.0, r);  // a param the trees do not use can only lose by chance
        total += r;
    }
    for (size_t f = 0; f < p; ++f)
        result.params[qsizetype(f)].importance = total > 0 ? rise[f] / total : 0.0;
    std::stable_sort(result.params.begin(), result.params.end(),
                     [](const ParamImportance &a, const ParamImportance &b) {
                         if (a.importance != b.importance)
                             return a.importance > b.importance;
                         return std::abs(a.correlation.value_or(0)) > std::abs(b.correlation.value_or(0));
                     });
    return result;
}

ImportanceResult sweepImportance(const TrackingStore &store, const Sweep &sweep, const ImportanceOptions &o)
{
    if (sweep.metricName.isEmpty()) {
        ImportanceResult r;
        r.problem = QStringLiteral("sweep %1 names no metric").arg(sweep.name);
        return r;
    }
    RunQuery q;
    q.sweep = sweep.id;
    q.params = store.paramKeys();
    QList<ImportanceRun> runs;
    for (const RunRow &row : store.queryRuns(q)) {
        const LatestMetric *m = row.metric(sweep.metricName);
        runs.push_back({row.params, m ? m->last.value : std::nan("")});
    }
    ImportanceResult r = paramImportance(runs, sweptParams(sweep, store.trials(sweep.id)), o);
    if (!r.ok() && r.runsUsed < o.minRuns)
        r.problem = QStringLiteral("not enough runs: %1 of %2 have logged %3, at least %4 are needed")
                        .arg(r.runsUsed)
                        .arg(r.runsUsed + r.runsLeftOut)
                        .arg(sweep.metricName)
                        .arg(std::max(2, o.minRuns));
    return r;
}

}  // namespace orrery::core
