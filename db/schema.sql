-- db/schema.sql -- the libfa4 config database, schema version 4.
--
-- This file is the current schema that a new database gets, in one
-- transaction.  A database made by an older libfa4 is brought forward by
-- the steps in db/migrations/ (NNNN-*.sql takes version NNNN-1 to NNNN).
-- libfa4 embeds this file and the migrations (lib/db_schema.c; the test
-- test_db_schema checks that the embedded text equals these files).
-- The version lives in PRAGMA user_version.  See fa4-db(5).
--
-- Problem key (winners and trials): the fields of fa4_problem that choose
-- a kernel variant.
--   dtype            fa4_dtype (1 bf16, 2 fp16, 3 fp8 e4m3)
--   head_dim_qk, head_dim_v   head_dim_v 0 in the problem is stored as
--                    head_dim_qk
--   gqa_group        heads_q / heads_kv (1: multi-head, heads_q: MQA)
--   causal           0 or 1
--   window_left, window_right   -1 = unbounded; with causal, window_right
--                    is stored as 0 (the same mask)
--   varlen           0 or 1
--   paged, page_size 1 and the page size when the KV cache is paged, else
--                    0 and 0
--   seqlen_q_bucket, seqlen_k_bucket   the sequence lengths rounded up to
--                    the next power of two (1000 -> 1024, 1024 -> 1024,
--                    1025 -> 2048; 1 -> 1).  "Nearest bucket" is measured
--                    as |log2 q - log2 q'| + |log2 k - log2 k'|.
--   work_bucket      batch * heads_kv rounded up the same way (since
--                    version 3): decode winners are not shared across batch
--                    sizes that want other splits.  0 means "any work size"
--                    (rows from before version 3): an exact lookup takes
--                    them after a row of the same size, "nearest" adds
--                    |log2 w - log2 w'| for the others.
--   softcap, sinks   1 when the problem has softcapping (softcap > 0) or
--                    attention sinks, else 0 (since version 4; older rows
--                    get 0).  Flags, not the cap or the sink logits: the
--                    kernel variant depends only on whether each is on,
--                    the values are launch parameters.  Lookups never
--                    match across them.

-- One row per device fingerprint: the GPU and the software that measured
-- on it.  fingerprint = 'name|cc|sm_count|smem_per_block_optin|driver|nvrtc'.
CREATE TABLE devices (
    id                   INTEGER PRIMARY KEY,
    fingerprint          TEXT NOT NULL UNIQUE,
    name                 TEXT NOT NULL,
    cc                   INTEGER NOT NULL,   -- major*10 + minor
    sm_count             INTEGER NOT NULL,
    smem_per_block_optin INTEGER NOT NULL,   -- bytes
    driver_version       INTEGER NOT NULL,   -- cuDriverGetVersion, 0: none
    nvrtc_version        INTEGER NOT NULL,   -- major*1000 + minor*10
    created_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- The tuned winner of one family for one (device, source hash, problem key).
-- Lookup takes, among the families, the row with the lowest median_ms.
CREATE TABLE winners (
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

-- Every measurement the tuner made, failures included (ok = 0 with the
-- reason in failure).  seqlen_q/seqlen_k/batch/heads_q are the measured
-- shape; the key columns are as in winners.
CREATE TABLE trials (
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

-- Compiled kernels.  key = jit_key() (covers source, defines, options,
-- NVRTC version, arch, library version); checksum = 64-bit FNV-1a of blob
-- as 16 hex digits, verified on every read.
CREATE TABLE binaries (
    key             TEXT PRIMARY KEY,
    arch            TEXT NOT NULL,
    blob            BLOB NOT NULL,
    size            INTEGER NOT NULL,
    checksum        TEXT NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    library_version TEXT NOT NULL DEFAULT ''   -- since version 2
);

-- Since version 2: lookup by discrete features (softcap and sinks since
-- version 4), trials by problem.
CREATE INDEX winners_by_features ON winners (dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size,
    softcap, sinks);
CREATE INDEX trials_by_device ON trials (device_id, family, dtype,
    head_dim_qk, seqlen_q_bucket, seqlen_k_bucket);

PRAGMA user_version = 4;
