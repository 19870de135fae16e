-- db/migrations/0003-work-bucket.sql -- version 2 -> 3.
-- Adds work_bucket (batch * heads_kv rounded up to a power of two) to the
-- problem key of winners and trials, so that decode winners are not shared
-- across batch sizes that want other splits.  Rows from version 2 get
-- work_bucket 0, "any work size": lookup still uses them, after a row of
-- the exact size.  SQLite cannot change a primary key in place, so both
-- tables are rebuilt with the column where db/schema.sql has it (after
-- seqlen_k_bucket), their rows copied (trial ids kept), and the indexes
-- made again.
CREATE TABLE winners_v3 (
    device_id       INTEGER NOT NULL REFERENCES devices(id),
    family          INTEGER NOT NULL,        -- 80, 90, 100
    source_hash     TEXT NOT NULL,           -- jit_source_hash(family)
    dtype           INTEGER NOT NULL,
    head_dim_qk     INTEGER NOT NULL,
    head_dim_v      INTEGER NOT NULL,
    gqa_group       INTEGER NOT NULL,
    causal          INTEGER NOT NULL,
    window_left     INTEGER NOT NULL,
    window_right    INTEGER NOT NULL,
    varlen          INTEGER NOT NULL,
    paged           INTEGER NOT NULL,
    page_size       INTEGER NOT NULL,
    seqlen_q_bucket INTEGER NOT NULL,
    seqlen_k_bucket INTEGER NOT NULL,
    work_bucket     INTEGER NOT NULL DEFAULT 0,  -- since version 3
    config          TEXT NOT NULL,           -- fa4_config_format() text
    median_ms       REAL,
    tflops          REAL,
    updated_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    library_version TEXT NOT NULL DEFAULT '',  -- since version 2
    PRIMARY KEY (device_id, family, source_hash, dtype, head_dim_qk,
                 head_dim_v, gqa_group, causal, window_left, window_right,
                 varlen, paged, page_size, seqlen_q_bucket, seqlen_k_bucket,
                 work_bucket)
) WITHOUT ROWID;
INSERT INTO winners_v3 (
    device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, config, median_ms, tflops, updated_at,
    library_version)
SELECT
    device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, config, median_ms, tflops, updated_at,
    library_version
FROM winners;
DROP TABLE winners;
ALTER TABLE winners_v3 RENAME TO winners;

CREATE TABLE trials_v3 (
    id              INTEGER PRIMARY KEY,
    device_id       INTEGER NOT NULL REFERENCES devices(id),
    family          INTEGER NOT NULL,
    source_hash     TEXT NOT NULL,
    dtype           INTEGER NOT NULL,
    head_dim_qk     INTEGER NOT NULL,
    head_dim_v      INTEGER NOT NULL,
    gqa_group       INTEGER NOT NULL,
    causal          INTEGER NOT NULL,
    window_left     INTEGER NOT NULL,
    window_right    INTEGER NOT NULL,
    varlen          INTEGER NOT NULL,
    paged           INTEGER NOT NULL,
    page_size       INTEGER NOT NULL,
    seqlen_q_bucket INTEGER NOT NULL,
    seqlen_k_bucket INTEGER NOT NULL,
    work_bucket     INTEGER NOT NULL DEFAULT 0,  -- since version 3
    batch           INTEGER NOT NULL,
    heads_q         INTEGER NOT NULL,
    seqlen_q        INTEGER NOT NULL,
    seqlen_k        INTEGER NOT NULL,
    config          TEXT NOT NULL,
    ok              INTEGER NOT NULL,
    failure         TEXT,                    -- NULL when ok
    median_ms       REAL,
    min_ms          REAL,
    max_ms          REAL,
    reps            INTEGER,
    tflops          REAL,
    max_rel_err     REAL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    library_version TEXT NOT NULL DEFAULT ''   -- since version 2
);
INSERT INTO trials_v3 (
    id, device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, batch, heads_q, seqlen_q, seqlen_k,
    config, ok, failure, median_ms, min_ms, max_ms, reps, tflops,
    max_rel_err, created_at, library_version)
SELECT
    id, device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, batch, heads_q, seqlen_q, seqlen_k,
    config, ok, failure, median_ms, min_ms, max_ms, reps, tflops,
    max_rel_err, created_at, library_version
FROM trials;
DROP TABLE trials;
ALTER TABLE trials_v3 RENAME TO trials;

-- The indexes went with the old tables.
CREATE INDEX winners_by_features ON winners (dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size);
CREATE INDEX trials_by_device ON trials (device_id, family, dtype,
    head_dim_qk, seqlen_q_bucket, seqlen_k_bucket);
PRAGMA user_version = 3;
