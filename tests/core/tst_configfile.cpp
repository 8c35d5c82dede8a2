// SPDX-License-Identifier: GPL-3.0-or-later
// Config-file sweeps (core/configfile.h): a program's YAML or JSON config with a trial's values
// set at dotted paths by editing the text, so comments, order and quoting survive; each row pins
// one case (the value replaced, a refusal with its message, a new key appended).
#include "testsupport.h"

#include "orrery/core/configfile.h"
#include "orrery/core/pyvalue.h"
#include "orrery/core/sweepplan.h"
#include "orrery/core/sweepspec.h"

#include "sweepsupport.h"

#include <QCoreApplication>
#include <QFile>
#include <QTemporaryDir>

using namespace orrery::core;

class TestConfigFile : public QObject {
    Q_OBJECT

private slots:
    void edits_data()
    {
        QTest::addColumn<bool>("json");
        QTest::addColumn<QByteArray>("base");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QVariant>("value");
        QTest::addColumn<bool>("allowNew");
        QTest::addColumn<QByteArray>("expected");  // the edited text, or empty with `error`
        QTest::addColumn<QString>("error");
        const auto yaml = [](const char *name, const QByteArray &base, const char *key, const QVariant &v,
                             const QByteArray &expected, const char *error = "", bool allowNew = false) {
            QTest::newRow(name) << false << base << QString::fromUtf8(key) << v << allowNew << expected
                                << QString::fromUtf8(error);
        };
        const auto json = [](const char *name, const QByteArray &base, const char *key, const QVariant &v,
                             const QByteArray &expected, const char *error = "", bool allowNew = false) {
            QTest::newRow(name) << true << base << QString::fromUtf8(key) << v << allowNew << expected
                                << QString::fromUtf8(error);
        };
        const QByteArray stage1 = "# stage 1 of the recipe\n"
                                  "model:\n"
                                  "  depth: 12   # layers\n"
                                  "  'head dim': 64\n"
                                  "\n"
                                  "optim:\n"
                                  "    lr: 3.0e-4  # peak\n"
                                  "    betas: [0.9, 0.95]\n"
                                  "    schedule:\n"
                                  "      - warmup\n"
                                  "      - cosine\n"
                                  "name: \"run # 1\"  # quoted, with a hash\n"
                                  "notes: |\n"
                                  "  two\n"
                                  "  lines\n"
                                  "seed: 0\n";
        yaml("nested-value-keeps-comment", stage1, "optim.lr", 1e-5,
             QByteArray(stage1).replace("lr: 3.0e-4  # peak", "lr: 1.0e-05  # peak"));
        yaml("indent-2-level", stage1, "model.depth", qint64(24),
             QByteArray(stage1).replace("depth: 12   # layers", "depth: 24   # layers"));
        yaml("quoted-key", stage1, "model.head dim", qint64(128),
             QByteArray(stage1).replace("'head dim': 64", "'head dim': 128"));
        yaml("quoted-value-with-hash", stage1, "name", QStringLiteral("b"),
             QByteArray(stage1).replace("name: \"run # 1\"  # quoted, with a hash",
                                        "name: b  # quoted, with a hash"));
        yaml("flow-list-replaced", stage1, "optim.betas", QVariantList{0.8, 0.99},
             QByteArray(stage1).replace("betas: [0.9, 0.95]", "betas: [0.8, 0.99]"));
        yaml("block-list-replaced", stage1, "optim.schedule", QVariantList{QStringLiteral("constant")},
             QByteArray(stage1).replace("schedule:\n      - warmup\n      - cosine\n",
                                        "schedule: [constant]\n"));
        yaml("block-scalar-replaced", stage1, "notes", QStringLiteral("one"),
             QByteArray(stage1).replace("notes: |\n  two\n  lines\n", "notes: one\n"));
        yaml("hostile-string-quoted", stage1, "seed", QStringLiteral("$(rm -rf ~)\n# x"),
             QByteArray(stage1).replace("seed: 0", "seed: \"$(rm -rf ~)\\n# x\""));
        yaml("bool-and-none", "a: 1\nb: 2\n", "a", true, "a: true\nb: 2\n");
        yaml("string-that-looks-like-bool-quoted", "a: 1\n", "a", QStringLiteral("on"), "a: \"on\"\n");
        yaml("dotted-key-spelt-with-dot", "optim.lr: 0.1\n", "optim.lr", 0.2, "optim.lr: 0.2\n");
        yaml("document-marker", "---\na: 1\n", "a", qint64(2), "---\na: 2\n");
        yaml("crlf", "a: 1\r\nb: 2\r\n", "b", qint64(3), "a: 1\r\nb: 3\r\n");
        yaml("missing-key", stage1, "optim.momentum", 0.9, "", "the config has no key momentum in optim");
        yaml("missing-top", stage1, "trainer", 0.9, "", "the config has no key trainer");
        yaml("section-not-value", stage1, "model", qint64(1), "", "model is a section (a mapping)");
        yaml("value-not-section", stage1, "seed.x", qint64(1), "", "seed is a value in the config");
        yaml("flow-mapping-refused", "optim: {lr: 0.1}\n", "optim.lr", 0.2, "", "optim is a flow mapping");
        yaml("list-refused", "- a\n- b\n", "a", qint64(1), "", "the file is a YAML list");
        yaml("two-documents-refused", "a: 1\n---\nb: 2\n", "a", qint64(2), "", "several YAML documents");
        yaml("new-key-appended-in-its-mapping", stage1, "optim.momentum", 0.9,
             QByteArray(stage1).replace("      - cosine\n", "      - cosine\n    momentum: 0.9\n"), "", true);
        yaml("new-section-appended", stage1, "data.size", qint64(64),
             QByteArray(stage1) + "data:\n  size: 64\n", "", true);
        yaml("new-key-under-empty-section", "optim:\nseed: 1\n", "optim.lr", 0.1,
             "optim:\n  lr: 0.1\nseed: 1\n", "", true);
        yaml("new-key-no-final-newline", "a: 1", "b", qint64(2), "a: 1\nb: 2\n", "", true);

        const QByteArray cfg = "{\n"
                               "  \"model\": {\"depth\": 12, \"width\": 512},\n"
                               "  \"optim\": {\n"
                               "    \"lr\": 0.0003,\n"
                               "    \"betas\": [0.9, 0.95]\n"
                               "  },\n"
                               "  \"name\": \"a \\\"b\\\"\"\n"
                               "}\n";
        json("json-nested", cfg, "optim.lr", 1e-5, QByteArray(cfg).replace("0.0003", "1e-05"));
        json("json-inline-object", cfg, "model.width", qint64(1024), QByteArray(cfg).replace("512", "1024"));
        json("json-string-escaped", cfg, "name", QStringLiteral("x\"y\n"),
             QByteArray(cfg).replace("\"a \\\"b\\\"\"", "\"x\\\"y\\n\""));
        json("json-list", cfg, "optim.betas", QVariantList{0.5, true},
             QByteArray(cfg).replace("[0.9, 0.95]", "[0.5, true]"));
        json("json-escaped-key", "{\"a\\\"b\": 1}", "a\"b", qint64(2), "{\"a\\\"b\": 2}");
        json("json-missing", cfg, "optim.momentum", 0.9, "", "the config has no key momentum in optim");
        json("json-object-not-value", cfg, "optim", qint64(1), "", "optim is an object");
        json("json-malformed", "{\"a\": 1,}", "a", qint64(1), "", "malformed JSON");
        json("json-not-object", "[1]", "a", qint64(1), "", "not a JSON object");
        json("json-new-key-own-line", cfg, "optim.momentum", 0.9,
             QByteArray(cfg).replace("[0.9, 0.95]\n", "[0.9, 0.95],\n    \"momentum\": 0.9\n"), "", true);
        json("json-new-key-inline", cfg, "model.heads", qint64(8),
             QByteArray(cfg).replace("\"width\": 512}", "\"width\": 512, \"heads\": 8}"), "", true);
        json("json-new-section", "{}", "data.size", qint64(64), "{\"data\": {\"size\": 64}}", "", true);
    }
    void edits()
    {
        QFETCH(bool, json);
        QFETCH(QByteArray, base);
        QFETCH(QString, key);
        QFETCH(QVariant, value);
        QFETCH(bool, allowNew);
        QFETCH(QByteArray, expected);
        QFETCH(QString, error);
        const ConfigEdit e =
            setConfigValues(base, json ? ConfigFormat::Json : ConfigFormat::Yaml, {{key, value}}, allowNew);
        if (!error.isEmpty()) {
            QVERIFY2(!e.ok(), e.text.constData());
            QVERIFY2(e.error.contains(error), qPrintable(e.error));
            QCOMPARE(e.key, key);
            return;
        }
        QVERIFY2(e.ok(), qPrintable(e.error));
        QCOMPARE(e.text, expected);
    }

    // A spec naming a config file: its paths checked at each parameter's line, each trial's copy
    // in the launch (with {{config}} and ORRERY_CONFIG_FILE naming it), Hydra-style overrides
    // through ${args_no_hyphens} beside it.
    void configFileSweep()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile base(dir.filePath(QStringLiteral("stage1.yaml")));
        QVERIFY(base.open(QIODevice::WriteOnly));
        base.write("# my recipe\noptim:\n  lr: 0.1  # peak\nmodel:\n  depth: 2\n");
        base.close();
        const QString specPath = dir.filePath(QStringLiteral("sweep.yaml"));
        const TrainerSchema schema = orrery::test::trainerSchema();
        const QByteArray spec =
            "command: [python, train.py, --config, \"{{config}}\", \"${args_no_hyphens}\"]\n"
            "config_file: {base: stage1.yaml}\n"
            "method: grid\n"
            "parameters:\n"
            "  optim.lr: {values: [0.01, 0.001]}\n"
            "  model:\n    parameters:\n      depth: {values: [4]}\n";
        const PlanLoad load = loadSubmitPlanText(spec, specPath, schema);
        QVERIFY2(load.plan,
                 load.specErrors.isEmpty() ? qPrintable(load.configError + load.readError)
                                           : qPrintable(load.specErrors.front().toString()));
        QCOMPARE(load.trials.size(), 2);
        const LaunchBatch batch = firstBatch(*load.plan, load.trials, QStringLiteral("/runs/s"));
        const TaskLaunch &t = batch.tasks[1];
        QCOMPARE(t.files.size(), 2);  // and wandb-sweep-params.yaml
        QCOMPARE(t.files[1].first, QStringLiteral("stage1.yaml"));
        QCOMPARE(t.files[1].second,
                 QByteArray("# my recipe\noptim:\n  lr: 0.001  # peak\nmodel:\n  depth: 4\n"));
        QCOMPARE(t.command.argv,
                 (QStringList{QStringLiteral("python"), QStringLiteral("train.py"),
                              QStringLiteral("--config"), QStringLiteral("/runs/s/1/stage1.yaml"),
                              QStringLiteral("optim.lr=0.001"), QStringLiteral("model={'depth': 4}")}));
        QVERIFY(t.command.env.contains(
            {QStringLiteral("ORRERY_CONFIG_FILE"), QStringLiteral("/runs/s/1/stage1.yaml")}));

        // A path the base lacks: refused at the parameter's line, unless new keys are allowed.
        const QByteArray missing = "command: [python, train.py, \"{{config}}\"]\nconfig_file: stage1.yaml\n"
                                   "method: grid\nparameters:\n  optim.lr: {values: [0.1]}\n"
                                   "  optim.momentum: {values: [0.9]}\n";
        const PlanLoad refused = loadSubmitPlanText(missing, specPath, schema);
        QVERIFY(!refused.plan);
        QCOMPARE(refused.specErrors.size(), 1);
        QCOMPARE(refused.specErrors[0].line, 6);
        QVERIFY2(
            refused.specErrors[0].message.contains(QLatin1String("the config has no key momentum in optim")),
            qPrintable(refused.specErrors[0].message));
        QByteArray allowed = missing;
        allowed.replace("config_file: stage1.yaml", "config_file: {base: stage1.yaml, allow_new_keys: true}");
        const PlanLoad added = loadSubmitPlanText(allowed, specPath, schema);
        QVERIFY(added.plan);
        const LaunchBatch b2 = firstBatch(*added.plan, added.trials, QStringLiteral("/runs/s"));
        QCOMPARE(b2.tasks[0].files[1].second,
                 QByteArray("# my recipe\noptim:\n  lr: 0.1  # peak\n  momentum: 0.9\nmodel:\n  depth: 2\n"));
        // Named by a file Orrery keeps in the run dir, or of another format: refused.
        QByteArray clash = missing;
        clash.replace("config_file: stage1.yaml", "config_file: trial.yaml");
        QVERIFY(!loadSubmitPlanText(clash, specPath, schema).plan);
        QByteArray toml = missing;
        toml.replace("config_file: stage1.yaml", "config_file: stage1.toml");
        const PlanLoad t2 = loadSubmitPlanText(toml, specPath, schema);
        QVERIFY(!t2.plan);
        QVERIFY(t2.specErrors.front().message.contains(QLatin1String("YAML (.yaml, .yml) and JSON")));
    }
};

QTEST_GUILESS_MAIN(TestConfigFile)
#include "tst_configfile.moc"
