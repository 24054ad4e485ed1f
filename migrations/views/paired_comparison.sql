-- Paired comparisons of agents, one row per two groups of compared_runs (as compare_experiments groups them: agent,
-- prompt and compared configuration, called a and b in a fixed order) within a maze family and size (or a maze), over
-- the runs they share: the same maze and the same seed. A sweep gives every agent the same seed for the same maze and
-- repetition, so its agents pair up run for run. A pair counts where both runs are decided (success or agent failure)
-- and are their repetitions' counted attempts; a group with two decided runs on one (maze, seed) counts its latest.
-- The difference in success (a's rate less b's over the pairs), the exact McNemar test on the discordant pairs, and
-- Holm's step-down correction over every pair of groups of its family and size (or maze). The report adds a paired
-- bootstrap interval over mazes from `per_maze` (oriole_workstation/intervals.py).
CREATE FUNCTION paired_comparison(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'baseline'
    by_maze boolean DEFAULT false,   -- pairs within each maze instead of each maze family and size
    experiments bigint[] DEFAULT NULL  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
) RETURNS TABLE (
    maze_family text, maze_size text, maze text,
    a_llm_provider text, a_model_name text, a_agent_label text, a_prompt_version text, a_prompt_hash text,
    a_config jsonb,
    b_llm_provider text, b_model_name text, b_agent_label text, b_prompt_version text, b_prompt_hash text,
    b_config jsonb,
    pairs bigint,              -- shared (maze, seed) runs, both decided
    mazes bigint,              -- the different mazes of the pairs
    both_succeeded bigint,
    only_a bigint,             -- a succeeded, b did not
    only_b bigint,             -- b succeeded, a did not
    neither bigint,
    a_success_rate numeric,    -- over the pairs
    b_success_rate numeric,    -- over the pairs
    difference numeric,        -- a_success_rate - b_success_rate
    mcnemar_p double precision,  -- exact McNemar (mcnemar_exact), unrounded: a p of 1e-7 stays 1e-7
    holm_p double precision,     -- mcnemar_p after Holm's correction over the rows of its family and size (or maze)
    per_maze jsonb             -- [[pairs, only_a, only_b], ...], one per maze: what a bootstrap over mazes draws
)
LANGUAGE sql STABLE AS $$
    WITH runs AS (
        SELECT DISTINCT ON (r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash,
                            r.config, r.maze_family, r.maze_size, r.maze, r.maze_hash, r.seed)
               r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.config,
               r.maze_family, r.maze_size, r.maze, r.maze_hash, r.seed, r.ending = 'success' AS success
          FROM compared_runs(paired_comparison.model, paired_comparison.prompt, paired_comparison.maze,
                             paired_comparison.since, paired_comparison.until, paired_comparison.tag,
                             paired_comparison.by_maze, paired_comparison.experiments) r
         WHERE r.counted AND r.ending IN ('success', 'agent') AND r.seed IS NOT NULL
         ORDER BY r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.config,
                  r.maze_family, r.maze_size, r.maze, r.maze_hash, r.seed, r.experiment_id DESC
    ), matched AS (
        SELECT a.maze_family, a.maze_size, a.maze,
               a.llm_provider AS a_llm_provider, a.model_name AS a_model_name, a.agent_label AS a_agent_label,
               a.prompt_version AS a_prompt_version, a.prompt_hash AS a_prompt_hash, a.config AS a_config,
               b.llm_provider AS b_llm_provider, b.model_name AS b_model_name, b.agent_label AS b_agent_label,
               b.prompt_version AS b_prompt_version, b.prompt_hash AS b_prompt_hash, b.config AS b_config,
               a.maze_hash, a.success AS a_success, b.success AS b_success
          FROM runs a
          JOIN runs b
            ON (b.maze_family, b.maze_size, b.maze_hash, b.seed) = (a.maze_family, a.maze_size, a.maze_hash, a.seed)
           AND b.maze IS NOT DISTINCT FROM a.maze
           AND (a.llm_provider, a.model_name, coalesce(a.agent_label, ''), a.prompt_version, a.prompt_hash,
                a.config::text)
             < (b.llm_provider, b.model_name, coalesce(b.agent_label, ''), b.prompt_version, b.prompt_hash,
                b.config::text)
    ), per_maze AS (
        SELECT m.maze_family, m.maze_size, m.maze, m.a_llm_provider, m.a_model_name, m.a_agent_label,
               m.a_prompt_version, m.a_prompt_hash, m.a_config, m.b_llm_provider, m.b_model_name, m.b_agent_label,
               m.b_prompt_version, m.b_prompt_hash, m.b_config, m.maze_hash,
               count(*) AS pairs,
               count(*) FILTER (WHERE m.a_success AND m.b_success) AS both_succeeded,
               count(*) FILTER (WHERE m.a_success AND NOT m.b_success) AS only_a,
               count(*) FILTER (WHERE m.b_success AND NOT m.a_success) AS only_b
          FROM matched m
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
    ), grouped AS (
        SELECT p.maze_family, p.maze_size, p.maze, p.a_llm_provider, p.a_model_name, p.a_agent_label,
               p.a_prompt_version, p.a_prompt_hash, p.a_config, p.b_llm_provider, p.b_model_name, p.b_agent_label,
               p.b_prompt_version, p.b_prompt_hash, p.b_config,
               sum(p.pairs)::bigint AS pairs, count(*) AS mazes, sum(p.both_succeeded)::bigint AS both_succeeded,
               sum(p.only_a)::bigint AS only_a, sum(p.only_b)::bigint AS only_b,
               jsonb_agg(jsonb_build_array(p.pairs, p.only_a, p.only_b) ORDER BY p.maze_hash) AS per_maze
          FROM per_maze p
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    ), tested AS (
        SELECT g.*, mcnemar_exact(g.only_a, g.only_b) AS p,
               row_number() OVER panel AS rank, count(*) OVER (PARTITION BY g.maze_family, g.maze_size, g.maze) AS m
          FROM grouped g
        WINDOW panel AS (PARTITION BY g.maze_family, g.maze_size, g.maze
                         ORDER BY mcnemar_exact(g.only_a, g.only_b), g.a_model_name, g.b_model_name,
                                  g.a_agent_label, g.b_agent_label, g.a_config::text, g.b_config::text)
    )
    SELECT t.maze_family, t.maze_size, t.maze,
           t.a_llm_provider, t.a_model_name, t.a_agent_label, t.a_prompt_version, t.a_prompt_hash, t.a_config,
           t.b_llm_provider, t.b_model_name, t.b_agent_label, t.b_prompt_version, t.b_prompt_hash, t.b_config,
           t.pairs, t.mazes, t.both_succeeded, t.only_a, t.only_b, t.pairs - t.both_succeeded - t.only_a - t.only_b,
           round((t.both_succeeded + t.only_a)::numeric / t.pairs, 4),
           round((t.both_succeeded + t.only_b)::numeric / t.pairs, 4),
           round((t.only_a - t.only_b)::numeric / t.pairs, 4),
           t.p,
           max(least(1.0, (t.m - t.rank + 1) * t.p)) OVER (
               PARTITION BY t.maze_family, t.maze_size, t.maze ORDER BY t.rank ROWS UNBOUNDED PRECEDING),
           t.per_maze
      FROM tested t
     ORDER BY t.maze_family, t.maze_size, t.maze NULLS FIRST, t.rank
$$;
