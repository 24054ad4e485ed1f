-- Issue 33: the comparison of the whole database at lab scale.
--
-- agent_comparison and compare_experiments(by_maze => true) group every experiment of the database: at 40,000
-- experiments that read and sorted every row (the counted attempt of each repetition, the medians, the distinct
-- mazes), about a second whatever the hardware. This table keeps their groups, worked out exactly from the base
-- rows by the same function (compared_groups). The triggers that keep it (views/keep_comparison_groups.sql) work a
-- group out again when one of its experiments is inserted, ends, is archived, brought back, deleted or rewritten
-- (with every group of the same agent, prompt, maze family and size: one agent's groups, its repetitions' attempts
-- included), and every group when the settings that vary among the experiments change (comparison_settings) or
-- which keys are compared does (config_keys); the turn's write changes none of what a group reads: the turn does
-- no more work and no more round trips.

CREATE TABLE comparison_groups (
    by_maze boolean NOT NULL,
    llm_provider text,
    model_name text,
    agent_label text,
    prompt_version text,
    prompt_hash text,
    maze_family text,
    maze_size text,
    maze text,
    mazes bigint,
    few_mazes boolean,
    config jsonb,
    all_runs bigint,
    runs bigint,
    successes bigint,
    agent_failures bigint,
    censored bigint,
    errors bigint,
    running bigint,
    superseded bigint,
    success_rate numeric,
    success_rate_low numeric,
    success_rate_high numeric,
    success_rate_all numeric,
    success_rate_all_low numeric,
    success_rate_all_high numeric,
    undecided_share numeric,
    many_undecided boolean,
    median_actions_to_goal numeric,
    median_path_length numeric,
    median_path_efficiency numeric,
    spl numeric,
    spl_all numeric,
    tokens numeric,
    tokens_per_run numeric,
    tokens_per_success numeric,
    cost_usd numeric,
    unpriced_runs bigint,
    cost_per_run numeric,
    cost_per_success numeric,
    mean_latency_ms numeric,
    first_maze_id integer
);
COMMENT ON TABLE comparison_groups IS
    'the groups of the comparison of the whole database (compare_experiments without a filter), kept by triggers';
COMMENT ON COLUMN comparison_groups.by_maze IS 'the group is one maze (compare_experiments(by_maze => true)), else a maze family and size';
COMMENT ON COLUMN comparison_groups.llm_provider IS 'as agent_comparison.llm_provider';
COMMENT ON COLUMN comparison_groups.model_name IS 'as agent_comparison.model_name';
COMMENT ON COLUMN comparison_groups.agent_label IS 'as agent_comparison.agent_label';
COMMENT ON COLUMN comparison_groups.prompt_version IS 'as agent_comparison.prompt_version';
COMMENT ON COLUMN comparison_groups.prompt_hash IS 'as agent_comparison.prompt_hash';
COMMENT ON COLUMN comparison_groups.maze_family IS 'as agent_comparison.maze_family';
COMMENT ON COLUMN comparison_groups.maze_size IS 'as agent_comparison.maze_size';
COMMENT ON COLUMN comparison_groups.maze IS 'as agent_comparison.maze';
COMMENT ON COLUMN comparison_groups.mazes IS 'as agent_comparison.mazes';
COMMENT ON COLUMN comparison_groups.few_mazes IS 'as agent_comparison.few_mazes';
COMMENT ON COLUMN comparison_groups.config IS 'as agent_comparison.config';
COMMENT ON COLUMN comparison_groups.all_runs IS 'as agent_comparison.all_runs';
COMMENT ON COLUMN comparison_groups.runs IS 'as agent_comparison.runs';
COMMENT ON COLUMN comparison_groups.successes IS 'as agent_comparison.successes';
COMMENT ON COLUMN comparison_groups.agent_failures IS 'as agent_comparison.agent_failures';
COMMENT ON COLUMN comparison_groups.censored IS 'as agent_comparison.censored';
COMMENT ON COLUMN comparison_groups.errors IS 'as agent_comparison.errors';
COMMENT ON COLUMN comparison_groups.running IS 'as agent_comparison.running';
COMMENT ON COLUMN comparison_groups.superseded IS 'as agent_comparison.superseded';
COMMENT ON COLUMN comparison_groups.success_rate IS 'as agent_comparison.success_rate';
COMMENT ON COLUMN comparison_groups.success_rate_low IS 'as agent_comparison.success_rate_low';
COMMENT ON COLUMN comparison_groups.success_rate_high IS 'as agent_comparison.success_rate_high';
COMMENT ON COLUMN comparison_groups.success_rate_all IS 'as agent_comparison.success_rate_all';
COMMENT ON COLUMN comparison_groups.success_rate_all_low IS 'as agent_comparison.success_rate_all_low';
COMMENT ON COLUMN comparison_groups.success_rate_all_high IS 'as agent_comparison.success_rate_all_high';
COMMENT ON COLUMN comparison_groups.undecided_share IS 'as agent_comparison.undecided_share';
COMMENT ON COLUMN comparison_groups.many_undecided IS 'as agent_comparison.many_undecided';
COMMENT ON COLUMN comparison_groups.median_actions_to_goal IS 'as agent_comparison.median_actions_to_goal';
COMMENT ON COLUMN comparison_groups.median_path_length IS 'as agent_comparison.median_path_length';
COMMENT ON COLUMN comparison_groups.median_path_efficiency IS 'as agent_comparison.median_path_efficiency';
COMMENT ON COLUMN comparison_groups.spl IS 'as agent_comparison.spl';
COMMENT ON COLUMN comparison_groups.spl_all IS 'as agent_comparison.spl_all';
COMMENT ON COLUMN comparison_groups.tokens IS 'as agent_comparison.tokens';
COMMENT ON COLUMN comparison_groups.tokens_per_run IS 'as agent_comparison.tokens_per_run';
COMMENT ON COLUMN comparison_groups.tokens_per_success IS 'as agent_comparison.tokens_per_success';
COMMENT ON COLUMN comparison_groups.cost_usd IS 'as agent_comparison.cost_usd';
COMMENT ON COLUMN comparison_groups.unpriced_runs IS 'as agent_comparison.unpriced_runs';
COMMENT ON COLUMN comparison_groups.cost_per_run IS 'as agent_comparison.cost_per_run';
COMMENT ON COLUMN comparison_groups.cost_per_success IS 'as agent_comparison.cost_per_success';
COMMENT ON COLUMN comparison_groups.mean_latency_ms IS 'as agent_comparison.mean_latency_ms';
COMMENT ON COLUMN comparison_groups.first_maze_id IS 'the lowest maze id among the group''s experiments (by_maze orders the mazes by it)';

CREATE TABLE comparison_settings (
    varied jsonb NOT NULL
);
COMMENT ON TABLE comparison_settings IS
    'the settings that varied among the experiments, and the models split on their build, when comparison_groups was '
    'last worked out whole (one row)';
COMMENT ON COLUMN comparison_settings.varied IS
    'settings: each kind of experiment (provider, experimental settings) with its varied settings (varied_settings); '
    'builds: each model reported in more than one build (compared_builds)';

-- a group's experiments found through the index: experiments_model_idx with the maze
CREATE INDEX experiments_group_idx ON experiments (llm_provider, model_name, prompt_version, maze_id);
DROP INDEX experiments_model_idx;
-- the models reported in more than one build among the compared experiments (compared_builds), from the index alone
CREATE INDEX experiments_build_idx ON experiments (llm_provider, model_name, model_build)
    WHERE replay_of IS NULL AND archived_at IS NULL;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_app') THEN  -- the finalizer's statement keeps the groups
        GRANT DELETE ON comparison_groups, comparison_settings TO oriole_app;
    END IF;
END
$$;
