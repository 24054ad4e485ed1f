-- Issues 21 and 25: every model call stored so that its request can be rebuilt exactly and its answer replayed.
-- model_calls.request holds what the call sent beyond its new messages: the system prompt, the tools and the
-- provider's settings (as hashes of request_parts, stored once however many calls send them), the earlier turns
-- its memory mode carried and how many recent actions its context kept after trimming, and the attempts it took.
-- model_calls.answer is the provider's answer exactly as it came (the HTTP body; Bedrock's Converse output without
-- its transport metadata). Rows written before this migration have neither and cannot be replayed.
CREATE TABLE request_parts (
    hash text  PRIMARY KEY,
    body jsonb NOT NULL
);
COMMENT ON TABLE request_parts IS 'what many model calls send alike (a system prompt, tools, settings), by SHA-256';
COMMENT ON COLUMN request_parts.hash IS 'SHA-256 of the part''s canonical JSON, as model_calls.request names it';
COMMENT ON COLUMN request_parts.body IS 'the part as sent: the system prompt, the tool specs or the provider''s settings';

ALTER TABLE model_calls ADD COLUMN request jsonb;
ALTER TABLE model_calls ADD COLUMN answer bytea;
COMMENT ON COLUMN model_calls.request IS 'what the call sent beyond request_messages (oriole.core.requests)';
COMMENT ON COLUMN model_calls.answer IS 'the provider''s answer, verbatim (NULL for a baseline)';

-- A replay's scratch experiment names the experiment it replays; reports and comparisons leave it out.
ALTER TABLE experiments ADD COLUMN replay_of bigint REFERENCES experiments (id);
COMMENT ON COLUMN experiments.replay_of IS 'the experiment this one replays (oriole replay); NULL for a real run';
