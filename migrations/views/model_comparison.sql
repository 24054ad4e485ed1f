-- The comparison over every experiment: compare_experiments() without a filter.
CREATE VIEW model_comparison AS SELECT * FROM compare_experiments();

COMMENT ON COLUMN model_comparison.llm_provider IS 'the group: the provider';
COMMENT ON COLUMN model_comparison.model_name IS 'the group: the model or baseline agent';
COMMENT ON COLUMN model_comparison.agent_label IS 'the group: the agent''s label from its sweep file (NULL: none)';
COMMENT ON COLUMN model_comparison.prompt_version IS 'the group: the prompt version';
COMMENT ON COLUMN model_comparison.prompt_hash IS 'the group: SHA-256 of the prompt text';
COMMENT ON COLUMN model_comparison.maze_family IS 'the group: the maze family';
COMMENT ON COLUMN model_comparison.maze_size IS 'the group: WIDTHxHEIGHT, e.g. 11x11';
COMMENT ON COLUMN model_comparison.maze IS 'the maze, with by_maze; NULL otherwise';
COMMENT ON COLUMN model_comparison.mazes IS 'how many different grids the group''s runs rest on';
COMMENT ON COLUMN model_comparison.config IS 'the configuration values that differ among the compared experiments';
COMMENT ON COLUMN model_comparison.runs IS 'runs: experiments with a success or agent ending';
COMMENT ON COLUMN model_comparison.successes IS 'runs that found the goal';
COMMENT ON COLUMN model_comparison.success_rate IS 'successes / runs';
COMMENT ON COLUMN model_comparison.success_rate_low IS 'lower bound of the 95% Wilson score interval';
COMMENT ON COLUMN model_comparison.success_rate_high IS 'upper bound of the 95% Wilson score interval';
COMMENT ON COLUMN model_comparison.median_actions_to_goal IS 'median actions of the successes';
COMMENT ON COLUMN model_comparison.median_path_efficiency IS 'median path efficiency of the successes';
COMMENT ON COLUMN model_comparison.tokens_per_run IS 'input plus output tokens of the runs, per run';
COMMENT ON COLUMN model_comparison.tokens_per_success IS 'input plus output tokens of the runs, per success';
COMMENT ON COLUMN model_comparison.cost_per_run IS 'USD of the runs, per run';
COMMENT ON COLUMN model_comparison.cost_per_success IS 'USD of the runs, per success';
COMMENT ON COLUMN model_comparison.mean_latency_ms IS 'mean latency of the runs'' model calls';
COMMENT ON COLUMN model_comparison.errors IS 'experiments with an error ending (infrastructure, provider, aborts)';
COMMENT ON COLUMN model_comparison.running IS 'experiments still running';
COMMENT ON COLUMN model_comparison.censored IS
    'experiments stopped by something outside the agent (the wall clock, a timeout, a stop, a deployment limit)';
