-- Issue 22: every table column says what it holds, in the database itself (COMMENT ON COLUMN): the docs site's
-- tables reference and the data dictionary `oriole export` writes are read from these comments, so they cannot
-- drift from the schema. Also corrects turns.end_reason, whose comment predates three of its values.
COMMENT ON COLUMN turns.end_reason IS
    'why the turn ended: no_tool_call, action_budget, max_moves, goal_found, circuit_breaker, repetition, gave_up '
    'or deadline (the agent task''s Lambda could not fit another model request)';
COMMENT ON COLUMN turns.closing_messages IS
    'the results of the last answer''s tool calls, "not executed" ones included, carried into the next turn (JSON)';
COMMENT ON COLUMN turns.message_tokens IS 'estimated tokens of the turn''s messages, for the context budget';
COMMENT ON COLUMN turns.context IS
    'trims and compactions of the turn: dropped_turns, dropped_actions or compaction, turns_summarised, '
    'tokens_before, tokens_after (JSON; NULL when nothing was trimmed)';
COMMENT ON COLUMN model_calls.kind IS 'turn, or compaction for a model summary of turns leaving the window';

COMMENT ON COLUMN experiments.id IS 'the experiment';
COMMENT ON COLUMN experiments.maze_id IS 'mazes.id';
COMMENT ON COLUMN experiments.llm_provider IS 'the provider that plays (providers.name)';
COMMENT ON COLUMN experiments.model_name IS 'the model, or the baseline agent, exactly as given';
COMMENT ON COLUMN experiments.prompt_version IS 'the prompt version';
COMMENT ON COLUMN experiments.prompt_hash IS 'SHA-256 of prompt_text';
COMMENT ON COLUMN experiments.prompt_text IS 'the system prompt the experiment used, as resolved at start';
COMMENT ON COLUMN experiments.agent_id IS 'as given in the execution input (a sweep: <sweep>/<cell>/r<n>)';
COMMENT ON COLUMN experiments.comment IS 'as given in the execution input (a sweep adds sweep:<id>)';
COMMENT ON COLUMN experiments.config IS
    'the configuration snapshot: catalog defaults, then Parameter Store, then the input''s config (JSON)';
COMMENT ON COLUMN experiments.seed IS 'the seed of the experiment (random per experiment unless set)';
COMMENT ON COLUMN experiments.status IS 'running, succeeded, timed_out, failed or aborted';
COMMENT ON COLUMN experiments.goal_found IS 'whether the goal condition was met';
COMMENT ON COLUMN experiments.goal_first_seen_step IS 'the step the goal was first visible (0: from the start)';
COMMENT ON COLUMN experiments.goal_reached_step IS 'the step the agent first stood on the goal';
COMMENT ON COLUMN experiments.current_x IS 'the agent''s position now (x)';
COMMENT ON COLUMN experiments.current_y IS 'the agent''s position now (y, north is y - 1)';
COMMENT ON COLUMN experiments.action_count IS 'every action: moves, failed moves, recalls, invalid calls';
COMMENT ON COLUMN experiments.move_count IS 'move attempts, wall hits included';
COMMENT ON COLUMN experiments.failed_move_count IS 'moves into a wall or off the grid';
COMMENT ON COLUMN experiments.recall_count IS 'recall_all uses';
COMMENT ON COLUMN experiments.invalid_call_count IS 'invalid tool calls';
COMMENT ON COLUMN experiments.moves_at_last_recall IS 'move_count when recall_all was last used (its cooldown)';
COMMENT ON COLUMN experiments.turn_count IS 'agent turns written';
COMMENT ON COLUMN experiments.input_tokens IS 'input tokens of every model call (the sum of its turns)';
COMMENT ON COLUMN experiments.output_tokens IS 'output tokens of every model call (the sum of its turns)';
COMMENT ON COLUMN experiments.cost_usd IS 'USD at the prices captured in the snapshot (the sum of its turns)';
COMMENT ON COLUMN experiments.agent_state IS 'a baseline agent''s own state between turns (JSON)';
COMMENT ON COLUMN experiments.started_at IS 'when the experiment started';
COMMENT ON COLUMN experiments.completed_at IS 'when it was closed (NULL while running)';
COMMENT ON COLUMN experiments.failure_reason IS 'why it did not succeed (NULL for a success)';
COMMENT ON COLUMN experiments.origin_execution_arn IS 'the execution that started it: a retried start finds the row';
COMMENT ON COLUMN experiments.execution_arns IS 'every execution that carried it, in order (continuations)';
COMMENT ON COLUMN experiments.throttle_count IS 'throttled model call attempts';
COMMENT ON COLUMN experiments.stalled_turns IS 'turns in a row without a valid action';
COMMENT ON COLUMN experiments.ending IS
    'success; agent (a run without success: a limit, or a failure the agent caused); error (infrastructure or '
    'provider); NULL while running';
COMMENT ON COLUMN experiments.unique_tiles_visited IS 'distinct tiles the agent stood on, the start included';
COMMENT ON COLUMN experiments.model_calls IS 'model calls';
COMMENT ON COLUMN experiments.latency_ms IS 'total latency of its model calls';
COMMENT ON COLUMN experiments.last_action_at IS 'when its last action was written (NULL: none yet)';
COMMENT ON COLUMN experiments.code_version IS
    'the code that started it: package version and Lambda asset hash on AWS, <version>+local locally';
COMMENT ON COLUMN experiments.gave_up_reason IS 'the reason the model gave with give_up (enableGiveUp)';
COMMENT ON COLUMN experiments.memory IS 'the summary history mode''s state: the running summary (JSON)';
COMMENT ON COLUMN experiments.history_tokens IS 'estimated tokens of every turn''s messages so far';

COMMENT ON COLUMN mazes.id IS 'the maze (shipped 1-12 and 101-106, generated from 1000)';
COMMENT ON COLUMN mazes.name IS 'its name: shipped (perfect-11), seeded (FAMILY-SIZE@SEED) or imported';
COMMENT ON COLUMN mazes.family IS 'perfect, sparse, rooms, ... or imported';
COMMENT ON COLUMN mazes.width IS 'tiles across';
COMMENT ON COLUMN mazes.height IS 'tiles down';
COMMENT ON COLUMN mazes.start_x IS 'the start (x)';
COMMENT ON COLUMN mazes.start_y IS 'the start (y, north is y - 1)';
COMMENT ON COLUMN mazes.goal_x IS 'the goal (x)';
COMMENT ON COLUMN mazes.goal_y IS 'the goal (y)';
COMMENT ON COLUMN mazes.shortest_path_length IS 'moves on a shortest path from start to goal';
COMMENT ON COLUMN mazes.generator IS 'the generator function that drew it, e.g. random_walls (imported for an imported maze)';
COMMENT ON COLUMN mazes.seed IS 'the seed it was drawn from (NULL for an imported maze)';
COMMENT ON COLUMN mazes.content_hash IS 'SHA-256 of grid, start and goal: two mazes with the same hash play identically';
COMMENT ON COLUMN mazes.grid IS 'rows top to bottom: 0 open, 1 wall, 2 goal (JSON)';
COMMENT ON COLUMN mazes.created_at IS 'when it was stored';
COMMENT ON COLUMN mazes.source IS 'shipped, generated (a seeded name, drawn on first use) or imported';
COMMENT ON COLUMN mazes.generator_version IS 'the generator version that drew it (GENERATOR_VERSION)';

COMMENT ON COLUMN config_keys.key IS 'a catalog configuration key (camelCase, as in config)';
COMMENT ON COLUMN config_keys.providers IS 'the providers whose experiments it changes';
COMMENT ON COLUMN config_keys.experimental IS 'whether comparisons split on it (not: transport, bookkeeping)';
COMMENT ON COLUMN config_keys.default_value IS 'the catalog default, for snapshots that predate the key (JSON)';

COMMENT ON COLUMN schema_migrations.version IS 'a migration file applied (its name without .sql)';
COMMENT ON COLUMN schema_migrations.checksum IS 'SHA-256 of the file as applied: an edited migration is refused';
COMMENT ON COLUMN schema_migrations.applied_at IS 'when it was applied';
COMMENT ON COLUMN schema_views.name IS 'a view or function of migrations/views/';
COMMENT ON COLUMN schema_views.checksum IS 'SHA-256 of its file as created';
COMMENT ON COLUMN schema_views.applied_at IS 'when it was created';

COMMENT ON COLUMN sweeps.id IS 'the sweep file''s id: its experiments are tagged sweep:<id>';
