-- The experiments a selection names: each filter a list (NULL: any), the values of one filter a union (`--sweep a
-- --sweep b`: either sweep), the filters an intersection (`--sweep a --model m`: the model's runs in that sweep).
-- Its rows are the experiments' rows; replays and archived experiments are left to the caller. The one definition of
-- the filters: every command that selects experiments (`oriole report`, `export`, `ls`, `watch`, `render`, `replay`,
-- `experiments`) and comparison_scope apply it.
CREATE FUNCTION chosen_experiments(
    ids bigint[] DEFAULT NULL,       -- experiments.id
    sweeps text[] DEFAULT NULL,      -- a sweep's id: the experiments it started (experiments.sweep_id)
    models text[] DEFAULT NULL,      -- model_name
    agents text[] DEFAULT NULL,      -- the agent's label, or provider/model
    mazes text[] DEFAULT NULL,       -- a maze's name, or a maze family
    prompts text[] DEFAULT NULL,     -- prompt_version
    tags text[] DEFAULT NULL,        -- a whitespace-separated word of the comment, e.g. 'baseline'
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL   -- started_at < until
) RETURNS SETOF experiments
LANGUAGE sql STABLE AS $$
    SELECT e.*
      -- by id through the primary key, and by tag through the index of the comments' words (experiments_tags_idx),
      -- even in the plan a function's body gets (made for any value of the arguments): the CLI's selections arrive
      -- as ids, compare_experiments(tag => ...) as a tag, and a sweep's 1,000 of 40,000 are read, not all of them
      FROM (SELECT * FROM experiments WHERE id = ANY (chosen_experiments.ids)
            UNION ALL
            SELECT * FROM experiments
             WHERE chosen_experiments.ids IS NULL AND comment_tags(comment) && chosen_experiments.tags
            UNION ALL
            SELECT * FROM experiments WHERE chosen_experiments.ids IS NULL AND chosen_experiments.tags IS NULL) e
     WHERE (chosen_experiments.sweeps IS NULL OR e.sweep_id = ANY (chosen_experiments.sweeps))
       AND (chosen_experiments.models IS NULL OR e.model_name = ANY (chosen_experiments.models))
       AND (chosen_experiments.agents IS NULL OR e.agent_label = ANY (chosen_experiments.agents)
            OR e.llm_provider || '/' || e.model_name = ANY (chosen_experiments.agents))
       AND (chosen_experiments.mazes IS NULL OR EXISTS (
               SELECT 1 FROM mazes m WHERE m.id = e.maze_id
                  AND (m.name = ANY (chosen_experiments.mazes) OR m.family = ANY (chosen_experiments.mazes))))
       AND (chosen_experiments.prompts IS NULL OR e.prompt_version = ANY (chosen_experiments.prompts))
       AND (chosen_experiments.tags IS NULL OR comment_tags(e.comment) && chosen_experiments.tags)
       AND (chosen_experiments.since IS NULL OR e.started_at >= chosen_experiments.since)
       AND (chosen_experiments.until IS NULL OR e.started_at < chosen_experiments.until)
$$;
