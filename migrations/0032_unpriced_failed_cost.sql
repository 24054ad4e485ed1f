-- Issue 30 item 7: unpriced is unknown, for the failed attempts' cost too. An experiment whose model has no price
-- (cost_usd NULL since 0024) stored 0 in failed_cost_usd, the same as a free model's failed attempts: a reader
-- summing it over runs took an unknown for $0. Now failed_cost_usd is NULL exactly where cost_usd is (an unpriced
-- run), whatever its failed attempts; the experiment's insert writes it as it writes cost_usd (NULL, or 0 with a
-- price), the failed attempt's write adds to it (NULL stays NULL), and every sum over runs says how many were
-- unpriced (oriole report's "spent on failed attempts" note: "at least $X, N runs unpriced").

ALTER TABLE experiments ALTER COLUMN failed_cost_usd DROP NOT NULL;

UPDATE experiments SET failed_cost_usd = NULL WHERE cost_usd IS NULL;

COMMENT ON COLUMN experiments.failed_cost_usd IS
    'USD spent on failed attempts (in cost_usd too); NULL: its model has no price (unpriced), like cost_usd';
