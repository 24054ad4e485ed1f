-- Issue 15: a third model provider, OpenAI-compatible Chat Completions servers (vLLM, SGLang, llama.cpp,
-- LM Studio, OpenAI). experiments.llm_provider accepts 'openai' beside the other three; nothing else changes.

ALTER TABLE experiments DROP CONSTRAINT experiments_llm_provider_check;
ALTER TABLE experiments ADD CONSTRAINT experiments_llm_provider_check
    CHECK (llm_provider IN ('bedrock', 'ollama', 'openai', 'baseline'));
