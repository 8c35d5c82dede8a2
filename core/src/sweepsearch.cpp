// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweepsearch.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace orrery::core {

namespace {

quint64 splitmix(quint64 &x)
{
    quint64 z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

quint64 rotl(quint64 x, int k)
{
    return (x << k) | (x >> (64 - k));
}

}  // namespace

SweepRng::SweepRng(quint64 seed)
{
    for (quint64 &s : m_s)
        s = splitmix(seed);
}

SweepRng SweepRng::forTrial(quint64 seed, int index)
{
    quint64 x = seed;
    const quint64 a = splitmix(x);
    return SweepRng(a ^ (quint64(index) * 0xd1b54a32d192ed03ULL));
}

quint64 SweepRng::next()
{
    const quint64 result = rotl(m_s[1] * 5, 7) * 9;
    const quint64 t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

double SweepRng::uniform()
{
    return double(next() >> 11) * 0x1.0p-53;
}

double SweepRng::normal()
{
    // Box-Muller; 1 - u keeps the logarithm finite.
    const double u = 1.0 - uniform();
    const double v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

int SweepRng::below(int n)
{
    return n <= 1 ? 0 : int(next() % quint64(n));
}

namespace {

bool isLogScale(Distribution d)
{
    return d == Distribution::LogUniform || d == Distribution::LogUniformValues ||
        d == Distribution::QLogUniform || d == Distribution::QLogUniformValues ||
        d == Distribution::LogNormal || d == Distribution::QLogNormal;
}

// W&B's inv_log_uniform: ln(1/x) is what is uniform, so that is the internal number.
bool isInverseLogScale(Distribution d)
{
    return d == Distribution::InvLogUniform || d == Distribution::InvLogUniformValues;
}

// A numeric parameter in the space TPE and sampling work in: log of the value for log
// distributions, the value itself otherwise.
struct Internal {
    double lo = 0, hi = 1;
    double priorMu = 0.5, priorSigma = 1;
};

Internal internalRange(const ParamSpec &p)
{
    Internal r;
    switch (p.distribution) {
    case Distribution::LogUniform:
    case Distribution::QLogUniform:
        r.lo = p.min;
        r.hi = p.max;
        break;
    case Distribution::LogUniformValues:
    case Distribution::QLogUniformValues:
        r.lo = std::log(p.min);
        r.hi = std::log(p.max);
        break;
    case Distribution::InvLogUniform:  // min, max bound ln(1/x) already
        r.lo = p.min;
        r.hi = p.max;
        break;
    case Distribution::InvLogUniformValues:
        r.lo = -std::log(p.max);
        r.hi = -std::log(p.min);
        break;
    case Distribution::LogNormal:
    case Distribution::QLogNormal:
        // ln(x) is normal: its mass within 3 sigma (the key's bounds apply to x, in toValue).
        r.lo = p.mu - 3 * p.sigma;
        r.hi = p.mu + 3 * p.sigma;
        r.priorMu = p.mu;
        r.priorSigma = p.sigma;
        return r;
    case Distribution::IntUniform:
        // Each integer owns [k - 0.5, k + 0.5).
        r.lo = p.min - 0.5;
        r.hi = p.max + 0.5;
        break;
    case Distribution::Normal:
    case Distribution::QNormal:
        // The normal's mass within 3 sigma, clipped to the key's own range.
        r.lo = std::max(p.mu - 3 * p.sigma, p.lowerBound);
        r.hi = std::min(p.mu + 3 * p.sigma, p.upperBound);
        if (!(r.lo < r.hi))
            r.hi = r.lo + 1e-12;
        r.priorMu = p.mu;
        r.priorSigma = p.sigma;
        return r;
    default:
        r.lo = p.min;
        r.hi = p.max;
        break;
    }
    r.priorMu = (r.lo + r.hi) / 2;
    r.priorSigma = r.hi - r.lo;
    return r;
}

// An internal-space number back to the parameter's value, typed by its key.
QVariant toValue(const ParamSpec &p, double internal)
{
    double x = isLogScale(p.distribution)   ? std::exp(internal)
        : isInverseLogScale(p.distribution) ? std::exp(-internal)
                                            : internal;
    if (isQuantized(p.distribution))
        x = std::round(x / p.q) * p.q;
    if (p.distribution == Distribution::IntUniform)
        x = std::clamp(std::round(x), p.min, p.max);
    x = std::clamp(x, p.lowerBound, p.upperBound);
    if (p.type == ConfigKey::Type::Int)
        return QVariant(qint64(std::llround(x)));
    return QVariant(x);
}

// The internal-space number of a value a trial ran with (for TPE's densities).
double toInternal(const ParamSpec &p, const QVariant &v)
{
    const double x = v.toDouble();
    if (isInverseLogScale(p.distribution))
        return -std::log(std::max(x, 1e-300));
    return isLogScale(p.distribution) ? std::log(std::max(x, 1e-300)) : x;
}

double sampleInternal(const ParamSpec &p, SweepRng &rng)
{
    const Internal r = internalRange(p);
    if (isNormal(p.distribution))  // log_normal: in ln(x), which toValue exponentiates
        return p.mu + p.sigma * rng.normal();
    return r.lo + rng.uniform() * (r.hi - r.lo);
}

int sampleCategorical(const ParamSpec &p, SweepRng &rng)
{
    if (p.probabilities.isEmpty())
        return rng.below(int(p.values.size()));
    double u = rng.uniform(), acc = 0;
    for (int i = 0; i < p.probabilities.size(); ++i) {
        acc += p.probabilities[i];
        if (u < acc)
            return i;
    }
    return int(p.values.size()) - 1;
}

}  // namespace

qint64 gridSize(const QList<ParamSpec> &space)
{
    qint64 n = 1;
    for (const ParamSpec &p : space)
        n = std::min<qint64>(n * std::max<qint64>(1, p.values.size()), qint64(1) << 40);
    return n;
}

QList<TrialParams> gridTrials(const QList<ParamSpec> &space, int runCap)
{
    const qint64 total = gridSize(space);
    const qint64 count = runCap > 0 ? std::min<qint64>(total, runCap) : total;
    QList<TrialParams> trials;
    trials.reserve(count);
    for (qint64 i = 0; i < count; ++i) {
        // Mixed-radix digits of i, the last parameter the fastest.
        TrialParams t;
        t.resize(space.size());
        qint64 rest = i;
        for (qsizetype k = space.size() - 1; k >= 0; --k) {
            const ParamSpec &p = space[k];
            const qint64 n = std::max<qint64>(1, p.values.size());
            t[k] = {p.key, p.values.value(rest % n)};
            rest /= n;
        }
        trials.append(t);
    }
    return trials;
}

TrialParams sampleRandom(const QList<ParamSpec> &space, SweepRng &rng)
{
    TrialParams t;
    for (const ParamSpec &p : space) {
        if (p.distribution == Distribution::Constant)
            t.append({p.key, p.values.value(0)});
        else if (p.distribution == Distribution::Categorical)
            t.append({p.key, p.values.value(sampleCategorical(p, rng))});
        else
            t.append({p.key, toValue(p, sampleInternal(p, rng))});
    }
    return t;
}

namespace {

// A one-dimensional Parzen estimator on [lo, hi]: a truncated Gaussian on each observation plus
// one for the prior, bandwidths from the distance to the neighbours (hyperopt's adaptive rule).
class Parzen {
public:
    Parzen(std::vector<double> obs, const Internal &r, double priorWeight) : m_lo(r.lo), m_hi(r.hi)
    {
        const double span = r.hi - r.lo;
        std::vector<double> mus = std::move(obs);
        mus.push_back(r.priorMu);
        std::vector<std::size_t> order(mus.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return mus[a] < mus[b]; });
        const double minSigma = span / std::min(100.0, 1.0 + double(mus.size()));
        m_components.resize(mus.size());
        for (std::size_t k = 0; k < order.size(); ++k) {
            const std::size_t i = order[k];
            const double left = k > 0 ? mus[i] - mus[order[k - 1]] : mus[i] - r.lo;
            const double right = k + 1 < order.size() ? mus[order[k + 1]] - mus[i] : r.hi - mus[i];
            double sigma = std::clamp(std::max(left, right), minSigma, span);
            double weight = 1.0;
            if (i == mus.size() - 1) {  // the prior
                sigma = r.priorSigma;
                weight = priorWeight;
            }
            m_components[i] = {mus[i], sigma, weight, mass(mus[i], sigma)};
            m_totalWeight += weight;
        }
    }

    double sample(SweepRng &rng) const
    {
        double u = rng.uniform() * m_totalWeight;
        const Component *c = &m_components.back();
        for (const Component &k : m_components) {
            if (u < k.weight) {
                c = &k;
                break;
            }
            u -= k.weight;
        }
        // Rejection keeps the truncation exact; the clamp is a fallback for a component whose
        // mass in range is tiny.
        for (int tries = 0; tries < 64; ++tries) {
            const double x = c->mu + c->sigma * rng.normal();
            if (x >= m_lo && x <= m_hi)
                return x;
        }
        return std::clamp(c->mu, m_lo, m_hi);
    }

    double logDensity(double x) const
    {
        double p = 0;
        for (const Component &c : m_components) {
            const double z = (x - c.mu) / c.sigma;
            p += c.weight * std::exp(-0.5 * z * z) / (c.sigma * std::sqrt(2 * std::numbers::pi) * c.mass);
        }
        return std::log(std::max(p / m_totalWeight, 1e-300));
    }

private:
    struct Component {
        double mu, sigma, weight, mass;
    };
    double mass(double mu, double sigma) const
    {
        const auto phi = [](double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); };
        return std::max(phi((m_hi - mu) / sigma) - phi((m_lo - mu) / sigma), 1e-12);
    }

    double m_lo, m_hi;
    double m_totalWeight = 0;
    std::vector<Component> m_components;
};

}  // namespace

TrialParams suggestTpe(const QList<ParamSpec> &space, const QList<FinishedTrial> &finished, Goal goal,
                       SweepRng &rng, const TpeOptions &options)
{
    if (finished.size() < std::max(1, options.startupTrials))
        return sampleRandom(space, rng);

    // Best first; NaN (a failed trial) is the worst whatever the goal.
    QList<const FinishedTrial *> sorted;
    for (const FinishedTrial &f : finished)
        sorted.append(&f);
    std::stable_sort(sorted.begin(), sorted.end(), [goal](const FinishedTrial *a, const FinishedTrial *b) {
        if (std::isnan(a->value) || std::isnan(b->value))
            return !std::isnan(a->value) && std::isnan(b->value);
        return goal == Goal::Minimize ? a->value < b->value : a->value > b->value;
    });
    const qsizetype nBelow = std::clamp<qsizetype>(
        qsizetype(std::ceil(options.gamma * double(sorted.size()))), 1, sorted.size() - 1);

    TrialParams out;
    for (const ParamSpec &p : space) {
        if (p.distribution == Distribution::Constant) {
            out.append({p.key, p.values.value(0)});
            continue;
        }
        // The values the good (below) and the other (above) trials ran with.
        std::vector<QVariant> below, above;
        for (qsizetype i = 0; i < sorted.size(); ++i) {
            for (const auto &[k, v] : sorted[i]->params)
                if (k == p.key)
                    (i < nBelow ? below : above).push_back(v);
        }
        if (p.distribution == Distribution::Categorical) {
            // Smoothed counts: prior pseudo-counts (the declared probabilities, or uniform).
            const qsizetype n = p.values.size();
            std::vector<double> l(n), g(n);
            for (qsizetype i = 0; i < n; ++i) {
                const double prior =
                    options.priorWeight * (p.probabilities.isEmpty() ? 1.0 : p.probabilities[i] * double(n));
                l[i] = g[i] = prior;
            }
            for (const QVariant &v : below)
                if (const qsizetype i = p.values.indexOf(v); i >= 0)
                    l[i] += 1;
            for (const QVariant &v : above)
                if (const qsizetype i = p.values.indexOf(v); i >= 0)
                    g[i] += 1;
            double lSum = 0, gSum = 0;
            for (qsizetype i = 0; i < n; ++i) {
                lSum += l[i];
                gSum += g[i];
            }
            qsizetype best = 0;
            double bestScore = -1e300;
            for (int c = 0; c < options.candidates; ++c) {
                double u = rng.uniform() * lSum;
                qsizetype i = 0;
                while (i + 1 < n && u >= l[i])
                    u -= l[i++];
                const double score = std::log(l[i] / lSum) - std::log(g[i] / gSum);
                if (score > bestScore) {
                    bestScore = score;
                    best = i;
                }
            }
            out.append({p.key, p.values.value(best)});
            continue;
        }
        const Internal r = internalRange(p);
        std::vector<double> lObs, gObs;
        for (const QVariant &v : below)
            lObs.push_back(std::clamp(toInternal(p, v), r.lo, r.hi));
        for (const QVariant &v : above)
            gObs.push_back(std::clamp(toInternal(p, v), r.lo, r.hi));
        const Parzen l(std::move(lObs), r, options.priorWeight);
        const Parzen g(std::move(gObs), r, options.priorWeight);
        double best = r.priorMu, bestScore = -1e300;
        for (int c = 0; c < options.candidates; ++c) {
            const double x = l.sample(rng);
            const double score = l.logDensity(x) - g.logDensity(x);
            if (score > bestScore) {
                bestScore = score;
                best = x;
            }
        }
        out.append({p.key, toValue(p, best)});
    }
    return out;
}

QList<TrialParams> initialTrials(const SweepSpec &spec)
{
    if (spec.method == SearchMethod::Grid)
        return gridTrials(spec.parameters, spec.runCap);
    const int count =
        spec.method == SearchMethod::Random ? spec.runCap : std::min(spec.runCap, spec.maxConcurrent);
    QList<TrialParams> trials;
    for (int i = 0; i < count; ++i) {
        SweepRng rng = SweepRng::forTrial(spec.seed, i);
        trials.append(spec.method == SearchMethod::Random ? sampleRandom(spec.parameters, rng)
                                                          : suggestTpe(spec.parameters, {}, spec.goal, rng));
    }
    return trials;
}

}  // namespace orrery::core
