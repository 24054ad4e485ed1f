-- Issue 11: the agent loop as experimental variables (memory across turns, give_up, breakers).

-- give_up: the reason the model gave; CheckProgress ends the experiment with it (an agent ending).
ALTER TABLE experiments ADD COLUMN gave_up_reason text;
-- historyMode summary: the compaction's state between turns (the known map, or the model's running summary).
ALTER TABLE experiments ADD COLUMN memory jsonb NOT NULL DEFAULT '{}';
-- Estimated tokens of every turn's messages so far: what a summary stands for, with the turns' own figures.
ALTER TABLE experiments ADD COLUMN history_tokens bigint NOT NULL DEFAULT 0 CHECK (history_tokens >= 0);

-- The tool results of the turn's last answer (no call of the turn read them; the next turn's conversation
-- does), including the "not executed" results of calls beyond the turn's end.
ALTER TABLE turns ADD COLUMN closing_messages jsonb NOT NULL DEFAULT '[]';
ALTER TABLE turns ADD COLUMN message_tokens integer NOT NULL DEFAULT 0 CHECK (message_tokens >= 0);
-- What the turn's requests left out to fit the context budget, and what a summary replaced:
-- {"dropped_turns", "dropped_actions", "tokens_before", "tokens_after"} and/or
-- {"compaction", "turns_summarised", "tokens_before", "tokens_after"}.
ALTER TABLE turns ADD COLUMN context jsonb;

-- A call that summarised the history (compaction = model) is stored and accounted like the turn's own calls.
ALTER TABLE model_calls ADD COLUMN kind text NOT NULL DEFAULT 'turn' CHECK (kind IN ('turn', 'compaction'));
