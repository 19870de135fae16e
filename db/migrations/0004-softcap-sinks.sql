-- db/migrations/0004-softcap-sinks.sql -- version 3 -> 4.
-- Adds softcap and sinks to the problem key of winners and trials: 1 when
-- the problem has softcapping (fa4_problem.softcap > 0) or attention sinks,
-- else 0.  They choose other kernel variants, so a plain problem's winner
-- must not serve them, nor theirs a plain one.  Flags, not the cap or the
-- logits: those are launch parameters of the one variant.  Every row from
-- version 3 was tuned without either and gets 0 and 0.  As in 0003, both
-- tables are rebuilt with the columns where db/schema.sql has them (after
-- work_bucket), every row copied (trial ids kept; the new primary key
-- extends the old one, so no two rows collide), and the indexes made
-- again, winners_by_features with the two flags.
CREATE TABLE winners_v4 (
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
    softcap         INTEGER NOT NULL DEFAULT 0,  -- since version 4
    sinks           INTEGER NOT NULL DEFAULT 0,  -- since version 4
    config          TEXT NOT NULL,           -- fa4_config_format() text
    median_ms       REAL,
    tflops          REAL,
    updated_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    library_version TEXT NOT NULL DEFAULT '',  -- since version 2
    PRIMARY KEY (device_id, family, source_hash, dtype, head_dim_qk,
                 head_dim_v, gqa_group, causal, window_left, window_right,
                 varlen, paged, page_size, seqlen_q_bucket, seqlen_k_bucket,
                 work_bucket, softcap, sinks)
) WITHOUT ROWID;
INSERT INTO winners_v4 (
    device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, work_bucket, config, median_ms,
    tflops, updated_at, library_version)
SELECT
    device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, work_bucket, config, median_ms,
    tflops, updated_at, library_version
FROM winners;
DROP TABLE winners;
ALTER TABLE winners_v4 RENAME TO winners;

CREATE TABLE trials_v4 (
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
    softcap         INTEGER NOT NULL DEFAULT 0,  -- since version 4
    sinks           INTEGER NOT NULL DEFAULT 0,  -- since version 4
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
INSERT INTO trials_v4 (
    id, device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, work_bucket, batch, heads_q, seqlen_q,
    seqlen_k, config, ok, failure, median_ms, min_ms, max_ms, reps, tflops,
    max_rel_err, created_at, library_version)
SELECT
    id, device_id, family, source_hash, dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    seqlen_q_bucket, seqlen_k_bucket, work_bucket, batch, heads_q, seqlen_q,
    seqlen_k, config, ok, failure, median_ms, min_ms, max_ms, reps, tflops,
    max_rel_err, created_at, library_version
FROM trials;
DROP TABLE trials;
ALTER TABLE trials_v4 RENAME TO trials;

-- The indexes went with the old tables.
CREATE INDEX winners_by_features ON winners (dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    softcap, sinks);
CREATE INDEX trials_by_device ON trials (device_id, family, dtype,
    head_dim_qk, seqlen_q_bucket, seqlen_k_bucket);
PRAGMA user_version = 4;
