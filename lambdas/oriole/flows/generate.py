"""``make flows`` (``python -m oriole.flows.generate``): write every generated part of the flow files from the code
that generates it, so that a new provider (one entry in ``oriole.provider_registry``) reaches each of them:
``sweep.asl.json`` whole (``sweep_flow``) and the provider branches of ``experiment.asl.json``
(``experiment_flow``). The two flow diagrams are drawn by the same modules when the docs site is built
(``docs/generated.py``). The unit tests fail whenever a committed file differs from what this writes.
"""

from __future__ import annotations

from pathlib import Path

from oriole.flows import EXPERIMENT, SUFFIX, experiment_flow, sweep_flow

FOLDER = Path(__file__).parent


def outputs() -> dict[Path, str]:
    """Each generated file and what it must hold."""
    experiment = FOLDER / (EXPERIMENT + SUFFIX)
    return {
        sweep_flow.FILE: sweep_flow.generate(),
        experiment: experiment_flow.generate(experiment.read_text(encoding="utf-8")),
    }


def main() -> None:
    for path, text in outputs().items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
