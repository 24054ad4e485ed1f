-- The experiment store: mazes, experiments, turns and actions.
-- Stable names (documented in the README) must never be renamed; add columns freely in later migrations.

CREATE TABLE mazes (
    id                   integer PRIMARY KEY,
    name                 text    NOT NULL UNIQUE,
    family               text    NOT NULL,
    width                integer NOT NULL CHECK (width > 0),
    height               integer NOT NULL CHECK (height > 0),
    start_x              integer NOT NULL,
    start_y              integer NOT NULL,
    goal_x               integer NOT NULL,
    goal_y               integer NOT NULL,
    shortest_path_length integer NOT NULL CHECK (shortest_path_length > 0),
    generator            text    NOT NULL,
    seed                 bigint  NOT NULL,
    content_hash         text    NOT NULL,
    grid                 jsonb   NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE experiments (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    maze_id              integer NOT NULL REFERENCES mazes (id),
    llm_provider         text    NOT NULL CHECK (llm_provider IN ('bedrock', 'ollama', 'baseline')),
    model_name           text    NOT NULL,
    prompt_version       text    NOT NULL,
    prompt_hash          text    NOT NULL,
    prompt_text          text    NOT NULL,
    agent_id             text,
    comment              text,
    config               jsonb   NOT NULL,
    seed                 bigint  NOT NULL,
    status               text    NOT NULL DEFAULT 'running'
                         CHECK (status IN ('running', 'succeeded', 'timed_out', 'failed', 'aborted')),
    goal_found           boolean NOT NULL DEFAULT false,
    goal_first_seen_step integer,
    goal_reached_step    integer,
    current_x            integer NOT NULL,
    current_y            integer NOT NULL,
    action_count         integer NOT NULL DEFAULT 0,
    move_count           integer NOT NULL DEFAULT 0,
    failed_move_count    integer NOT NULL DEFAULT 0,
    recall_count         integer NOT NULL DEFAULT 0,
    invalid_call_count   integer NOT NULL DEFAULT 0,
    moves_at_last_recall integer,
    turn_count           integer NOT NULL DEFAULT 0,
    input_tokens         bigint  NOT NULL DEFAULT 0,
    output_tokens        bigint  NOT NULL DEFAULT 0,
    cost_usd             numeric(14, 6) NOT NULL DEFAULT 0,
    agent_state          jsonb   NOT NULL DEFAULT '{}',
    started_at           timestamptz NOT NULL DEFAULT now(),
    completed_at         timestamptz,
    failure_reason       text,
    origin_execution_arn text    NOT NULL UNIQUE,
    execution_arns       text[]  NOT NULL,
    CHECK ((status = 'running') = (completed_at IS NULL)),
    CHECK (status IN ('running', 'succeeded') OR failure_reason IS NOT NULL)
);

CREATE INDEX experiments_maze_idx ON experiments (maze_id);
CREATE INDEX experiments_model_idx ON experiments (llm_provider, model_name, prompt_version);
CREATE INDEX experiments_open_idx ON experiments (started_at) WHERE completed_at IS NULL;

CREATE TABLE turns (
    experiment_id   bigint  NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    turn_number     integer NOT NULL CHECK (turn_number > 0),
    first_step      integer NOT NULL,
    action_count    integer NOT NULL CHECK (action_count >= 0),
    model_calls     integer NOT NULL DEFAULT 0,
    input_tokens    bigint  NOT NULL DEFAULT 0,
    output_tokens   bigint  NOT NULL DEFAULT 0,
    cost_usd        numeric(14, 6) NOT NULL DEFAULT 0,
    latency_ms      integer NOT NULL DEFAULT 0,
    end_reason      text    NOT NULL,
    started_at      timestamptz NOT NULL,
    completed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (experiment_id, turn_number)
);

CREATE TABLE actions (
    experiment_id   bigint  NOT NULL,
    step_number     integer NOT NULL CHECK (step_number > 0),
    turn_number     integer NOT NULL,
    action_type     text    NOT NULL,
    tool_name       text,
    arguments       jsonb,
    reasoning       text,
    from_x          integer NOT NULL,
    from_y          integer NOT NULL,
    to_x            integer NOT NULL,
    to_y            integer NOT NULL,
    success         boolean NOT NULL,
    error           text,
    tiles_seen      jsonb   NOT NULL DEFAULT '[]',
    goal_visible    boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (experiment_id, step_number),
    FOREIGN KEY (experiment_id, turn_number) REFERENCES turns (experiment_id, turn_number) ON DELETE CASCADE
);

CREATE INDEX actions_turn_idx ON actions (experiment_id, turn_number);
