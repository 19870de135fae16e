-- db/migrations/0001-initial.sql -- schema version 1, as libfa4 created it
-- before version 2.  libfa4 never runs this file (a new database gets
-- db/schema.sql); it documents version 1, and test_db_schema builds a
-- version-1 database from it to test the migration to version 2.

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
    config          TEXT NOT NULL,           -- fa4_config_format() text
    median_ms       REAL,
    tflops          REAL,
    updated_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (device_id, family, source_hash, dtype, head_dim_qk,
                 head_dim_v, gqa_group, causal, window_left, window_right,
                 varlen, paged, page_size, seqlen_q_bucket, seqlen_k_bucket)
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
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
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
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

PRAGMA user_version = 1;
