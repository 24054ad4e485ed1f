-- Issue 23: a provider is one registration (oriole.provider_registry). experiments.llm_provider references the
-- providers table, which every migrate writes from the registry (a provider is added, never removed: its experiments
-- keep it), instead of a CHECK that a migration had to widen for each new provider (0010 did for openai).
CREATE TABLE providers (
    name  text PRIMARY KEY,
    label text NOT NULL
);
COMMENT ON COLUMN providers.name IS 'llmProvider in an execution input, experiments.llm_provider';
COMMENT ON COLUMN providers.label IS 'how the flows name it: Invoke<label>Agent, <label>Repetitions';

-- The providers of the rows stored so far, so that the reference holds at once; the registry's labels follow.
INSERT INTO providers (name, label) SELECT DISTINCT llm_provider, llm_provider FROM experiments;

ALTER TABLE experiments DROP CONSTRAINT experiments_llm_provider_check;
ALTER TABLE experiments ADD CONSTRAINT experiments_llm_provider_fkey
    FOREIGN KEY (llm_provider) REFERENCES providers (name);
