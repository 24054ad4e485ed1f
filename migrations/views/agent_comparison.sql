-- The comparison over every experiment: compare_experiments() without a filter, one row per agent x prompt x maze
-- family and size x compared configuration (named for what it groups: agents, of which a model is a part).
CREATE VIEW agent_comparison AS SELECT * FROM compare_experiments();

COMMENT ON COLUMN agent_comparison.llm_provider IS 'the group: the provider';
COMMENT ON COLUMN agent_comparison.model_name IS 'the group: the model or baseline agent';
COMMENT ON COLUMN agent_comparison.agent_label IS 'the group: the agent''s label from its sweep file (NULL: none)';
COMMENT ON COLUMN agent_comparison.prompt_version IS 'the group: the prompt version';
COMMENT ON COLUMN agent_comparison.prompt_hash IS 'the group: SHA-256 of the prompt text';
COMMENT ON COLUMN agent_comparison.maze_family IS 'the group: the maze family';
COMMENT ON COLUMN agent_comparison.maze_size IS 'the group: WIDTHxHEIGHT, e.g. 11x11';
COMMENT ON COLUMN agent_comparison.maze IS 'the maze, with by_maze; NULL otherwise';
COMMENT ON COLUMN agent_comparison.mazes IS 'how many different grids the group''s decided runs rest on';
COMMENT ON COLUMN agent_comparison.few_mazes IS
    'fewer than 10 different mazes: a rate that says little about the family beyond these mazes';
COMMENT ON COLUMN agent_comparison.config IS 'the configuration values that differ among the compared experiments';
COMMENT ON COLUMN agent_comparison.all_runs IS
    'every repetition that ended, counted once: runs + censored + errors (running ones are not yet)';
COMMENT ON COLUMN agent_comparison.runs IS 'decided runs: successes and agent failures';
COMMENT ON COLUMN agent_comparison.successes IS 'runs that met the goal condition';
COMMENT ON COLUMN agent_comparison.agent_failures IS
    'runs the agent ended without success: its action budget used, gave up or stalled';
COMMENT ON COLUMN agent_comparison.censored IS
    'runs stopped by something outside the agent: the wall clock, the execution timeout, a stop, a deployment limit';
COMMENT ON COLUMN agent_comparison.errors IS 'runs ended by a provider or infrastructure failure';
COMMENT ON COLUMN agent_comparison.running IS 'repetitions still running (in no count but this)';
COMMENT ON COLUMN agent_comparison.superseded IS
    'attempts that errored or were censored and then run again: not counted in a rate, their spending is';
COMMENT ON COLUMN agent_comparison.success_rate IS 'successes / runs (the decided runs)';
COMMENT ON COLUMN agent_comparison.success_rate_low IS 'lower bound of its 95% Wilson score interval';
COMMENT ON COLUMN agent_comparison.success_rate_high IS 'upper bound of its 95% Wilson score interval';
COMMENT ON COLUMN agent_comparison.success_rate_all IS
    'successes / all_runs: censored and errored runs counted as failures';
COMMENT ON COLUMN agent_comparison.success_rate_all_low IS 'lower bound of its 95% Wilson score interval';
COMMENT ON COLUMN agent_comparison.success_rate_all_high IS 'upper bound of its 95% Wilson score interval';
COMMENT ON COLUMN agent_comparison.undecided_share IS '(censored + errors) / all_runs';
COMMENT ON COLUMN agent_comparison.many_undecided IS
    'censored and errored runs are more than 5% of all_runs: the two rates can tell different stories';
COMMENT ON COLUMN agent_comparison.median_actions_to_goal IS 'median actions of the successes';
COMMENT ON COLUMN agent_comparison.median_path_length IS 'median path_length of the successes';
COMMENT ON COLUMN agent_comparison.median_path_efficiency IS 'median path efficiency of the successes';
COMMENT ON COLUMN agent_comparison.spl IS
    'mean SPL (success weighted by path length) over the decided runs: never above success_rate';
COMMENT ON COLUMN agent_comparison.spl_all IS
    'mean SPL over all_runs, censored and errored runs scoring 0 (as in success_rate_all): never above spl';
COMMENT ON COLUMN agent_comparison.tokens IS 'input plus output tokens of every ended attempt, retried ones included';
COMMENT ON COLUMN agent_comparison.tokens_per_run IS 'tokens / all_runs';
COMMENT ON COLUMN agent_comparison.tokens_per_success IS 'tokens / successes';
COMMENT ON COLUMN agent_comparison.cost_usd IS
    'USD of every ended attempt that has a price (NULL: none has; at least this much when unpriced_runs > 0)';
COMMENT ON COLUMN agent_comparison.unpriced_runs IS 'ended attempts whose model had no price: their cost is unknown';
COMMENT ON COLUMN agent_comparison.cost_per_run IS 'cost_usd / all_runs';
COMMENT ON COLUMN agent_comparison.cost_per_success IS 'cost_usd / successes';
COMMENT ON COLUMN agent_comparison.mean_latency_ms IS 'mean latency of the model calls of every ended attempt';
