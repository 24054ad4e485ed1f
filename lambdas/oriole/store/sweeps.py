"""A sweep's bookkeeping: its experiments (those StartExperiment recorded as the sweep's, ``experiments.sweep_id``;
each repetition by its agent id ``<sweep id>/<cell key>/r<repetition>``), what they have spent (deleted ones
included), and the outcome of the executions its items started."""

from __future__ import annotations

import pydantic.dataclasses
from psycopg.rows import class_row, scalar_row, tuple_row
from psycopg.types.json import Jsonb

from oriole.core.sweep_plan import SweepExperiment
from oriole.statuses import ExperimentStatus
from oriole.store.base import StoreBase
from oriole.text import JsonObject

_SWEEP_EXPERIMENT = (
    "SELECT id, agent_id, status, ending, origin_execution_arn, "
    "       execution_arns[cardinality(execution_arns)] AS last_execution_arn, "
    "       input_tokens + output_tokens AS tokens, cost_usd::float AS cost_usd, failure_reason "
    "  FROM experiments "
)


@pydantic.dataclasses.dataclass(frozen=True)
class ExecutionOutcome:
    """The experiment an execution started: its status, and whether it is closed."""

    status: ExperimentStatus
    completed: bool


class Sweeps(StoreBase):
    """The sweep state machine's reads of ``experiments``."""

    def sweep_experiments(self, sweep_id: str) -> list[SweepExperiment]:
        """Every experiment a sweep started, oldest first, with the execution that runs it now and what it has
        spent."""
        return self._all(
            class_row(SweepExperiment),
            _SWEEP_EXPERIMENT + "WHERE sweep_id = %s ORDER BY id",
            (sweep_id,),
        )

    def record_sweep_plan(self, sweep_id: str, planned: int, run_input: JsonObject) -> None:
        """Keep the sweep's latest plan (PlanSweep, on every run and resume): what ``oriole sweep status`` says is
        planned and left once the run that planned it has gone."""
        self._rows(
            tuple_row,
            "INSERT INTO sweeps (id, planned, spend_limit_usd, seed_from, run_input) "
            "VALUES (%(id)s, %(planned)s, %(limit)s, %(seed_from)s, %(input)s) "
            "ON CONFLICT (id) DO UPDATE SET planned = EXCLUDED.planned, spend_limit_usd = EXCLUDED.spend_limit_usd, "
            "seed_from = EXCLUDED.seed_from, run_input = EXCLUDED.run_input, planned_at = now()",
            {
                "id": sweep_id,
                "planned": planned,
                "limit": run_input.get("spend_limit_usd"),
                "seed_from": run_input.get("seed_from"),
                "input": Jsonb(run_input),
            },
        )

    def sweep_spend(self, sweep_id: str) -> float:
        """Dollars spent so far by a sweep's experiments, running ones included, and by those deleted since."""
        spent: float | None = self._one(
            scalar_row,
            "SELECT (coalesce((SELECT sum(cost_usd) FROM experiments WHERE sweep_id = %(id)s), 0) "
            "        + coalesce((SELECT deleted_cost_usd FROM sweeps WHERE id = %(id)s), 0))::float",
            {"id": sweep_id},
        )
        return spent or 0.0

    def sweep_committed(self, sweep_id: str) -> float:
        """Dollars a sweep has spent or may still spend: its closed experiments' costs and those deleted since,
        and each running one at its cap (``maxCostUsd`` of its snapshot; what it spent when that is more, or when
        it has none)."""
        committed: float | None = self._one(
            scalar_row,
            "SELECT (coalesce((SELECT sum(CASE WHEN completed_at IS NULL "
            "        THEN greatest(cost_usd, coalesce((config->>'maxCostUsd')::numeric, cost_usd)) "
            "        ELSE cost_usd END) FROM experiments WHERE sweep_id = %(id)s), 0) "
            "        + coalesce((SELECT deleted_cost_usd FROM sweeps WHERE id = %(id)s), 0))::float",
            {"id": sweep_id},
        )
        return committed or 0.0

    def repetition_attempts(self, sweep_id: str, agent_id: str) -> list[SweepExperiment]:
        """The experiments of one repetition of a sweep (its agent id), oldest first."""
        return self._all(
            class_row(SweepExperiment),
            _SWEEP_EXPERIMENT + "WHERE sweep_id = %s AND agent_id = %s ORDER BY id",
            (sweep_id, agent_id),
        )

    def agent_latest(
        self, sweep_id: str, provider: str, model: str, label: str | None, count: int
    ) -> list[SweepExperiment]:
        """An agent's (provider, model and sweep-file label) latest ``count`` closed experiments of the sweep's
        current run (started since its plan was last recorded), the latest closed first: what pauses an agent
        whose server keeps failing (``sweep_plan.pause_reason``)."""
        return self._all(
            class_row(SweepExperiment),
            _SWEEP_EXPERIMENT + "WHERE sweep_id = %(id)s AND llm_provider = %(provider)s AND model_name = %(model)s "
            "AND agent_label IS NOT DISTINCT FROM %(label)s AND completed_at IS NOT NULL "
            "AND started_at >= (SELECT planned_at FROM sweeps WHERE id = %(id)s) "
            "ORDER BY completed_at DESC, id DESC LIMIT %(count)s",
            {
                "id": sweep_id,
                "provider": provider,
                "model": model,
                "label": label,
                "count": count,
            },
        )

    def execution_outcome(self, execution_arn: str) -> ExecutionOutcome | None:
        """The status of the experiment an execution started, and whether it is closed (None: no experiment:
        its start was rejected, or has not run yet)."""
        return self._one(
            class_row(ExecutionOutcome),
            "SELECT status, completed_at IS NOT NULL AS completed FROM experiments WHERE origin_execution_arn = %s",
            (execution_arn,),
        )
