-- db/migrations/0002-library-version.sql -- version 1 -> 2.
-- Records which libfa4 version wrote each winner, trial and binary (the
-- JSON export carries it; import reports records from other versions), and
-- indexes the lookup by discrete problem features.  Rows from version 1
-- get library_version '' (unknown).
ALTER TABLE winners ADD COLUMN library_version TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN library_version TEXT NOT NULL DEFAULT '';
ALTER TABLE binaries ADD COLUMN library_version TEXT NOT NULL DEFAULT '';
CREATE INDEX winners_by_features ON winners (dtype, head_dim_qk, head_dim_v,
    gqa_group, causal, window_left, window_right, varlen, paged, page_size);
CREATE INDEX trials_by_device ON trials (device_id, family, dtype,
    head_dim_qk, seqlen_q_bucket, seqlen_k_bucket);
PRAGMA user_version = 2;
