"""What ``oriole sweep`` tells before and after a run: the cells as they will run (a dry run: one line each, with
its seed and the server its model is sent to), the price each model is charged at, the caps they run under, and
where a sweep stands (``oriole sweep status``: planned, done, running, left, spent)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from oriole import catalog
from oriole.core import prices, sweep_plan
from oriole.core.sweep_agents import model_server
from oriole.core.sweep_plan import Cell, Planned, SweepExperiment, SweepFile
from oriole.provider_registry import PROVIDERS
from oriole.statuses import Ending, ExperimentStatus
from oriole_workstation.display import total_dollars
from oriole_workstation.outcomes import outcome_text
from oriole_workstation.rows import SweepPlan


def plan_line(item: Planned, spec: SweepFile, defaults: Mapping[str, object]) -> str:
    """``<agent id>  <agent> <prompt> <maze> <overrides> r<n>  seed=<seed>  -> <server>``: one planned experiment."""
    server = model_server(item.cell.provider, item.cell.config, defaults)
    return f"{item.agent_id(spec.id)}  {item.cell.describe()} r{item.repetition}  seed={item.seed(spec)}  -> {server}"


def price_lines(matrix: list[Cell], stored: Mapping[str, str], allow_unpriced: bool) -> list[str]:
    """The price each model of the sweep is charged at, and where it comes from, once per agent; a model without
    one says its cost is unknown (shown ``unpriced``; $0 toward a spend limit only with --allow-unpriced)."""
    lines, seen = [], set()
    for cell in matrix:
        if not PROVIDERS[cell.provider].calls_model or (cell.agent, cell.prices) in seen:
            continue
        seen.add((cell.agent, cell.prices))
        found = prices.price(cell.provider, cell.model, cell.prices, stored.get(catalog.pricing_name(cell.model)))
        if found is not None:
            lines.append(f"price of {cell.agent}: {found.describe()}")
        else:
            lines.append(
                f"price of {cell.agent}: unknown, its cost shows as unpriced"
                + (
                    " (--allow-unpriced)"
                    if allow_unpriced
                    else f" (set one: `oriole prices set {cell.model} --input X --output Y`)"
                )
            )
    return lines


def caps_line(spec: SweepFile, matrix: list[Cell], todo: list[Cell], aws: bool) -> str:
    """The caps the sweep's experiments left to run (``todo``) run under, as PlanSweep sets them: per provider's
    map and per lane (a capped agent or server), then the total, e.g. ``experiments at once: baseline 2, agent
    qwen @ gpu-a 1, server http://gpu-b:11434 2 (2 in all)``."""
    lanes = sweep_plan.capped_lanes(spec, matrix)
    used = {sweep_plan.lane_of(cell, lanes) for cell in set(todo)}
    caps = sweep_plan.caps(spec, used, None, lanes)
    named = {lane.name: lane.describe() for lane in lanes}
    groups = [group for group in caps if group in used]
    total = f"{spec.concurrency} in all" if spec.concurrency else "no total cap"
    where = ", within the account's Lambda concurrency" if aws else ""
    shown = ", ".join(f"{named.get(group, group)} {caps[group]}" for group in groups) or "nothing to run"
    return f"experiments at once: {shown} ({total}{where})"


@dataclass(frozen=True)
class SweepStatus:
    """Where a sweep stands, each repetition by its latest experiment: what ``oriole sweep status`` prints and
    the viewer's sweep page shows (and updates live). ``planned`` and ``left`` are None when the sweep's plan is
    not recorded in this database."""

    sweep_id: str
    planned: int | None
    done: int
    running: int
    left: int | None
    outcomes: dict[str, int]  # an ending in words -> repetitions, most first
    errors: dict[str, int]  # the failure reason of an error ending -> repetitions, most first
    spent: str  # what its runs cost, in words (``total_dollars``: a sum, a lower bound, or unpriced)
    tokens: int
    spend_limit: float | None
    first_planned_at: datetime | None
    planned_at: datetime | None


def sweep_status(sweep_id: str, plan: SweepPlan | None, rows: list[SweepExperiment]) -> SweepStatus:
    """The status from the sweep's latest plan (``sweeps``, None when it was never planned here) and its
    experiments (oldest first)."""
    latest = {row.agent_id: row for row in rows}
    running = sum(row.status == ExperimentStatus.RUNNING for row in latest.values())
    done = len(latest) - running
    outcomes = Counter(
        outcome_text(row.status, row.failure_reason)
        for row in latest.values()
        if row.status != ExperimentStatus.RUNNING
    )
    return SweepStatus(
        sweep_id=sweep_id,
        planned=plan.planned if plan else None,
        done=done,
        running=running,
        left=max(plan.planned - done - running, 0) if plan else None,
        outcomes=dict(sorted(outcomes.items(), key=lambda item: -item[1])),
        errors=dict(
            Counter(
                row.failure_reason or "no reason" for row in latest.values() if row.ending == Ending.ERROR
            ).most_common()
        ),
        spent=total_dollars([row.cost_usd for row in rows]),
        tokens=sum(row.tokens for row in rows),
        spend_limit=float(plan.spend_limit_usd) if plan and plan.spend_limit_usd is not None else None,
        first_planned_at=plan.first_planned_at if plan else None,
        planned_at=plan.planned_at if plan else None,
    )


def status_lines(sweep_id: str, plan: SweepPlan | None, rows: list[SweepExperiment]) -> list[str]:
    """Where a sweep stands, in three lines: the counts, the endings, the spending."""
    status = sweep_status(sweep_id, plan, rows)
    if status.first_planned_at is not None and status.planned_at is not None:
        head = (
            f"sweep {sweep_id}: {status.planned} planned, {status.done} done, {status.running} running, "
            f"{status.left} left (planned {_when(status.first_planned_at)}, last run {_when(status.planned_at)})"
        )
    else:
        head = (
            f"sweep {sweep_id}: {status.done} done, {status.running} running (its plan is not recorded in this "
            "database)"
        )
    limit = f" of ${status.spend_limit:,.2f}" if status.spend_limit is not None else ""
    parts = ", ".join(f"{n} {words}" for words, n in status.outcomes.items())
    why = [f"error ({n}): {reason}" for reason, n in list(status.errors.items())[:MAX_REASONS]]
    if len(status.errors) > MAX_REASONS:
        why.append(f"... and {len(status.errors) - MAX_REASONS} other error reason(s)")
    return [head, f"done: {parts or 'none'}", *why, f"spent {status.spent}{limit} · {status.tokens:,} tokens"]


MAX_REASONS = 5  # the error reasons `oriole sweep status` lists, the most frequent first


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
