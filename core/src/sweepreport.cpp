// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/sweepreport.h"

#include "orrery/core/curves.h"
#include "orrery/core/format.h"
#include "orrery/core/metricgoal.h"
#include "orrery/core/states.h"
#include "orrery/core/version.h"

#include <QDateTime>
#include <QFileInfo>
#include <QHash>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace orrery::core {

namespace {

// Ten colours distinct on white and for the common colour blindnesses (Tableau 10).
const char *const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

QString esc(const QString &s)
{
    return s.toHtmlEscaped();
}

QString svgNumber(double v)  // an SVG coordinate
{
    return QString::number(v, 'f', 1);
}

// About `count` round tick values covering [lo, hi].
QList<double> niceTicks(double lo, double hi, int count = 5)
{
    QList<double> out;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi))
        return {lo};
    const double raw = (hi - lo) / count;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (const double f : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= f * magnitude) {
            step = f * magnitude;
            break;
        }
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
        out.append(std::abs(t) < step * 1e-9 ? 0.0 : t);
    return out;
}

struct Range {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    void add(double v)
    {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    bool valid() const { return lo <= hi; }
    Range padded() const  // as Compare draws it (core::valueAxisRange)
    {
        Range r;
        std::tie(r.lo, r.hi) = valueAxisRange(lo, hi, 0.04);
        return r;
    }
};

QString chartSvg(const ReportChart &chart, const QHash<RunId, QString> &colours,
                 const QHash<RunId, QString> &names)
{
    constexpr double kW = 560, kH = 260, kLeft = 64, kRight = 12, kTop = 10, kBottom = 34;
    Range x, y;
    for (const ReportCurve &c : chart.curves)
        for (const auto &[px, py] : c.points) {
            x.add(px);
            y.add(py);
        }
    QString svg = QStringLiteral("<svg class=\"chart\" data-metric=\"%1\" viewBox=\"0 0 %2 %3\" "
                                 "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"%1\">")
                      .arg(esc(chart.metric))
                      .arg(kW)
                      .arg(kH);
    if (!x.valid() || !y.valid())
        return svg + QStringLiteral("<text x=\"20\" y=\"40\">no points</text></svg>");
    const Range xr = x.padded(), yr = y.padded();
    auto sx = [&](double v) { return kLeft + (v - xr.lo) / (xr.hi - xr.lo) * (kW - kLeft - kRight); };
    auto sy = [&](double v) { return kH - kBottom - (v - yr.lo) / (yr.hi - yr.lo) * (kH - kTop - kBottom); };
    svg += QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" class=\"frame\"/>")
               .arg(svgNumber(kLeft), svgNumber(kTop), svgNumber(kW - kLeft - kRight),
                    svgNumber(kH - kTop - kBottom));
    for (const double t : niceTicks(yr.lo, yr.hi))
        svg += QStringLiteral("<line class=\"grid\" x1=\"%1\" x2=\"%2\" y1=\"%3\" y2=\"%3\"/>"
                              "<text class=\"tick\" x=\"%4\" y=\"%5\" text-anchor=\"end\">%6</text>")
                   .arg(svgNumber(kLeft), svgNumber(kW - kRight), svgNumber(sy(t)), svgNumber(kLeft - 4),
                        svgNumber(sy(t) + 4), esc(formatNumber(t, 4)));
    for (const double t : niceTicks(xr.lo, xr.hi))
        svg += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\" text-anchor=\"middle\">%3</text>")
                   .arg(svgNumber(sx(t)), svgNumber(kH - kBottom + 16), esc(formatNumber(t, 6)));
    svg += QStringLiteral("<text class=\"axis\" x=\"%1\" y=\"%2\" text-anchor=\"middle\">step</text>")
               .arg(svgNumber((kLeft + kW - kRight) / 2), svgNumber(kH - 4));
    for (const ReportCurve &c : chart.curves) {
        QString d;
        for (const auto &[px, py] : c.points)
            if (std::isfinite(py))
                d += QStringLiteral("%1%2,%3").arg(d.isEmpty() ? QStringLiteral("M") : QStringLiteral(" L"),
                                                   svgNumber(sx(px)), svgNumber(sy(py)));
        if (c.points.size() == 1)  // one point: a dot, not an invisible line
            svg +=
                QStringLiteral("<circle cx=\"%1\" cy=\"%2\" r=\"3\" fill=\"%3\"><title>%4</title></circle>")
                    .arg(svgNumber(sx(c.points.front().first)), svgNumber(sy(c.points.front().second)),
                         colours.value(c.run), esc(names.value(c.run)));
        else if (!d.isEmpty())
            svg += QStringLiteral("<path class=\"curve\" d=\"%1\" stroke=\"%2\"><title>%3</title></path>")
                       .arg(d, colours.value(c.run), esc(names.value(c.run)));
    }
    return svg + QStringLiteral("</svg>");
}

// One axis of the parallel coordinates: a number (log where the param is) or categories.
struct PcAxis {
    QString key;
    bool log = false, categorical = false;
    Range range;
    QStringList categories;
    std::optional<double> position(const QString &text) const  // 0 (bottom) .. 1 (top)
    {
        if (categorical) {
            const qsizetype i = categories.indexOf(text);
            if (i < 0)
                return std::nullopt;
            return categories.size() == 1 ? 0.5 : double(i) / double(categories.size() - 1);
        }
        bool ok = false;
        double v = text.toDouble(&ok);
        if (!ok || (log && v <= 0))
            return std::nullopt;
        if (log)
            v = std::log10(v);
        return range.hi > range.lo ? (v - range.lo) / (range.hi - range.lo) : 0.5;
    }
    QString label(double at) const
    {
        const double v = range.lo + at * (range.hi - range.lo);
        return formatNumber(log ? std::pow(10.0, v) : v, 3);
    }
};

QString parallelSvg(const SweepReport &r)
{
    const QString metric = r.overview.sweep.metricName;
    QList<PcAxis> axes;
    for (const SweptParam &p : r.swept) {
        PcAxis a;
        a.key = p.key;
        a.log = p.log;
        for (const ReportRun &run : r.runs) {
            bool ok = false;
            const double v = run.params.value(p.key).toDouble(&ok);
            if (!run.params.contains(p.key))
                continue;
            if (!ok || (a.log && v <= 0))
                a.categorical = true;
            if (!a.categories.contains(run.params.value(p.key)))
                a.categories.append(run.params.value(p.key));
            if (ok && !(a.log && v <= 0))
                a.range.add(a.log ? std::log10(v) : v);
        }
        if (a.categorical)
            std::sort(a.categories.begin(), a.categories.end());
        axes.append(a);
    }
    PcAxis m;
    m.key = metric;
    for (const ReportRun &run : r.runs)
        if (run.latest)
            m.range.add(*run.latest);
    if (!m.range.valid() || axes.isEmpty())
        return {};
    axes.append(m);
    constexpr double kW = 760, kH = 280, kTop = 28, kBottom = 22, kSide = 70;
    const double gap = axes.size() > 1 ? (kW - 2 * kSide) / double(axes.size() - 1) : 0;
    auto ax = [&](qsizetype i) { return kSide + double(i) * gap; };
    auto ay = [&](double at) { return kH - kBottom - at * (kH - kTop - kBottom); };
    QString svg =
        QStringLiteral("<svg class=\"parallel\" viewBox=\"0 0 %1 %2\" xmlns=\"http://www.w3.org/2000/svg\" "
                       "role=\"img\" aria-label=\"parallel coordinates\">")
            .arg(kW)
            .arg(kH);
    // Lines, coloured by the metric: the best end bright, whatever the goal.
    const bool lower = r.overview.goal() == Goal::Minimize;
    for (const ReportRun &run : r.runs) {
        if (!run.latest)
            continue;
        QString d;
        for (qsizetype i = 0; i < axes.size(); ++i) {
            const std::optional<double> at = i + 1 == axes.size()
                ? axes[i].position(QString::number(*run.latest, 'g', 17))
                : axes[i].position(run.params.value(axes[i].key));
            if (!at)
                continue;
            d += QStringLiteral("%1%2,%3").arg(d.isEmpty() ? QStringLiteral("M") : QStringLiteral(" L"),
                                               svgNumber(ax(i)), svgNumber(ay(*at)));
        }
        const double share =
            m.range.hi > m.range.lo ? (*run.latest - m.range.lo) / (m.range.hi - m.range.lo) : 1;
        const double goodness = lower ? 1 - share : share;
        // From a pale blue (worst) to a deep orange (best).
        const QString colour = QStringLiteral("rgb(%1,%2,%3)")
                                   .arg(int(120 + goodness * 110))
                                   .arg(int(170 - goodness * 90))
                                   .arg(int(220 - goodness * 190));
        svg += QStringLiteral("<path class=\"pline\" d=\"%1\" stroke=\"%2\"><title>%3: %4</title></path>")
                   .arg(d, colour, esc(run.name), esc(formatNumber(*run.latest, 4)));
    }
    for (qsizetype i = 0; i < axes.size(); ++i) {
        const PcAxis &a = axes[i];
        svg += QStringLiteral("<line class=\"axisline\" x1=\"%1\" x2=\"%1\" y1=\"%2\" y2=\"%3\"/>"
                              "<text class=\"axis\" x=\"%1\" y=\"14\" text-anchor=\"middle\">%4</text>")
                   .arg(svgNumber(ax(i)), svgNumber(kTop), svgNumber(kH - kBottom),
                        esc(a.key + (a.log ? QStringLiteral(" (log)") : QString())));
        if (a.categorical) {
            for (const QString &c : a.categories)
                svg += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\">%3</text>")
                           .arg(svgNumber(ax(i) + 4), svgNumber(ay(*a.position(c)) + 4), esc(c));
        } else {
            for (const double at : {0.0, 0.5, 1.0})
                svg += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\">%3</text>")
                           .arg(svgNumber(ax(i) + 4), svgNumber(ay(at) + 4), esc(a.label(at)));
        }
    }
    return svg + QStringLiteral("</svg>");
}

QString importanceHtml(const ImportanceResult &imp)
{
    if (!imp.ok() || imp.params.isEmpty())
        return imp.problem.isEmpty()
            ? QString()
            : QStringLiteral("<p class=\"note\">No importance: %1.</p>").arg(esc(imp.problem));
    QString out = QStringLiteral("<table class=\"importance\"><tr><th>param</th><th>importance</th>"
                                 "<th>correlation</th></tr>");
    for (const ParamImportance &p : imp.params)
        out += QStringLiteral("<tr><td>%1%2</td><td><span class=\"bar\" style=\"width:%3px\"></span> %4</td>"
                              "<td>%5</td></tr>")
                   .arg(esc(p.key), p.swept ? QStringLiteral(" ◆") : QString())
                   .arg(int(std::round(p.importance * 200)))
                   .arg(formatNumber(p.importance, 2),
                        p.correlation ? formatNumber(*p.correlation, 2) : QStringLiteral("—"));
    return out +
        QStringLiteral("</table><p class=\"note\">%1 runs with the metric; the forest's permutation "
                       "importance, and the Pearson correlation%2.</p>")
            .arg(imp.runsUsed)
            .arg(imp.runsLeftOut
                     ? QStringLiteral(" (%1 runs without the metric left out)").arg(imp.runsLeftOut)
                     : QString());
}

QString goodputHtml(const GoodputParts &g)
{
    QString out = QStringLiteral("<table class=\"goodput\"><tr><th>where the time went</th><th>hours</th>"
                                 "<th>share</th></tr>");
    for (const GoodputPart &p : labelledParts(g))
        out += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3%</td></tr>")
                   .arg(esc(p.label), formatHours(p.seconds / 3600.0))
                   .arg(g.wallS > 0 ? QString::number(100.0 * p.seconds / g.wallS, 'f', 1)
                                    : QStringLiteral("—"));
    return out + QStringLiteral("</table>");
}

const char kStyle[] =
    R"(body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.summary{display:flex;flex-wrap:wrap;gap:8px 28px;margin:10px 0}.summary div b{display:block;font-size:18px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
th{cursor:pointer;background:#fafafa}.swatch{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:6px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px}.charts figure{margin:0}
figcaption{font-weight:600;margin-bottom:2px}svg{width:100%;height:auto;background:#fff}
.frame{fill:none;stroke:#bbb}.grid{stroke:#eee}.tick{font-size:10px;fill:#555}.axis{font-size:11px;fill:#333}
.curve{fill:none;stroke-width:1.6}.pline{fill:none;stroke-width:1.4;opacity:.85}.axisline{stroke:#666}
.bar{display:inline-block;height:9px;background:#4e79a7;vertical-align:middle}.note{color:#666;font-size:12px}
.parallel{max-width:820px}.videos{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:14px}.videos video,.videos img{width:100%;background:#000}
.state-failed,.state-lost{color:#c62828}.state-completed{color:#2e7d32}.legend{margin:6px 0;font-size:12px}.legend span{margin-right:14px})";

// Sorting by a header click, and each video says when it can play (a test reads it back).
const char kScript[] =
    R"(for(const th of document.querySelectorAll('table.trials th')){th.addEventListener('click',()=>{
const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th),rows=[...t.querySelectorAll('tr')].slice(1);
const dir=th.dataset.dir==='a'?'d':'a';th.dataset.dir=dir;const key=r=>{const c=r.children[i];const v=c?c.dataset.v??c.textContent:'';const n=parseFloat(v);return isNaN(n)?v:n};
rows.sort((a,b)=>{const x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*(dir==='a'?1:-1)});for(const r of rows)t.appendChild(r)})}
for(const v of document.querySelectorAll('video')){v.addEventListener('loadeddata',()=>{v.dataset.ready='1'});
v.addEventListener('error',()=>{v.dataset.ready='error';console.error('cannot play '+v.dataset.name)});}
document.body.dataset.charts=document.querySelectorAll('svg.chart path.curve, svg.chart circle').length;)";

}  // namespace

QString mediaMimeType(const QString &path)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    static const QHash<QString, QString> types{{QStringLiteral("mp4"), QStringLiteral("video/mp4")},
                                               {QStringLiteral("webm"), QStringLiteral("video/webm")},
                                               {QStringLiteral("mov"), QStringLiteral("video/mp4")},
                                               {QStringLiteral("gif"), QStringLiteral("image/gif")},
                                               {QStringLiteral("png"), QStringLiteral("image/png")},
                                               {QStringLiteral("jpg"), QStringLiteral("image/jpeg")},
                                               {QStringLiteral("jpeg"), QStringLiteral("image/jpeg")},
                                               {QStringLiteral("webp"), QStringLiteral("image/webp")}};
    return types.value(ext);
}

SweepReport readSweepReport(const TrackingStore &store, const Sweep &sweep, const ReportOptions &options)
{
    SweepReport r;
    r.generatedMs = options.nowMs ? options.nowMs : QDateTime::currentMSecsSinceEpoch();
    OverviewOptions o;
    o.nowMs = r.generatedMs;
    o.price = options.price;
    o.goodput = true;
    r.overview = readSweepOverview(store, sweep, o);
    for (const Experiment &e : store.experiments())
        if (e.id == sweep.experimentId)
            r.experiment = e.name;
    r.swept = sweptParams(sweep, r.overview.attempts);
    QList<Params> all;
    for (const TrialSummary &t : r.overview.trials) {
        ReportRun run;
        run.run = t.trial.runId;
        run.trial = t.trial.index;
        run.state = t.trial.state;
        run.params = paramsFromJson(t.trial.params);
        run.latest = t.latest;
        run.best = t.best;
        run.step = t.step;
        run.usage = r.overview.trialUsage.value(t.trial.index);
        run.name = QStringLiteral("trial %1").arg(t.trial.index);
        if (run.run)
            if (const std::optional<Run> stored = store.run(run.run))
                run.name = stored->name;
        run.colour = QString::fromLatin1(kPalette[r.runs.size() % std::size(kPalette)]);
        all.append(run.params);
        r.runs.append(run);
    }
    r.differing = r.runs.size() == 1 ? all.front().keys() : differingParams(all);

    // The metrics charted: the sweep's first, then those most runs logged.
    QHash<QString, int> logged;
    for (const ReportRun &run : std::as_const(r.runs))
        if (run.run)
            for (const QString &key : store.metricKeys(run.run))
                ++logged[key];
    QStringList metrics = logged.keys();
    std::sort(metrics.begin(), metrics.end(), [&](const QString &a, const QString &b) {
        const bool am = a == sweep.metricName, bm = b == sweep.metricName;
        if (am != bm)
            return am;
        return logged.value(a) != logged.value(b) ? logged.value(a) > logged.value(b) : a < b;
    });
    metrics = metrics.mid(0, options.charts);
    HistoryQuery q;
    q.buckets = options.pointsPerCurve / 2;
    for (const QString &metric : std::as_const(metrics)) {
        ReportChart chart{metric, {}};
        for (const ReportRun &run : std::as_const(r.runs)) {
            if (!run.run)
                continue;
            const MetricHistory h = store.history(run.run, metric, q);
            ReportCurve c{run.run, {}};
            for (const MetricPoint &p : h.points)
                c.points.push_back({double(p.step), p.value});
            if (!c.points.empty())
                chart.curves.append(std::move(c));
        }
        r.charts.append(std::move(chart));
    }
    if (!sweep.metricName.isEmpty())
        r.importance = sweepImportance(store, sweep);

    // The best runs' newest sample video (an image where a run has no video).
    QList<const ReportRun *> ranked;
    for (const ReportRun &run : std::as_const(r.runs))
        if (run.run && run.latest && std::isfinite(*run.latest))
            ranked.append(&run);
    std::stable_sort(ranked.begin(), ranked.end(), [&](const ReportRun *a, const ReportRun *b) {
        return isBetter(*a->latest, *b->latest, sweep.metricGoal);
    });
    for (const ReportRun *run : std::as_const(ranked)) {
        if (r.media.size() >= options.videos)
            break;
        const QList<Artifact> artifacts = store.details(run->run).artifacts;
        const Artifact *pick = nullptr;
        for (const QString &kind : {QStringLiteral("video"), QStringLiteral("image")}) {
            for (const Artifact &a : artifacts)
                if (a.kind == kind && !mediaMimeType(a.path).isEmpty() && (!pick || a.step >= pick->step))
                    pick = &a;
            if (pick)
                break;
        }
        if (!pick)
            continue;
        ReportMedia m;
        m.run = run->run;
        m.runName = run->name;
        m.step = pick->step;
        m.artifact = *pick;
        m.source = !pick->localPath.isEmpty() ? pick->localPath : pick->remotePath;
        m.mime = mediaMimeType(pick->path);
        r.media.append(m);
    }
    return r;
}

QByteArray renderSweepReport(const SweepReport &r)
{
    const SweepOverview &o = r.overview;
    QHash<RunId, QString> colours, names;
    for (const ReportRun &run : r.runs) {
        colours.insert(run.run, run.colour);
        names.insert(run.run, run.name);
    }
    QString h;
    h += QStringLiteral(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
             "<meta name=\"generator\" content=\"Orrery %1\"><title>%2 — Orrery sweep report</title>"
             "<style>%3</style></head><body>\n")
             .arg(esc(version()), esc(o.sweep.name), QString::fromUtf8(kStyle));
    h +=
        QStringLiteral("<h1>%1</h1><div class=\"note\">experiment %2 · sweep %3 · %4 on %5 · written %6 by "
                       "Orrery %7</div>\n")
            .arg(esc(o.sweep.name), esc(r.experiment))
            .arg(o.sweep.id)
            .arg(esc(o.sweep.method),
                 esc(o.sweep.cluster.isEmpty() ? QStringLiteral("this machine") : o.sweep.cluster),
                 QDateTime::fromMSecsSinceEpoch(r.generatedMs).toUTC().toString(Qt::ISODate), esc(version()));

    // The answer first: state, best, cost.
    h += QStringLiteral("<div class=\"summary\">");
    auto fact = [&](const QString &label, const QString &value) {
        h += QStringLiteral("<div>%1<b>%2</b></div>").arg(esc(label), esc(value));
    };
    fact(QStringLiteral("state"), o.stateText());
    fact(QStringLiteral("trials"), o.countsLine());
    if (o.best)
        fact(QStringLiteral("best %1 (%2)").arg(o.sweep.metricName, toString(o.goal())),
             QStringLiteral("%1 — %2").arg(formatNumber(o.best->value, 5), o.best->name));
    fact(QStringLiteral("GPU-hours"), formatHours(o.usage.gpuHours));
    if (const std::optional<double> cost = o.cost())
        fact(QStringLiteral("cost"), QStringLiteral("%1 %2").arg(formatNumber(*cost, 4), o.price->currency));
    if (o.goodput && o.goodput->wallS > 0)
        fact(QStringLiteral("goodput"), QStringLiteral("%1%").arg(100 * o.goodput->goodput(), 0, 'f', 1));
    h += QStringLiteral("</div>\n");

    // The trials: the params that differ, the metric, the use.
    h +=
        QStringLiteral("<h2>Trials</h2><table class=\"trials\"><tr><th>trial</th><th>run</th><th>state</th>");
    for (const QString &k : r.differing)
        h += QStringLiteral("<th>%1</th>").arg(esc(k));
    h += QStringLiteral("<th>%1</th><th>%2 %1</th><th>step</th><th>GPU-h</th></tr>\n")
             .arg(esc(o.sweep.metricName.isEmpty() ? QStringLiteral("metric") : o.sweep.metricName),
                  esc(bestWord(o.goal())));
    for (const ReportRun &run : r.runs) {
        h += QStringLiteral("<tr><td data-v=\"%1\">%1</td><td><span class=\"swatch\" "
                            "style=\"background:%2\"></span>%3</td>"
                            "<td class=\"state-%4\">%4</td>")
                 .arg(run.trial)
                 .arg(run.colour, esc(run.name), esc(run.state));
        for (const QString &k : r.differing)
            h += QStringLiteral("<td>%1</td>").arg(esc(run.params.value(k)));
        auto value = [](const std::optional<double> &v) {
            return v ? QStringLiteral("<td data-v=\"%1\">%2</td>")
                           .arg(QString::number(*v, 'g', 17), formatNumber(*v, 5))
                     : QStringLiteral("<td></td>");
        };
        h += value(run.latest) + value(run.best);
        h += QStringLiteral("<td>%1</td><td>%2</td></tr>\n")
                 .arg(run.step >= 0 ? QString::number(run.step) : QString(), formatHours(run.usage.gpuHours));
    }
    h += QStringLiteral("</table>\n");

    if (!r.charts.isEmpty()) {
        h += QStringLiteral("<h2>Metrics</h2><div class=\"legend\">");
        for (const ReportRun &run : r.runs)
            if (run.run)
                h += QStringLiteral("<span><span class=\"swatch\" style=\"background:%1\"></span>%2</span>")
                         .arg(run.colour, esc(run.name));
        h += QStringLiteral("</div><div class=\"charts\">\n");
        for (const ReportChart &c : r.charts)
            h += QStringLiteral("<figure><figcaption>%1%2</figcaption>%3</figure>\n")
                     .arg(esc(c.metric), c.metric == o.sweep.metricName ? QStringLiteral(" ◆") : QString(),
                          chartSvg(c, colours, names));
        h += QStringLiteral("</div>\n");
    }
    if (const QString pc = parallelSvg(r); !pc.isEmpty())
        h +=
            QStringLiteral(
                "<h2>Parallel coordinates</h2>%1<p class=\"note\">Each line a trial through its swept params "
                "and its latest %2; the %3 end bright.</p>\n")
                .arg(pc, esc(o.sweep.metricName), esc(bestWord(o.goal())));
    if (const QString imp = importanceHtml(r.importance); !imp.isEmpty())
        h += QStringLiteral("<h2>Importance</h2>") + imp + QLatin1Char('\n');
    if (!r.media.isEmpty()) {
        h += QStringLiteral("<h2>Samples of the best runs</h2><div class=\"videos\">\n");
        for (const ReportMedia &m : r.media) {
            const QString caption =
                QStringLiteral("%1 · step %2 · %3").arg(esc(m.runName)).arg(m.step).arg(esc(m.artifact.path));
            if (m.data.isEmpty()) {
                h += QStringLiteral("<figure><figcaption>%1</figcaption><p class=\"note\">not embedded: "
                                    "%2</p></figure>\n")
                         .arg(caption, esc(m.why));
                continue;
            }
            const QString uri =
                QStringLiteral("data:%1;base64,%2").arg(m.mime, QString::fromLatin1(m.data.toBase64()));
            if (m.mime.startsWith(QLatin1String("video/")))
                h += QStringLiteral(
                         "<figure><figcaption>%1</figcaption><video data-name=\"%2\" controls muted loop "
                         "autoplay playsinline preload=\"auto\" src=\"%3\"></video></figure>\n")
                         .arg(caption, esc(m.artifact.path), uri);
            else
                h += QStringLiteral(
                         "<figure><figcaption>%1</figcaption><img alt=\"%2\" src=\"%3\"></figure>\n")
                         .arg(caption, esc(m.artifact.path), uri);
        }
        h += QStringLiteral("</div>\n");
    }
    if (o.goodput && o.goodput->wallS > 0)
        h += QStringLiteral("<h2>Goodput</h2>") + goodputHtml(*o.goodput) + QLatin1Char('\n');
    h += QStringLiteral("<h2>Spec</h2><pre>%1</pre>\n").arg(esc(o.sweep.spec));
    h += QStringLiteral("<script>%1</script></body></html>\n").arg(QString::fromUtf8(kScript));
    return h.toUtf8();
}

}  // namespace orrery::core
