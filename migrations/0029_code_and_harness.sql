-- Issue 31: the code an experiment ran, told apart from any other code.
--
-- code_version said `<version>+local` for every local run, modified or not. Each experiment now records the commit
-- its code was built from, whether that checkout held uncommitted changes, and a hash of the runtime package's files
-- computed where they were imported from (the same for a checkout, a wheel and the Lambda asset: oriole.code_identity);
-- on AWS CDK records the commit and the flag when it synthesizes the stack (the asset carries no git). Experiments
-- started before this migration recorded none of it (NULL: not recorded).
--
-- The harness version: the loop's details that are no setting (the tools' wording, the compaction prompt, the
-- text-tool instructions, the frontier size, the token estimator: oriole.core.harness), named and hashed as one.
-- Its description is kept once per hash in harnesses; each experiment names the one that started it.

CREATE TABLE harnesses (
    hash    text  PRIMARY KEY,
    version text  NOT NULL,
    body    jsonb NOT NULL
);
COMMENT ON TABLE harnesses IS 'the agent loop''s details that are no setting, once per hash (oriole.core.harness)';
COMMENT ON COLUMN harnesses.hash IS 'SHA-256 of the description''s canonical JSON, as experiments.harness_hash names it';
COMMENT ON COLUMN harnesses.version IS 'the harness version''s name (HARNESS_VERSION)';
COMMENT ON COLUMN harnesses.body IS
    'what it holds: the tools as offered, the texts of calls not executed, the compaction prompt, the text-tool '
    'instructions, the frontier size, the token estimator''s rule and its answers on fixed probes';

ALTER TABLE experiments
    ADD COLUMN code_commit text,
    ADD COLUMN code_dirty boolean,
    ADD COLUMN code_hash text,
    ADD COLUMN harness_version text,
    ADD COLUMN harness_hash text REFERENCES harnesses (hash);
COMMENT ON COLUMN experiments.code_version IS
    'the code that started it: the package version and, on AWS, the Lambda asset''s hash (<version>+<12 hex>); '
    'locally <version>+local.<first 12 hex of code_hash>; before issue 31 every local run said <version>+local';
COMMENT ON COLUMN experiments.code_commit IS
    'the git commit its code was built from (on AWS: the checkout CDK synthesized); NULL when not recorded';
COMMENT ON COLUMN experiments.code_dirty IS
    'whether that checkout held uncommitted changes (git status listed anything); NULL when not recorded';
COMMENT ON COLUMN experiments.code_hash IS
    'SHA-256 of the runtime package''s files as imported (oriole and its migrations), the same for a checkout, a '
    'wheel and the Lambda asset of the same code';
COMMENT ON COLUMN experiments.harness_version IS 'the harness version that started it (harnesses.version)';
COMMENT ON COLUMN experiments.harness_hash IS 'the hash of that harness''s description (harnesses.hash)';
