-- The words of an experiment's comment: its tags (`oriole sweep` adds sweep:<id>).
CREATE FUNCTION comment_tags(comment text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(regexp_split_to_array(nullif(btrim(comment), ''), '\s+'), '{}')
$$;
