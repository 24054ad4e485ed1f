"""The turn path, built for few round trips: one statement loads everything a turn needs, one statement writes
the whole turn (its actions, model calls, turn row, the experiment's position, counters and aggregates)
atomically. The write is guarded by the experiment's turn counter, so a retried turn that already committed
writes nothing. An attempt that fails after the server answered some of its calls writes them in one statement of
its own on the way out (``record_failed_attempt``), off the path where nothing fails."""

from __future__ import annotations

from psycopg.rows import args_row, scalar_row
from psycopg.types.json import Jsonb

from oriole.catalog import BY_KEY
from oriole.core.memory import carrying_modes
from oriole.core.turn import WORLD_COUNTERS, WORLD_VALUES
from oriole.store.base import StoreBase, compact
from oriole.store.turn_rows import COLUMNS, FailedAttemptWrite, LoadedTurn, TurnWrite


class Turns(StoreBase):
    """A turn's one read and one write."""

    def load_turn(self, experiment_id: int, turn_number: int, with_maze: bool) -> LoadedTurn | None:
        """Everything one turn needs, in one round trip: the experiment, its recent actions (as many as
        its historyActions and recall window need), the earlier turns when its memory mode
        carries them (``carrying_modes``: the statement asks the memory modes, never names one), the maze when
        the caller has not cached it, and the turn's row if it was already committed."""
        return self._one(
            args_row(LoadedTurn.from_values),
            _LOAD_TURN,
            {"id": experiment_id, "turn": turn_number, "with_maze": with_maze, "carrying": _CARRYING},
        )

    def commit_turn(self, experiment_id: int, turn_number: int, write: TurnWrite) -> bool:
        """Write a whole turn (actions, model calls, turn row, experiment) in one statement; False when the
        turn was already committed.

        The experiment update only matches when ``turn_count`` is ``turn_number - 1`` and the experiment
        is running; the turn and action inserts select from that update, so either all of it is written
        or none of it. The experiment's ``stalled_turns`` counts turns in a row without a valid action; its
        aggregates (unique tiles, model calls, latency, the last action's time) are advanced in the same
        update, so the analysis views never aggregate actions.
        """
        committed = self._one(
            scalar_row,
            _COMMIT_TURN,
            {
                **write.experiment,
                **write.turn,
                "id": experiment_id,
                "turn": turn_number,
                "agent_state": Jsonb(write.experiment["agent_state"]),
                "memory": Jsonb(write.experiment["memory"]),
                "closing_messages": Jsonb(write.turn["closing_messages"]),
                "context": None if write.turn["context"] is None else Jsonb(write.turn["context"]),
                **{rows: Jsonb(text, dumps=_as_encoded) for rows, text in write.encoded.items()},
            },
        )
        return bool(committed == 1)

    def record_failed_attempt(self, experiment_id: int, write: FailedAttemptWrite) -> bool:
        """Write a failed attempt of a turn in one statement: its row, the calls the server answered, and what they
        add to the experiment's totals (tokens, cost, calls, latency, throttles, and the ``failed_*`` columns that
        say how much of each total was spent on failed attempts). False when the attempt was already written (the
        statement sent again after a dropped connection: its id is the key) or the experiment is gone."""
        written = self._one(
            scalar_row,
            _RECORD_FAILED_ATTEMPT,
            {
                **write.attempt,
                **{f"spent_{key}": value for key, value in write.spent.items()},
                "id": experiment_id,
                "calls": Jsonb(write.calls),
            },
        )
        return bool(written == 1)


def _as_encoded(text: str) -> str:
    """The ``dumps`` of a jsonb parameter whose JSON text is made already (``TurnWrite.encoded``)."""
    return text


_CARRYING = list(carrying_modes())  # the memory modes whose turns carry earlier turns' messages
_LOAD_TURN = (
    """
    SELECT {columns},
           CASE WHEN %(with_maze)s THEN {maze} END AS maze,
           CASE WHEN t.turn_number IS NOT NULL THEN {committed} END AS committed_turn,
           (SELECT coalesce(json_agg({action} ORDER BY r.step_number), '[]'::json)
              FROM (SELECT a.step_number, a.action_type, a.to_x, a.to_y, a.success, a.error, a.tiles_seen
                      FROM actions a
                     WHERE a.experiment_id = e.id
                     ORDER BY a.step_number DESC
                     LIMIT greatest(coalesce((e.config ->> 'historyActions')::int, {history_actions}),
                                    coalesce((e.config ->> 'maxRecallActions')::int, {recall_actions}))) r)
               AS recent_actions,
           (SELECT jsonb_agg(jsonb_build_object(
                       'number', w.turn_number, 'closing', w.closing_messages, 'message_tokens', w.message_tokens,
                       'calls', (SELECT coalesce(jsonb_agg(jsonb_build_object('request', c.request_messages,
                                                                              'response', c.response)
                                                           ORDER BY c.call_index), '[]'::jsonb)
                                   FROM model_calls c
                                  WHERE c.experiment_id = w.experiment_id AND c.turn_number = w.turn_number
                                    AND c.kind = 'turn'))
                       ORDER BY w.turn_number)
              FROM (SELECT * FROM turns h
                     WHERE h.experiment_id = e.id
                       AND e.config ->> 'historyMode' = ANY(%(carrying)s)
                     ORDER BY h.turn_number DESC
                     LIMIT (e.config ->> 'historyTurns')::int + 1) w) AS earlier_turns,
           -- a replay's scratch experiment: the original's provider and its calls of this turn, answered again
           (SELECT jsonb_build_object('provider', o.llm_provider, 'calls', (
                       SELECT coalesce(jsonb_agg(jsonb_build_object(
                                  'answer', encode(r.answer, 'base64'), 'latency_ms', r.latency_ms,
                                  'throttles', r.throttles, 'retries', r.request -> 'retries') ORDER BY r.call_index),
                                  '[]'::jsonb)
                         FROM model_calls r WHERE r.experiment_id = o.id AND r.turn_number = %(turn)s))
              FROM experiments o WHERE o.id = e.replay_of) AS recorded
      FROM experiments e
      JOIN mazes m ON m.id = e.maze_id
      LEFT JOIN turns t ON t.experiment_id = e.id AND t.turn_number = %(turn)s
     WHERE e.id = %(id)s
""".replace("{columns}", ", ".join(f"e.{column}" for column in COLUMNS))
    .replace("{maze}", LoadedTurn.MAZE_JSON)
    .replace("{committed}", LoadedTurn.COMMITTED_JSON)
    .replace("{action}", LoadedTurn.ACTION_JSON)
    # a snapshot without the key (a baseline's, which applies neither; one taken before the key) reads the default
    .replace("{history_actions}", str(BY_KEY["historyActions"].int_default))
    .replace("{recall_actions}", str(BY_KEY["maxRecallActions"].int_default))
)

# The experiment's columns a turn advances (the turn state's own constants, never input): counters get this
# turn's increments, values are replaced.
_ADVANCE = ", ".join(
    [
        *(f"{c} = {c} + %({c})s" for c in WORLD_COUNTERS),
        *(f"{c} = %({c})s" for c in (*WORLD_VALUES, "current_x", "current_y", "agent_state", "memory")),
    ]
)

# compact: parsed once per process by psycopg, not once a turn (see ``compact``)
_COMMIT_TURN = compact(
    """
    WITH advanced AS (
        UPDATE experiments SET
            {advance},
            turn_count = turn_count + 1,
            input_tokens = input_tokens + %(input_tokens)s,
            output_tokens = output_tokens + %(output_tokens)s,
            cost_usd = cost_usd + %(cost_usd)s,
            throttle_count = throttle_count + %(throttles)s,
            history_tokens = history_tokens + %(message_tokens)s,
            model_calls = model_calls + %(model_calls)s,
            latency_ms = latency_ms + %(latency_ms)s,
            last_action_at = CASE WHEN %(action_count)s > 0 THEN now() ELSE last_action_at END,
            stalled_turns = CASE WHEN %(stalled)s THEN stalled_turns + 1 ELSE 0 END,
            -- tiles first stood on this turn: its positions that no earlier action ended on, the start excepted
            -- (the statement sees the actions as they were before it; one probe of actions_position_idx each)
            unique_tiles_visited = unique_tiles_visited + (
                SELECT count(*)
                  FROM (SELECT DISTINCT a.to_x, a.to_y
                          FROM jsonb_to_recordset(%(actions)s) AS a(to_x integer, to_y integer)) p
                 WHERE NOT EXISTS (SELECT 1 FROM mazes m
                                    WHERE m.id = experiments.maze_id AND m.start_x = p.to_x AND m.start_y = p.to_y)
                   AND NOT EXISTS (SELECT 1 FROM actions o
                                    WHERE o.experiment_id = experiments.id AND o.to_x = p.to_x AND o.to_y = p.to_y))
         WHERE id = %(id)s AND turn_count = %(turn)s - 1 AND status = 'running'
        RETURNING id
    ), turn AS (
        INSERT INTO turns (experiment_id, turn_number, first_step, action_count, model_calls,
                           input_tokens, output_tokens, cost_usd, latency_ms, throttles, end_reason,
                           started_at, closing_messages, message_tokens, context)
        SELECT id, %(turn)s, %(first_step)s, %(action_count)s, %(model_calls)s, %(input_tokens)s,
               %(output_tokens)s, %(cost_usd)s, %(latency_ms)s, %(throttles)s, %(end_reason)s,
               %(started_at)s, %(closing_messages)s, %(message_tokens)s, %(context)s
          FROM advanced
        RETURNING experiment_id
    ), stored_calls AS (
        INSERT INTO model_calls (experiment_id, turn_number, call_index, request_messages, response,
                                 input_tokens, output_tokens, latency_ms, stop_reason, durations,
                                 throttles, kind, request, answer)
        SELECT turn.experiment_id, %(turn)s, c.call_index, c.request_messages, c.response, c.input_tokens,
               c.output_tokens, c.latency_ms, c.stop_reason, c.durations, c.throttles, c.kind, c.request,
               decode(c.answer, 'base64')
          FROM turn, jsonb_to_recordset(%(calls)s) AS c(
               call_index integer, request_messages jsonb, response jsonb, input_tokens integer,
               output_tokens integer, latency_ms integer, stop_reason text, durations jsonb,
               throttles integer, kind text, request jsonb, answer text)
        RETURNING 1
    ), stored_parts AS (
        -- what the calls send alike (system prompt, tools, settings), once per content
        INSERT INTO request_parts (hash, body)
        SELECT p.hash, p.body FROM turn, jsonb_to_recordset(%(parts)s) AS p(hash text, body jsonb)
        ON CONFLICT (hash) DO NOTHING
        RETURNING 1
    ), stored_actions AS (
        INSERT INTO actions (experiment_id, turn_number, step_number, action_type, tool_name, arguments,
                             reasoning, from_x, from_y, to_x, to_y, success, error, tiles_seen,
                             goal_visible)
        SELECT turn.experiment_id, %(turn)s, a.*
          FROM turn, jsonb_to_recordset(%(actions)s) AS a(
               step_number integer, action_type text, tool_name text, arguments jsonb, reasoning text,
               from_x integer, from_y integer, to_x integer, to_y integer, success boolean,
               error text, tiles_seen jsonb, goal_visible boolean)
        RETURNING 1
    )
    SELECT count(*) AS committed FROM turn
""".replace("{advance}", _ADVANCE)
)

_RECORD_FAILED_ATTEMPT = """
    WITH attempt AS (
        INSERT INTO failed_attempts (attempt, experiment_id, turn_number, error, throttles)
        SELECT %(attempt)s, e.id, %(turn_number)s, %(error)s, %(throttles)s FROM experiments e WHERE e.id = %(id)s
        ON CONFLICT (attempt) DO NOTHING
        RETURNING attempt
    ), stored_calls AS (
        INSERT INTO failed_attempt_calls (attempt, call_index, kind, input_tokens, output_tokens, cost_usd,
                                          latency_ms, stop_reason, throttles, response, answer)
        SELECT attempt.attempt, c.call_index, c.kind, c.input_tokens, c.output_tokens, c.cost_usd, c.latency_ms,
               c.stop_reason, c.throttles, c.response, decode(c.answer, 'base64')
          FROM attempt, jsonb_to_recordset(%(calls)s) AS c(
               call_index integer, kind text, input_tokens integer, output_tokens integer, cost_usd numeric,
               latency_ms integer, stop_reason text, throttles integer, response jsonb, answer text)
        RETURNING 1
    ), spent AS (
        UPDATE experiments SET
            input_tokens = input_tokens + %(spent_input_tokens)s,
            output_tokens = output_tokens + %(spent_output_tokens)s,
            cost_usd = cost_usd + %(spent_cost_usd)s,
            model_calls = model_calls + %(spent_model_calls)s,
            latency_ms = latency_ms + %(spent_latency_ms)s,
            throttle_count = throttle_count + %(spent_throttles)s,
            failed_attempts = failed_attempts + 1,
            failed_model_calls = failed_model_calls + %(spent_model_calls)s,
            failed_input_tokens = failed_input_tokens + %(spent_input_tokens)s,
            failed_output_tokens = failed_output_tokens + %(spent_output_tokens)s,
            failed_cost_usd = failed_cost_usd + %(spent_cost_usd)s  -- NULL: unpriced (and NULL stays NULL)
         WHERE id = %(id)s AND EXISTS (SELECT 1 FROM attempt)
        RETURNING 1
    )
    SELECT count(*) FROM spent
"""
