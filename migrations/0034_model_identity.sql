-- Issue 31: which model build answered an experiment, as its server reported it when the experiment started
-- (oriole.providers.identity; asked once, at StartExperiment, never per turn). Ollama: GET /api/version, the
-- model's GET /api/tags entry (its digest) and POST /api/show (parameter size, quantisation); an OpenAI-compatible
-- server: the model's GET /models entry and the answer's Server header; Bedrock: GetInferenceProfile and
-- GetFoundationModel. A server that does not answer one of them leaves its fields NULL and says why in
-- model_identity -> 'unknown'; it never fails the experiment. Every column is NULL where nothing was asked: a
-- baseline (it calls no model) and experiments started before this migration. A replay's copy holds its original's.
-- Per call, the answer's own model and system_fingerprint stay in model_calls.response (where they may change).

ALTER TABLE experiments
    ADD COLUMN model_build text,
    ADD COLUMN reported_model text,
    ADD COLUMN server_software text,
    ADD COLUMN server_version text,
    ADD COLUMN model_parameter_size text,
    ADD COLUMN model_quantization text,
    ADD COLUMN inference_profile text,
    ADD COLUMN model_identity jsonb;

COMMENT ON COLUMN experiments.model_build IS
    'the model build the server reported at start, what comparisons split on: the Ollama digest, the '
    'OpenAI-compatible /models entry''s root (else its id), the Bedrock foundation model''s ARN; ''unknown'' when '
    'the server did not tell it (model_identity -> ''unknown'' says why); NULL when not asked (a baseline, or '
    'started before issue 31)';
COMMENT ON COLUMN experiments.reported_model IS
    'the model as the server names it: the Ollama tag (qwen3:8b), the /models id, the Bedrock model id';
COMMENT ON COLUMN experiments.server_software IS
    'the server software: Ollama, the Server header of an OpenAI-compatible server (uvicorn, llama.cpp...) else '
    'the entry''s owned_by, Amazon Bedrock';
COMMENT ON COLUMN experiments.server_version IS
    'its version: Ollama''s /api/version, an OpenAI-compatible server''s openai-version header, Bedrock''s region';
COMMENT ON COLUMN experiments.model_parameter_size IS 'the parameter size Ollama reports (8.2B)';
COMMENT ON COLUMN experiments.model_quantization IS 'the quantisation level Ollama reports (Q4_K_M)';
COMMENT ON COLUMN experiments.inference_profile IS
    'the Bedrock inference profile''s ARN, when the model id names one (us.anthropic...)';
COMMENT ON COLUMN experiments.model_identity IS
    'what each identity endpoint answered (answers, bounded: /api/version, /api/tags, /api/show, /models with its '
    'headers, GetInferenceProfile, GetFoundationModel) and, per endpoint that told nothing, why (unknown)';
