-- Issue 26: whatever a model reports within the bounds the code accepts, an experiment's totals fit their
-- columns. The bounds are chosen together: at most 10,000,000 tokens each way per call and an hour of latency
-- (oriole.providers), at most 10,000 USD per million tokens (oriole.catalog.MAX_PRICE_PER_MTOK), at most
-- maxActionsPerTurn + 2 calls a turn (one per action, the answer without a call, a compaction), and at most
-- maxMoves + (maxMoves + 1) x maxStalledTurns turns an experiment (a turn without a valid action counts
-- towards the stall limit). A turn's cost (at most about 2.04e7 USD) fits numeric(14, 6); an experiment's
-- (about 2.1e16 USD) and its model calls (about 1.0e11) did not: they widen here.
-- tests/integration/test_hostile_runs.py computes the worst case of every total against the column types.
-- (The views that read these columns are dropped before pending migrations run and made again after them.)
ALTER TABLE experiments
    ALTER COLUMN cost_usd TYPE numeric(24, 6),
    ALTER COLUMN model_calls TYPE bigint,
    ALTER COLUMN throttle_count TYPE bigint;
