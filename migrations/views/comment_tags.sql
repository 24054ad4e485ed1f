-- The words of an experiment's comment: its tags (`oriole sweep` adds sweep:<id>). experiments_tags_idx (migration
-- 0038) indexes this expression as written: a change here needs a migration that makes the index again.
CREATE FUNCTION comment_tags(comment text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(regexp_split_to_array(nullif(btrim(comment), ''), '\s+'), '{}')
$$;
