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
