"""What ``oriole sweep`` tells before and after a run: the cells as they will run (a dry run: one line each, with
its seed and the server its model is sent to), the price each model is charged at, and where a sweep stands
(``oriole sweep status``: planned, done, running, left, spent)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime

from oriole import catalog
from oriole.core import prices
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


def status_lines(sweep_id: str, plan: SweepPlan | None, rows: list[SweepExperiment]) -> list[str]:
    """Where a sweep stands, from its latest plan (``sweeps``, None when it was never planned here) and its
    experiments (oldest first): each repetition by its latest experiment."""
    latest = {row.agent_id: row for row in rows}
    running = sum(row.status == ExperimentStatus.RUNNING for row in latest.values())
    done = len(latest) - running
    outcomes = Counter(
        outcome_text(row.status, row.failure_reason)
        for row in latest.values()
        if row.status != ExperimentStatus.RUNNING
    )
    spent = total_dollars([row.cost_usd for row in rows])
    tokens = sum(row.tokens for row in rows)
    if plan is not None:
        left = max(plan.planned - done - running, 0)
        head = (
            f"sweep {sweep_id}: {plan.planned} planned, {done} done, {running} running, {left} left "
            f"(planned {_when(plan.first_planned_at)}, last run {_when(plan.planned_at)})"
        )
        limit = f" of ${float(plan.spend_limit_usd):,.2f}" if plan.spend_limit_usd is not None else ""
    else:
        head = f"sweep {sweep_id}: {done} done, {running} running (its plan is not recorded in this database)"
        limit = ""
    parts = ", ".join(f"{n} {words}" for words, n in sorted(outcomes.items(), key=lambda item: -item[1]))
    errors = Counter(row.failure_reason or "no reason" for row in latest.values() if row.ending == Ending.ERROR)
    why = [f"error ({n}): {reason}" for reason, n in errors.most_common(MAX_REASONS)]
    if len(errors) > MAX_REASONS:
        why.append(f"... and {len(errors) - MAX_REASONS} other error reason(s)")
    return [head, f"done: {parts or 'none'}", *why, f"spent {spent}{limit} · {tokens:,} tokens"]


MAX_REASONS = 5  # the error reasons `oriole sweep status` lists, the most frequent first


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
