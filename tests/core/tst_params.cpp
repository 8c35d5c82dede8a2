// SPDX-License-Identifier: GPL-3.0-or-later
// What every face shows the same way: the params that differ between runs (core/params.h) and
// metric values with NaN and infinities (core/format.h).
#include "testsupport.h"

#include "orrery/core/format.h"
#include "orrery/core/params.h"
#include "orrery/core/store.h"

#include <QCoreApplication>

#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <limits>

using namespace orrery::core;

class TestParams : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void onlyTheKeysThatDifferSorted()
    {
        const QList<Params> runs{{{QStringLiteral("optim.lr"), QStringLiteral("0.001")},
                                  {QStringLiteral("seed"), QStringLiteral("7")},
                                  {QStringLiteral("model.channels"), QStringLiteral("32")}},
                                 {{QStringLiteral("optim.lr"), QStringLiteral("0.01")},
                                  {QStringLiteral("seed"), QStringLiteral("7")},
                                  {QStringLiteral("model.channels"), QStringLiteral("64")}}};
        QCOMPARE(differingParams(runs),
                 (QStringList{QStringLiteral("model.channels"), QStringLiteral("optim.lr")}));
    }

    void aKeyOneRunLacksDiffers()
    {
        const QList<Params> runs{
            {{QStringLiteral("seed"), QStringLiteral("7")}},
            {{QStringLiteral("seed"), QStringLiteral("7")}, {QStringLiteral("ema"), QStringLiteral("0.9")}}};
        QCOMPARE(differingParams(runs), QStringList{QStringLiteral("ema")});
    }

    void runsWithoutParamsTakeNoPart()
    {
        const Params a{{QStringLiteral("seed"), QStringLiteral("7")}};
        QCOMPARE(differingParams({a, Params{}, a}), QStringList());
        QCOMPARE(differingParams({a}), QStringList());  // one run: nothing to differ from
        QCOMPARE(differingParams({}), QStringList());
    }

    // A sweep's swept parameters come from its spec, in its order, constants left out, log where
    // the distribution or the values' span says so; W&B's nested groups as dotted keys.
    void sweptParamsFromTheSpec()
    {
        Sweep sweep;
        sweep.spec = QStringLiteral(R"(name: s
method: random
metric: {name: eval/loss, goal: minimize}
parameters:
  optim.lr: {distribution: log_uniform_values, min: 1.0e-4, max: 1.0e-2}
  model.channels: {values: [32, 64]}
  train.steps: {value: 100}
  data.size: {values: [32]}
  train.batch: {values: [8, 16, 128]}
  optim.warmup: {distribution: int_uniform, min: 0, max: 50}
  seed: 3
  optimizer:
    parameters:
      beta1: {values: [0.8, 0.9]}
)");
        const QList<SweptParam> swept = sweptParams(sweep, {});
        const QList<SweptParam> want = {{QStringLiteral("optim.lr"), true},
                                        {QStringLiteral("model.channels"), false},
                                        {QStringLiteral("train.batch"), true},
                                        {QStringLiteral("optim.warmup"), false},
                                        {QStringLiteral("optimizer.beta1"), false}};
        QCOMPARE(swept, want);
        QCOMPARE(keysOf(swept),
                 (QStringList{QStringLiteral("optim.lr"), QStringLiteral("model.channels"),
                              QStringLiteral("train.batch"), QStringLiteral("optim.warmup"),
                              QStringLiteral("optimizer.beta1")}));
    }

    // A spec that cannot be read: the keys the trials' params differ in.
    void sweptParamsFallBackOnTheTrials()
    {
        Sweep sweep;
        sweep.spec = QStringLiteral("parameters: [unclosed");
        QList<Trial> trials(3);
        const QList<QJsonObject> params = {{{QStringLiteral("a"), 1}, {QStringLiteral("b"), 2}},
                                           {{QStringLiteral("a"), 1}, {QStringLiteral("b"), 3}},
                                           {{QStringLiteral("a"), 1}, {QStringLiteral("c"), 0}}};
        for (int i = 0; i < 3; ++i)
            trials[i].params = QString::fromUtf8(QJsonDocument(params[i]).toJson(QJsonDocument::Compact));
        QCOMPARE(keysOf(sweptParams(sweep, trials)), (QStringList{QStringLiteral("b"), QStringLiteral("c")}));
    }

    void trialParamsFromJson()
    {
        const Params p =
            paramsFromJson(QStringLiteral(R"({"optim.lr": 0.0003, "seed": 7, "data.kind": "folder"})"));
        QCOMPARE(p.value(QStringLiteral("optim.lr")), QStringLiteral("0.0003"));
        QCOMPARE(p.value(QStringLiteral("seed")), QStringLiteral("7"));
        QCOMPARE(p.value(QStringLiteral("data.kind")), QStringLiteral("folder"));
        QVERIFY(paramsFromJson(QStringLiteral("not json")).isEmpty());
    }

    void numbersNaNAndInfinities()
    {
        const double inf = std::numeric_limits<double>::infinity();
        QCOMPARE(formatNumber(std::nan("")), QStringLiteral("nan"));
        QCOMPARE(formatNumber(inf), QStringLiteral("inf"));
        QCOMPARE(formatNumber(-inf), QStringLiteral("-inf"));
        QCOMPARE(formatNumber(0.123456789), QStringLiteral("0.123457"));
        QCOMPARE(formatNumber(0.123456789, 4), QStringLiteral("0.1235"));
        QCOMPARE(jsonNumber(0.5), QJsonValue(0.5));
        QCOMPARE(jsonNumber(-inf), QJsonValue(QStringLiteral("-inf")));
        QCOMPARE(jsonNumber(std::nan("")), QJsonValue(QStringLiteral("nan")));
    }
};

ORRERY_TEST_MAIN(TestParams, QCoreApplication)
#include "tst_params.moc"
