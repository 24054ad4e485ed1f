-- Issue 20: sweeps a study can be built on.
--
-- An agent of a sweep file may carry a label ("gpt-4.1-mini @ OpenAI"), shown in reports instead of
-- provider/model; the execution input's agentLabel is stored here. An experiment a researcher archives
-- (`oriole experiments archive`) keeps its rows but leaves every report, comparison and export. PlanSweep records
-- each sweep's plan (how many experiments its file describes, its run input), so `oriole sweep status` and
-- `oriole watch --sweep` know what is planned and what is left after the process that ran it has gone.

ALTER TABLE experiments ADD COLUMN IF NOT EXISTS agent_label text
    CONSTRAINT experiments_agent_label_length CHECK (char_length(agent_label) BETWEEN 1 AND 80);
ALTER TABLE experiments ADD COLUMN IF NOT EXISTS archived_at timestamptz;

COMMENT ON COLUMN experiments.agent_label IS
    'the agent''s label given by its sweep file (agentLabel); NULL: shown as llm_provider/model_name';
COMMENT ON COLUMN experiments.archived_at IS
    'when `oriole experiments archive` took it out of reports and exports (NULL: counted)';

CREATE TABLE IF NOT EXISTS sweeps (
    id               text PRIMARY KEY,
    planned          integer NOT NULL CHECK (planned >= 0),
    spend_limit_usd  numeric(24, 6) CHECK (spend_limit_usd >= 0),
    seed_from        text,
    run_input        jsonb NOT NULL,
    first_planned_at timestamptz NOT NULL DEFAULT now(),
    planned_at       timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE sweeps IS 'one row per sweep id: its latest plan (PlanSweep writes it on every run and resume)';
COMMENT ON COLUMN sweeps.planned IS 'experiments the sweep file describes (cells x repetitions)';
COMMENT ON COLUMN sweeps.spend_limit_usd IS 'the file''s spend_limit_usd (NULL: none)';
COMMENT ON COLUMN sweeps.seed_from IS 'the sweep whose sampled mazes and seeds this one replays (NULL: its own)';
COMMENT ON COLUMN sweeps.run_input IS 'the sweep state machine''s input of the latest run: the file and its settings';
COMMENT ON COLUMN sweeps.first_planned_at IS 'when the sweep was first planned';
COMMENT ON COLUMN sweeps.planned_at IS 'when it was last planned (a run or a resume)';

-- The scope of every report, comparison and export leaves archived experiments out; the varied configuration is
-- computed over what is left.
CREATE OR REPLACE FUNCTION compared_experiments(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL            -- a whitespace-separated word of the comment, e.g. 'sweep:ladder'
) RETURNS TABLE (experiment_id bigint, compared_config jsonb)
LANGUAGE sql STABLE AS $$
    WITH picked AS MATERIALIZED (
        -- the snapshot without the keys that are never compared (transport, the seed, bookkeeping)
        SELECT e.id, e.llm_provider,
               e.config - (SELECT coalesce(array_agg(k.key), '{}') FROM config_keys k WHERE NOT k.experimental)
                   AS settings
          FROM experiments e
          JOIN mazes m ON m.id = e.maze_id
         WHERE (compared_experiments.model IS NULL OR e.model_name = compared_experiments.model)
           AND (compared_experiments.prompt IS NULL OR e.prompt_version = compared_experiments.prompt)
           AND (compared_experiments.maze IS NULL OR compared_experiments.maze IN (m.name, m.family))
           AND (compared_experiments.since IS NULL OR e.started_at >= compared_experiments.since)
           AND (compared_experiments.until IS NULL OR e.started_at < compared_experiments.until)
           AND (compared_experiments.tag IS NULL OR compared_experiments.tag = ANY (comment_tags(e.comment)))
           AND e.archived_at IS NULL  -- archived: kept, but out of every comparison, report and export
    ), kinds AS MATERIALIZED (
        SELECT DISTINCT p.llm_provider, p.settings FROM picked p
    ), spread AS MATERIALIZED (  -- each kind's experimental settings that apply to its provider
        SELECT d.llm_provider, d.settings, k.key, coalesce(d.settings -> k.key, k.default_value) AS value
          FROM kinds d JOIN config_keys k ON k.experimental AND d.llm_provider = ANY (k.providers)
    ), varied AS (
        SELECT s.llm_provider, s.settings, jsonb_object_agg(s.key, s.value) AS config
          FROM spread s
         WHERE s.key IN (SELECT v.key FROM spread v GROUP BY v.key HAVING count(DISTINCT v.value) > 1)
         GROUP BY s.llm_provider, s.settings
    )
    SELECT p.id, coalesce(v.config, '{}')
      FROM picked p
      LEFT JOIN varied v ON v.llm_provider = p.llm_provider AND v.settings = p.settings
$$;
