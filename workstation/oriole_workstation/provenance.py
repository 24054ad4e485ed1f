"""Where a table's or a figure's numbers come from, as plain data: what every output of a report carries beside it.

The HTML page lists it (``report_html``), a paper table puts it in its caption (``paper_tables``), a figure in its
caption and its SVG metadata (``report_html.figures``), the viewer under its comparison. One reading of the
experiments, so the four never disagree: the sweeps, the code (versions, commits with their uncommitted changes,
harnesses), the model builds their servers reported, the prompts with their hashes, the seeds, how many experiments
and mazes, when they started, when and by what the output was made, and the query.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import oriole
from oriole.provider_registry import PROVIDERS
from oriole.statuses import ExperimentStatus
from oriole_workstation.display import terminal_safe
from oriole_workstation.rows import ComparedExperiment


def natural(name: str) -> tuple:
    """perfect-7 before perfect-11: the numbers in a name compared as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


@dataclass(frozen=True)
class Provenance:
    """One reading of the experiments behind an output, and of the output itself."""

    generated: datetime
    version: str  # the oriole that made the output
    database: str
    scope: str  # the filters and the grouping, in words
    query: str  # the SQL a researcher runs to check a number
    experiments: int
    endings: Counter  # ending (or "running") -> experiments
    sweeps: Counter
    code_versions: Counter
    commits: Counter  # "<commit's first 12>", with " + uncommitted changes" where its checkout held some
    harnesses: Counter  # "<harness version> sha256:<hash's first 12>" (oriole.core.harness)
    models: Counter  # "<provider>/<model> <the build its server reported>" (model_text), models only
    prompts: Counter  # (version, SHA-256 of its text) -> experiments
    seeds: tuple[int, ...]
    mazes: tuple[str, ...]  # names, in natural order
    grids: int  # different grids (by content hash): what an interval over mazes rests on
    started: tuple[datetime, datetime] | None  # the first and the last start

    @property
    def runs(self) -> int:
        return self.endings["success"] + self.endings["agent"]

    def prompt_list(self, digits: int = 64) -> str:
        """``v1 sha256:1a2b... (3)``: each prompt version with its hash's first ``digits`` and its experiments."""
        return listed(
            Counter({f"{version} sha256:{digest[:digits]}": n for (version, digest), n in self.prompts.items()})
        )

    def short(self) -> str:
        """The one line a figure carries under its caption: sweep, code version, date and n."""
        sweeps = ", ".join(sorted(self.sweeps)) or "no sweep"
        codes = ", ".join(sorted(self.code_versions)) or "not recorded"
        return (
            f"{'sweep' if len(self.sweeps) <= 1 else 'sweeps'} {sweeps} · code {codes} · "
            f"{self.generated:%Y-%m-%d} · n = {counted(self.experiments, 'experiment')} on "
            f"{counted(self.grids, 'maze')}"
        )

    def sentence(self) -> str:
        """Every item as one plain sentence: what a paper table's caption ends with."""
        first, last = self.started or (None, None)
        started = f", started {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC" if first and last else ""
        return (
            f"{counted(self.experiments, 'experiment')} ({counted(self.runs, 'decided run')}, "
            f"{counted(self.endings['success'], 'success')}, {self.endings['censored']} censored, "
            f"{counted(self.endings['error'], 'error')}) "
            f"on {counted(self.grids, 'maze')}{started}; "
            f"{'sweeps' if len(self.sweeps) > 1 else 'sweep'} {listed(self.sweeps) or 'none'}; "
            f"code {listed(self.code_versions)}; commits {listed(self.commits)}; harness {listed(self.harnesses)}; "
            f"model builds {listed(self.models) or 'none (no model called)'}; "
            f"prompts {self.prompt_list(12) or 'none'}; "
            f"generated {self.generated:%Y-%m-%d %H:%M} UTC by oriole {self.version} "
            f"from {self.database or 'a database'}; query: {self.query}"
        )

    def metadata(self) -> dict[str, str]:
        """The items as text, by name: what a figure's SVG ``<metadata>`` holds."""
        return {
            "generated": f"{self.generated:%Y-%m-%dT%H:%M:%SZ}",
            "oriole": self.version,
            "database": self.database,
            "scope": self.scope,
            "sweeps": listed(self.sweeps),
            "code-versions": listed(self.code_versions),
            "commits": listed(self.commits),
            "harnesses": listed(self.harnesses),
            "model-builds": listed(self.models),
            "prompts": self.prompt_list(),
            "experiments": str(self.experiments),
            "runs": str(self.runs),
            "mazes": str(self.grids),
            "seeds": " ".join(map(str, self.seeds)),
            "query": self.query,
        }


def counted(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``3 successes``."""
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("s") else "s")


def listed(counter: Counter) -> str:
    """``a (3), b (1)``: each value with how many experiments carry it, in order of the values."""
    return ", ".join(f"{value} ({n})" for value, n in sorted(counter.items(), key=lambda item: str(item[0])))


def read(experiments: Sequence[ComparedExperiment], scope: str, query: str, database: str, now: datetime) -> Provenance:
    """The provenance of an output made ``now`` from ``experiments`` (stored text written out: a caption or an
    SVG shows it, never obeys it)."""
    started = sorted(e.started_at for e in experiments if e.started_at)

    def counted(values: Sequence[str]) -> Counter:
        return Counter(terminal_safe(v) for v in values)

    return Provenance(
        generated=now,
        version=oriole.__version__,
        database=terminal_safe(database),
        scope=terminal_safe(scope),
        query=terminal_safe(query),
        experiments=len(experiments),
        endings=Counter(e.ending or ExperimentStatus.RUNNING.value for e in experiments),
        sweeps=counted([e.sweep_id for e in experiments if e.sweep_id]),
        code_versions=counted([e.code_version or "not recorded" for e in experiments]),
        commits=counted([commit_text(e) for e in experiments]),
        harnesses=counted(
            [
                f"{e.harness_version} sha256:{e.harness_hash[:12]}" if e.harness_hash else "not recorded"
                for e in experiments
            ]
        ),
        models=counted([model_text(e) for e in experiments if PROVIDERS[e.llm_provider].calls_model]),
        prompts=Counter((terminal_safe(e.prompt_version), e.prompt_hash) for e in experiments),
        seeds=tuple(sorted({e.seed for e in experiments if e.seed is not None})),
        mazes=tuple(sorted({terminal_safe(e.maze) for e in experiments}, key=natural)),
        grids=len({e.maze_hash or e.maze for e in experiments}),
        started=(started[0], started[-1]) if started else None,
    )


def commit_text(e: ComparedExperiment) -> str:
    """The commit an experiment's code was built from, as a provenance lists it: its first 12 digits, marked where
    the checkout held uncommitted changes (the commit alone does not name that code) or where that is unknown."""
    if not e.code_commit:
        return "not recorded"
    changes = {True: " + uncommitted changes", False: "", None: " (changes unknown)"}[e.code_dirty]
    return f"{e.code_commit[:12]}{changes}"


HEX_DIGEST = re.compile(r"(?:sha256:)?([0-9a-f]{64})")


def build_text(
    build: str | None,
    software: str | None = None,
    version: str | None = None,
    size: str | None = None,
    quantization: str | None = None,
    profile: str | None = None,
) -> str:
    """The model build a server reported, as a provenance shows it: a digest by its first 12 digits, with the
    server's software and version, the parameter size, the quantisation and an inference profile where told;
    ``build unknown`` where the server was asked and did not say, ``build not recorded`` where it was not asked."""
    if build is None:
        return "build not recorded"
    digest = HEX_DIGEST.fullmatch(build)
    shown = f"sha256:{digest.group(1)[:12]}" if digest else build
    details = [
        " ".join(part for part in (software, version) if part),
        " ".join(part for part in (size, quantization) if part),
        f"via {profile.rsplit('/', 1)[-1]}" if profile else "",
    ]
    extra = "; ".join(d for d in details if d)
    return ("build unknown" if build == "unknown" else f"build {shown}") + (f" ({extra})" if extra else "")


def model_text(e: ComparedExperiment) -> str:
    """``ollama/qwen3:8b build sha256:1a2b3c4d5e6f (Ollama 0.12.6; 8.2B Q4_K_M)``: the agent's model and its build."""
    return f"{e.llm_provider}/{e.model_name} " + build_text(
        e.model_build,
        e.server_software,
        e.server_version,
        e.model_parameter_size,
        e.model_quantization,
        e.inference_profile,
    )
