// SPDX-License-Identifier: GPL-3.0-or-later
//
// The MLflow mirror: sends experiments, runs, params, tags and metric histories from the
// tracking store to an MLflow tracking server through its REST API (2.0 endpoints), and
// remembers in the store what was sent, so a re-push sends only what is new.
//
// Threads: pushToMlflow() blocks (it runs its own event loop for the HTTP calls); call it from
// the CLI's main thread or from a worker, never from the GUI thread.
#pragma once

#include "orrery/core/store.h"

#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::remote {

// MLflow's own limits (mlflow/utils/validation.py): a log-batch carries at most 1000 metrics,
// 100 params and 100 tags, 1000 entities in all, in at most 1 MB of JSON; names are at most 250
// characters of letters, digits, '_', '-', '.', ' ', '/' and must not contain '..' or start with
// '/'; a param value at most 6000 characters, a tag value 5000 (the smallest of the 2.x/3.x limits).
struct MlflowLimits {
    int maxMetricsPerBatch = 1000;
    int maxParamsPerBatch = 100;
    int maxTagsPerBatch = 100;
    int maxEntitiesPerBatch = 1000;
    qsizetype maxRequestBytes = 1000 * 1000;
    int maxKeyLength = 250;
    int maxParamValueLength = 6000;
    int maxTagValueLength = 5000;
};

// A name as MLflow accepts it; `changed` says whether it had to be altered.
QString mlflowSafeKey(const QString &key, const MlflowLimits &limits, bool *changed);

struct MlflowPushOptions {
    MlflowLimits limits;
    std::function<void(const QString &)> progress;  // one line per run
    // After each batch and each run: the stored points done (sent now, or sent by an earlier
    // push) out of every point of the runs asked for, for a progress bar.
    std::function<void(qint64 done, qint64 total)> pointProgress;
    std::function<bool()> cancel;  // polled between requests
    int timeoutMs = 30'000;
};

struct MlflowPushReport {
    int runs = 0;
    int upToDate = 0;
    qint64 metricPoints = 0;
    qint64 params = 0;
    qint64 tags = 0;
    QStringList adjustments;  // every key or value that had to be shortened or renamed
    QString error;  // empty on success
};

MlflowPushReport pushToMlflow(core::TrackingStore &store, const QString &serverUrl,
                              const QList<core::RunId> &runs, const MlflowPushOptions &options = {});

}  // namespace orrery::remote
