-- The models their servers reported more than one build of among every compared experiment of the database (neither
-- archived nor a replay): the whole comparison splits them on the build (comparison_scope's modelBuild), so the kept
-- groups (regroup_comparisons) are worked out with them, and all again when they change. Through
-- experiments_build_idx.
CREATE FUNCTION compared_builds() RETURNS TABLE (llm_provider text, model_name text)
LANGUAGE sql STABLE AS $$
    SELECT e.llm_provider, e.model_name
      FROM experiments e
     WHERE e.replay_of IS NULL AND e.archived_at IS NULL
     GROUP BY e.llm_provider, e.model_name
    HAVING count(DISTINCT coalesce(e.model_build, '')) > 1
$$;
