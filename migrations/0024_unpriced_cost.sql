-- Issue 30: unpriced is unknown. A model without a price (none in the execution input, Parameter Store or the
-- shipped list: config.pricing is null) has no cost: NULL, shown "unpriced", never $0, which is what a free model
-- costs. A baseline plays no model and costs 0. The turn's write adds each turn's cost to the experiment's, and
-- NULL stays NULL, so an unpriced experiment stays unknown however many turns it plays.

ALTER TABLE experiments ALTER COLUMN cost_usd DROP NOT NULL;
ALTER TABLE turns ALTER COLUMN cost_usd DROP NOT NULL;

UPDATE experiments
   SET cost_usd = NULL
 WHERE llm_provider <> 'baseline' AND jsonb_typeof(config -> 'pricing') IS DISTINCT FROM 'object';
UPDATE turns t
   SET cost_usd = NULL
  FROM experiments e
 WHERE e.id = t.experiment_id AND e.cost_usd IS NULL;

COMMENT ON COLUMN experiments.cost_usd IS
    'USD at the prices captured in the snapshot (the sum of its turns); NULL: its model has no price (unpriced)';
COMMENT ON COLUMN turns.cost_usd IS 'USD at the prices captured in the snapshot; NULL: unpriced';
