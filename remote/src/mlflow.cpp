// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/mlflow.h"

#include "logging.h"

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QThread>
#include <QUrlQuery>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace orrery::remote {

using namespace orrery::core;

QString mlflowSafeKey(const QString &key, const MlflowLimits &limits, bool *changed)
{
    QString out;
    out.reserve(key.size());
    for (const QChar c : key) {
        const bool ok = (c.unicode() < 128 && (c.isLetterOrNumber() || c == QLatin1Char('_'))) ||
            c == QLatin1Char('-') || c == QLatin1Char('.') || c == QLatin1Char(' ') || c == QLatin1Char('/');
        out += ok ? c : QLatin1Char('_');
    }
    while (out.contains(QLatin1String("..")))
        out.replace(QLatin1String(".."), QLatin1String("._"));
    while (out.startsWith(QLatin1Char('/')))
        out.remove(0, 1);
    if (out.isEmpty())
        out = QStringLiteral("_");
    if (out.size() > limits.maxKeyLength)
        out.truncate(limits.maxKeyLength);
    if (changed)
        *changed = out != key;
    return out;
}

namespace {

class MlflowError : public std::runtime_error {
public:
    MlflowError(const QString &message, int httpStatus = 0, QString code = {})
        : std::runtime_error(message.toStdString()), status(httpStatus), errorCode(std::move(code))
    { }
    int status;
    QString errorCode;
};

// Blocking JSON calls on MLflow's REST API with retries on 429/5xx and connection errors.
class Client {
public:
    Client(const QString &url, int timeoutMs)
        : m_base(url.endsWith(QLatin1Char('/')) ? url.chopped(1) : url), m_timeoutMs(timeoutMs)
    { }

    QJsonObject get(const QString &endpoint, const QUrlQuery &query)
    {
        QUrl url(m_base + QStringLiteral("/api/2.0/mlflow/") + endpoint);
        url.setQuery(query);
        return call(url, {});
    }

    QJsonObject post(const QString &endpoint, const QJsonObject &body)
    {
        return call(QUrl(m_base + QStringLiteral("/api/2.0/mlflow/") + endpoint),
                    QJsonDocument(body).toJson(QJsonDocument::Compact));
    }

    int requests = 0;

private:
    QJsonObject call(const QUrl &url, const QByteArray &body)
    {
        if (!url.isValid() ||
            (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")))
            throw MlflowError(QStringLiteral("'%1' is not an http(s) URL").arg(m_base));
        // Backoff 0.5, 1, 2 s: MLflow behind a proxy answers 429/503 while it restarts.
        for (int attempt = 0;; ++attempt) {
            QNetworkRequest request(url);
            request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
            request.setTransferTimeout(m_timeoutMs);
            QNetworkReply *reply = body.isNull() ? m_nam.get(request) : m_nam.post(request, body);
            QEventLoop loop;
            QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            loop.exec();
            ++requests;
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            const QByteArray data = reply->readAll();
            const auto netError = reply->error();
            const QString netText = reply->errorString();
            reply->deleteLater();
            const bool transient =
                status == 429 || status >= 500 || (status == 0 && netError != QNetworkReply::NoError);
            if (transient && attempt < 3) {
                qCDebug(lcRemote) << "MLflow" << url.path() << "answered" << status << netText
                                  << "- retrying";
                QThread::msleep(500u << attempt);
                continue;
            }
            const QJsonObject json = QJsonDocument::fromJson(data).object();
            if (status == 200)
                return json;
            if (status == 0)
                throw MlflowError(QStringLiteral("cannot reach %1: %2").arg(m_base, netText));
            throw MlflowError(
                QStringLiteral("%1 answered HTTP %2: %3")
                    .arg(url.path())
                    .arg(status)
                    .arg(json.value(QLatin1String("message")).toString(QString::fromUtf8(data.left(300)))),
                status, json.value(QLatin1String("error_code")).toString());
        }
    }

    QString m_base;
    int m_timeoutMs;
    QNetworkAccessManager m_nam;
};

QJsonValue metricValue(double v)
{
    // Protobuf's JSON mapping (what MLflow's REST layer parses) spells these as strings.
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("Infinity") : QStringLiteral("-Infinity");
    return v;
}

QJsonArray keyValues(const QList<std::pair<QString, QString>> &items)
{
    QJsonArray a;
    for (const auto &[k, v] : items)
        a.append(QJsonObject{{QStringLiteral("key"), k}, {QStringLiteral("value"), v}});
    return a;
}

class Pusher {
public:
    Pusher(TrackingStore &store, const QString &url, const MlflowPushOptions &options)
        : m_store(store), m_url(url), m_options(options), m_client(url, options.timeoutMs)
    { }

    MlflowPushReport report;
    qint64 pointsDone = 0, pointsTotal = 0;

    void reportPoints() const
    {
        if (m_options.pointProgress)
            m_options.pointProgress(pointsDone, std::max(pointsTotal, pointsDone));
    }

    bool cancelled() const { return m_options.cancel && m_options.cancel(); }

    QString key(const QString &k, const RunDetails &d)
    {
        bool changed = false;
        const QString safe = mlflowSafeKey(k, m_options.limits, &changed);
        if (changed)
            note(QStringLiteral("run %1: key '%2' sent as '%3' (MLflow's name rules)")
                     .arg(d.run.id)
                     .arg(k, safe));
        return safe;
    }

    QString value(const QString &v, int limit, const QString &what, const RunDetails &d)
    {
        if (v.size() <= limit)
            return v;
        note(QStringLiteral("run %1: %2 shortened from %3 to %4 characters (MLflow's limit)")
                 .arg(d.run.id)
                 .arg(what)
                 .arg(v.size())
                 .arg(limit));
        return v.left(limit);
    }

    void note(const QString &text)
    {
        if (!report.adjustments.contains(text))
            report.adjustments.push_back(text);
    }

    QString experimentId(const QString &name)
    {
        if (auto it = m_experiments.find(name); it != m_experiments.end())
            return *it;
        QString id;
        try {
            id = m_client
                     .get(QStringLiteral("experiments/get-by-name"),
                          QUrlQuery{{QStringLiteral("experiment_name"), name}})
                     .value(QLatin1String("experiment"))
                     .toObject()
                     .value(QLatin1String("experiment_id"))
                     .toString();
        } catch (const MlflowError &e) {
            if (e.errorCode != QLatin1String("RESOURCE_DOES_NOT_EXIST"))
                throw;
        }
        if (id.isEmpty())
            id = m_client
                     .post(QStringLiteral("experiments/create"), QJsonObject{{QStringLiteral("name"), name}})
                     .value(QLatin1String("experiment_id"))
                     .toString();
        m_experiments.insert(name, id);
        return id;
    }

    // Does the server still know the run we created earlier (its database may be new)?
    bool remoteRunExists(const QString &runId)
    {
        try {
            m_client.get(QStringLiteral("runs/get"), QUrlQuery{{QStringLiteral("run_id"), runId}});
            return true;
        } catch (const MlflowError &e) {
            if (e.errorCode == QLatin1String("RESOURCE_DOES_NOT_EXIST") || e.status == 404)
                return false;
            throw;
        }
    }

    void pushRun(RunId id)
    {
        const RunDetails d = m_store.details(id);
        TrackingStore::MirrorState state = m_store.mirrorState(m_url, id);
        if (!state.remoteRunId.isEmpty() && !remoteRunExists(state.remoteRunId))
            state = {};
        const bool created = state.remoteRunId.isEmpty();
        QList<std::pair<QString, QString>> tags;
        for (auto it = d.tags.begin(); it != d.tags.end(); ++it)
            tags.push_back({key(it.key(), d),
                            value(it.value(), m_options.limits.maxTagValueLength,
                                  QStringLiteral("tag '%1'").arg(it.key()), d)});
        tags.push_back({QStringLiteral("orrery.run_uuid"), d.run.uuid});
        if (created) {
            const QJsonObject reply = m_client.post(
                QStringLiteral("runs/create"),
                QJsonObject{{QStringLiteral("experiment_id"), experimentId(d.run.experimentName)},
                            {QStringLiteral("run_name"), d.run.name},
                            {QStringLiteral("start_time"), d.run.startTimeMs}});
            state.remoteRunId = reply.value(QLatin1String("run"))
                                    .toObject()
                                    .value(QLatin1String("info"))
                                    .toObject()
                                    .value(QLatin1String("run_id"))
                                    .toString();
            if (state.remoteRunId.isEmpty())
                throw MlflowError(QStringLiteral("runs/create returned no run id"));
            m_store.saveMirrorState(m_url, id, state);
        }

        QList<std::pair<QString, QString>> params;
        if (!state.paramsSent)
            for (auto it = d.params.begin(); it != d.params.end(); ++it)
                params.push_back({key(it.key(), d),
                                  value(it.value(), m_options.limits.maxParamValueLength,
                                        QStringLiteral("param '%1'").arg(it.key()), d)});

        // Params and tags first (in batches within the limits), then metric points.
        const MlflowLimits &lim = m_options.limits;
        while (!params.isEmpty() || !tags.isEmpty()) {
            const QList<std::pair<QString, QString>> p = params.mid(0, lim.maxParamsPerBatch);
            const QList<std::pair<QString, QString>> t = tags.mid(0, lim.maxTagsPerBatch);
            params = params.mid(p.size());
            tags = tags.mid(t.size());
            logBatch(state.remoteRunId, {}, keyValues(p), keyValues(t));
            report.params += p.size();
            report.tags += t.size();
        }
        state.paramsSent = true;
        m_store.saveMirrorState(m_url, id, state);

        qint64 sent = 0;
        QJsonArray batch;
        qsizetype batchBytes = 0;
        QMap<QString, qint64> pending;  // key → last step in the current batch
        auto flush = [&] {
            if (batch.isEmpty())
                return;
            logBatch(state.remoteRunId, batch, {}, {});
            sent += batch.size();
            pointsDone += batch.size();
            for (auto it = pending.begin(); it != pending.end(); ++it)
                state.lastStep[it.key()] = it.value();
            m_store.saveMirrorState(m_url, id, state);  // a re-push after an interruption resumes here
            batch = {};
            batchBytes = 0;
            pending.clear();
            reportPoints();
        };
        for (const LatestMetric &m : d.metrics) {
            const QString remoteKey = key(m.key, d);
            const qint64 after = state.lastStep.value(m.key, std::numeric_limits<qint64>::min());
            if (m.last.step <= after) {
                pointsDone += m.count;  // all on the server already
                continue;
            }
            for (const MetricPoint &pt : m_store.allPoints(id, m.key)) {
                if (pt.step <= after) {
                    ++pointsDone;
                    continue;
                }
                const QJsonObject o{{QStringLiteral("key"), remoteKey},
                                    {QStringLiteral("value"), metricValue(pt.value)},
                                    {QStringLiteral("timestamp"), qint64(pt.timeMs)},
                                    {QStringLiteral("step"), qint64(pt.step)}};
                const qsizetype bytes = remoteKey.size() + 80;  // a point's JSON, generously
                if (batch.size() >= lim.maxMetricsPerBatch ||
                    batchBytes + bytes > lim.maxRequestBytes * 9 / 10)
                    flush();
                if (cancelled())
                    throw MlflowError(
                        QStringLiteral("cancelled (what was sent is remembered; push again to go on)"));
                batch.append(o);
                batchBytes += bytes;
                pending[m.key] = pt.step;
            }
        }
        flush();
        report.metricPoints += sent;
        reportPoints();

        if (d.run.status != RunStatus::Running && d.run.status != RunStatus::Scheduled)
            m_client.post(QStringLiteral("runs/update"),
                          QJsonObject{{QStringLiteral("run_id"), state.remoteRunId},
                                      {QStringLiteral("status"), toString(d.run.status)},
                                      {QStringLiteral("end_time"), d.run.endTimeMs}});
        ++report.runs;
        if (!created && sent == 0)
            ++report.upToDate;
        if (m_options.progress)
            m_options.progress(QStringLiteral("run %1 (%2) → MLflow run %3: %4 new points")
                                   .arg(d.run.id)
                                   .arg(d.run.name, state.remoteRunId)
                                   .arg(sent));
    }

private:
    void logBatch(const QString &runId, const QJsonArray &metrics, const QJsonArray &params,
                  const QJsonArray &tags)
    {
        QJsonObject body{{QStringLiteral("run_id"), runId}};
        if (!metrics.isEmpty())
            body.insert(QStringLiteral("metrics"), metrics);
        if (!params.isEmpty())
            body.insert(QStringLiteral("params"), params);
        if (!tags.isEmpty())
            body.insert(QStringLiteral("tags"), tags);
        m_client.post(QStringLiteral("runs/log-batch"), body);
    }

    TrackingStore &m_store;
    QString m_url;
    MlflowPushOptions m_options;
    Client m_client;
    QMap<QString, QString> m_experiments;
};

}  // namespace

MlflowPushReport pushToMlflow(TrackingStore &store, const QString &serverUrl, const QList<RunId> &runs,
                              const MlflowPushOptions &options)
{
    Pusher pusher(store, serverUrl, options);
    if (options.pointProgress)
        for (RunId id : runs)
            for (const LatestMetric &m : store.details(id).metrics)
                pusher.pointsTotal += m.count;
    try {
        for (RunId id : runs) {
            if (pusher.cancelled())
                throw MlflowError(
                    QStringLiteral("cancelled (what was sent is remembered; push again to go on)"));
            pusher.pushRun(id);
        }
    } catch (const std::exception &e) {
        pusher.report.error = QString::fromUtf8(e.what());
    }
    return pusher.report;
}

}  // namespace orrery::remote
