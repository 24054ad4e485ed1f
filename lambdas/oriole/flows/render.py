"""``make flows`` (``python -m oriole.flows.render``): write every generated part of the flows from the code that
generates it, so that a new provider (one entry in ``oriole.provider_registry``) reaches each of them:
``sweep.asl.json`` whole (``sweep_flow``), the provider branches of ``experiment.asl.json`` (``experiment_flow``)
and, in a checkout, the two flow diagrams of the README (between their ``<!-- make flows: ... -->`` markers).
The unit tests fail whenever a committed file differs from what this writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from oriole.flows import EXPERIMENT, SUFFIX, experiment_flow, sweep_flow

FOLDER = Path(__file__).parent
README = FOLDER.parents[2] / "README.md"  # the repository's, when the package runs from a checkout
DIAGRAMS = {"experiment flow": experiment_flow.diagram, "sweep flow": sweep_flow.diagram}


def diagram_block(name: str) -> re.Pattern[str]:
    """The README's code block between ``<!-- make flows: NAME -->`` and ``<!-- /make flows -->``."""
    return re.compile(rf"(<!-- make flows: {name} -->\n```\n)(.*?)(```\n<!-- /make flows -->)", re.DOTALL)


def _between_markers(draw: Callable[[], str]) -> Callable[[re.Match[str]], str]:
    """A block's new text: its markers around the diagram ``draw`` makes."""
    return lambda match: match[1] + draw() + match[3]


def readme(text: str) -> str:
    """The README with each flow diagram as its module draws it."""
    for name, draw in DIAGRAMS.items():
        text, found = diagram_block(name).subn(_between_markers(draw), text)
        if found != 1:
            raise ValueError(f"README.md must hold the block <!-- make flows: {name} --> once")
    return text


def outputs() -> dict[Path, str]:
    """Each generated file and what it must hold."""
    experiment = FOLDER / (EXPERIMENT + SUFFIX)
    written = {sweep_flow.FILE: sweep_flow.render(),
               experiment: experiment_flow.render(experiment.read_text(encoding="utf-8"))}
    if README.is_file():
        written[README] = readme(README.read_text(encoding="utf-8"))
    return written


def main() -> None:
    for path, text in outputs().items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
