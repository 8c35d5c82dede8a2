// SPDX-License-Identifier: GPL-3.0-or-later
#include "schema.h"

namespace orrery::core::schema {

namespace {

// Times are unix milliseconds (as MLflow). Metric names are integer ids (metric_keys). Metric
// points live in chunks of up to 256 points per (run, key), keyed by (run, key, first step) —
// never by value — and encoded by encodeChunk() (metricseries.h); a NULL min/max means the
// chunk held only NaN. latest_metrics is the last point by step of each series plus its min,
// max and count, for run lists and filters.
constexpr const char kV1[] = R"sql(
CREATE TABLE experiments (
  experiment_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  artifact_location TEXT NOT NULL DEFAULT '',
  lifecycle_stage TEXT NOT NULL DEFAULT 'active',
  creation_time INTEGER NOT NULL,
  last_update_time INTEGER NOT NULL
);
CREATE TABLE experiment_tags (
  experiment_id INTEGER NOT NULL REFERENCES experiments ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (experiment_id, key)
) WITHOUT ROWID;
CREATE TABLE runs (
  run_id INTEGER PRIMARY KEY,
  run_uuid TEXT NOT NULL UNIQUE,
  experiment_id INTEGER NOT NULL REFERENCES experiments ON DELETE CASCADE,
  name TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'RUNNING'
    CHECK (status IN ('SCHEDULED', 'RUNNING', 'FINISHED', 'FAILED', 'KILLED')),
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  lifecycle_stage TEXT NOT NULL DEFAULT 'active',
  run_dir TEXT
);
CREATE INDEX runs_by_experiment ON runs (experiment_id, start_time);
CREATE UNIQUE INDEX runs_by_dir ON runs (run_dir) WHERE run_dir IS NOT NULL;
CREATE TABLE params (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE tags (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE metric_keys (
  key_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE metric_chunks (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  key_id INTEGER NOT NULL REFERENCES metric_keys,
  first_step INTEGER NOT NULL,
  last_step INTEGER NOT NULL,
  count INTEGER NOT NULL,
  min_value REAL,
  max_value REAL,
  points BLOB NOT NULL,
  PRIMARY KEY (run_id, key_id, first_step)
) WITHOUT ROWID;
CREATE TABLE latest_metrics (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  key_id INTEGER NOT NULL REFERENCES metric_keys,
  step INTEGER NOT NULL,
  time INTEGER NOT NULL,
  value REAL,
  min_value REAL,
  max_value REAL,
  count INTEGER NOT NULL,
  PRIMARY KEY (run_id, key_id)
) WITHOUT ROWID;
CREATE TABLE ingest_offsets (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  file TEXT NOT NULL,
  offset INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  malformed INTEGER NOT NULL,
  last_step INTEGER NOT NULL DEFAULT 0,
  updated INTEGER NOT NULL,
  PRIMARY KEY (run_id, file)
) WITHOUT ROWID;
)sql";

// Orrery's own: sweeps, their trials (one row per attempt) and run artifacts.
constexpr const char kV2[] = R"sql(
CREATE TABLE sweeps (
  sweep_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  experiment_id INTEGER NOT NULL REFERENCES experiments ON DELETE CASCADE,
  spec TEXT NOT NULL,
  method TEXT NOT NULL,
  metric_name TEXT NOT NULL DEFAULT '',
  metric_goal TEXT NOT NULL DEFAULT 'minimize' CHECK (metric_goal IN ('minimize', 'maximize')),
  cluster TEXT NOT NULL DEFAULT '',
  array_job_id TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'pending',
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL
);
CREATE INDEX sweeps_by_name ON sweeps (name);
CREATE TABLE trials (
  trial_id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps ON DELETE CASCADE,
  trial_index INTEGER NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  run_id INTEGER REFERENCES runs ON DELETE SET NULL,
  slurm_job_id TEXT NOT NULL DEFAULT '',
  slurm_task_id TEXT NOT NULL DEFAULT '',
  run_dir TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'pending',
  exit_reason TEXT NOT NULL DEFAULT '',
  UNIQUE (sweep_id, trial_index, attempt)
);
CREATE INDEX trials_by_run ON trials (run_id);
CREATE TABLE artifacts (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  path TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT '',
  step INTEGER NOT NULL DEFAULT -1,
  remote_path TEXT NOT NULL DEFAULT '',
  local_path TEXT NOT NULL DEFAULT '',
  size INTEGER NOT NULL DEFAULT -1,
  created INTEGER NOT NULL,
  PRIMARY KEY (run_id, path)
) WITHOUT ROWID;
)sql";

// What has been sent to which MLflow server, so a re-push sends only what is new.
constexpr const char kV3[] = R"sql(
CREATE TABLE mlflow_mirror (
  server TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  remote_run_id TEXT NOT NULL,
  params_sent INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (server, run_id)
) WITHOUT ROWID;
CREATE TABLE mlflow_mirror_metrics (
  server TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  key_id INTEGER NOT NULL REFERENCES metric_keys,
  last_step INTEGER NOT NULL,
  PRIMARY KEY (server, run_id, key_id)
) WITHOUT ROWID;
)sql";

// Every run's latest metrics in one row (encoded in store.cpp): a list of 10,000 runs reads
// 10,000 rows instead of 200,000 latest_metrics rows (46 ms of SQLite stepping alone, measured).
// latest_metrics stays the queryable truth; run_latest is derived from it in the same
// transactions.
constexpr const char kV4[] = R"sql(
CREATE TABLE run_latest (
  run_id INTEGER PRIMARY KEY REFERENCES runs ON DELETE CASCADE,
  metrics BLOB NOT NULL
);
)sql";

// What the sweep runner needs to re-attach to a sweep from the store alone (docs/sweeps.md):
// where the sweep lives, the base config it was rendered from, and per attempt the trial's
// params and exact config, the executor's task id and what the executor last said.
constexpr const char kV5[] = R"sql(
ALTER TABLE sweeps ADD COLUMN spec_file TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN base_config TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN root_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN trial_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sweeps ADD COLUMN message TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
ALTER TABLE trials ADD COLUMN config TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN task TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN detail TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN submitted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN ended INTEGER NOT NULL DEFAULT 0;
CREATE INDEX trials_active ON trials (state)
  WHERE state IN ('queued', 'running', 'stopping', 'cancelling');
)sql";

// One follower acts on a sweep at a time (docs/sweeps.md "One follower acts"): the lease on a
// sweep, taken and renewed inside a write transaction. `holder` is the follower's id
// ("host:pid:random"), `acquired` when this holder's unbroken hold began (a fencing token: a
// follower whose lease lapsed and was taken in between sees it change), `expires` when anyone
// may take it over (unix ms, this machine's clock).
constexpr const char kV6[] = R"sql(
CREATE TABLE sweep_leases (
  sweep_id INTEGER PRIMARY KEY REFERENCES sweeps ON DELETE CASCADE,
  holder TEXT NOT NULL,
  acquired INTEGER NOT NULL,
  expires INTEGER NOT NULL
);
)sql";

// Who launched an attempt: 1 when a user retried the trial (SweepRunner::retryTrial), 0 when the
// runner did. The runner's retry budget counts from a trial's latest user retry, and early
// stopping leaves a trial a user retried alone (docs/sweeps.md "Acting on one trial").
constexpr const char kV7[] = R"sql(
ALTER TABLE trials ADD COLUMN user_retry INTEGER NOT NULL DEFAULT 0;
)sql";

// What an attempt held and for how long (docs/sweeps.md "GPU-hours and cost"): `started` is when
// the executor first reported it running (unix ms; 0: never seen running), `gpus` and `cpus` what
// it was allocated (all its nodes together), from which GPU- and CPU-hours are counted.
constexpr const char kV8[] = R"sql(
ALTER TABLE trials ADD COLUMN started INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN cpus INTEGER NOT NULL DEFAULT 0;
)sql";

// Where each trainer process of a run spent its time (docs/store.md, goodput.h): one row per
// process, keyed by its start (unix ms, the trainer's clock; the attempts of a trial share a run),
// holding its newest cumulative `phases` event: a killed process keeps what it last wrote.
constexpr const char kV9[] = R"sql(
CREATE TABLE run_phases (
  run_id INTEGER NOT NULL REFERENCES runs ON DELETE CASCADE,
  process_start INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  step INTEGER NOT NULL,
  resume_step INTEGER NOT NULL,
  checkpoint_step INTEGER NOT NULL,
  startup_s REAL NOT NULL,
  train_s REAL NOT NULL,
  checkpoint_s REAL NOT NULL,
  eval_s REAL NOT NULL,
  sample_s REAL NOT NULL,
  other_s REAL NOT NULL,
  PRIMARY KEY (run_id, process_start)
) WITHOUT ROWID;
)sql";

// Resilient sweeps (docs/sweeps.md "Resilient sweeps"). Per attempt: the nodes it ran on (Slurm's
// NodeList expanded, comma-separated; '' unknown), its health check's verdict per node (JSON, ''
// none), the last time it was seen making progress (unix ms, this machine's clock; 0 none yet) and,
// while queued, Slurm's expected start (unix ms; 0 unknown). Per cluster, the nodes Orrery keeps out
// of new submissions (`orrery cluster nodes --suspect`): why, since and until when, and who said so
// ("health", "node-fail", "user", ...).
constexpr const char kV10[] = R"sql(
ALTER TABLE trials ADD COLUMN nodes TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN health TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN progress INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN expected_start INTEGER NOT NULL DEFAULT 0;
CREATE TABLE suspect_nodes (
  cluster TEXT NOT NULL,
  node TEXT NOT NULL,
  reason TEXT NOT NULL,
  source TEXT NOT NULL,
  since INTEGER NOT NULL,
  expires INTEGER NOT NULL,
  PRIMARY KEY (cluster, node)
) WITHOUT ROWID;
)sql";

// Params and tags by key: the param keys of a database (the Runs table's columns, paramKeys())
// and one key's values of every run were each a scan of every row (1.2M param rows at 100,000
// runs: 0.4 s per scan, bench_runs_scale); by this index each is a seek per key.
constexpr const char kV11[] = R"sql(
CREATE INDEX params_by_key ON params (key);
CREATE INDEX tags_by_key ON tags (key);
)sql";
}  // namespace

void backfillRunLatest(sqlite3 *db);  // store.cpp

namespace {
constexpr Migration kMigrations[] = {{1, kV1}, {2, kV2},   {3, kV3},  {4, kV4, backfillRunLatest},
                                     {5, kV5}, {6, kV6},   {7, kV7},  {8, kV8},
                                     {9, kV9}, {10, kV10}, {11, kV11}};
}  // namespace

std::span<const Migration> migrations()
{
    return kMigrations;
}

}  // namespace orrery::core::schema
