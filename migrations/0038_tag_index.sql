-- Issue 33: a comparison or a selection by tag at lab scale.
--
-- `compare_experiments(tag => 'sweep:...')`, `oriole report --tag` and every selection by a word of the comment
-- split each experiment's comment into words (comment_tags) to find the few that carry it: 45-60 ms at 40,000
-- experiments on the development machine, growing with the lab. The words are indexed, so the selection reads the
-- tagged experiments only. The index is over comment_tags' expression as written in views/comment_tags.sql (the
-- planner inlines the function there, and the index matches it; an index on the function itself would stop the
-- views from being made again); the test of the indexes fails when the two part. The index changes when an
-- experiment is inserted or its comment rewritten, never in the turn's write.
CREATE INDEX experiments_tags_idx ON experiments
    USING gin (coalesce(regexp_split_to_array(nullif(btrim(comment), ''), '\s+'), '{}'));
