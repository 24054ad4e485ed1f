"""Read a folder of Inspect AI logs with Inspect's own reader and data frames, and print what the tests check as
JSON. Run by the Inspect venv's Python (``.venv-inspect``, ``make test``): tests/integration/test_inspect_export.py
cannot import Inspect, whose dependencies pin a botocore older than the Lambda lock's.

    .venv-inspect/bin/python -m tests.inspect_reader FOLDER
"""

from __future__ import annotations

import json
import sys

from inspect_ai.analysis import samples_df
from inspect_ai.log import list_eval_logs, read_eval_log


def message(m) -> dict:
    parts = m.content if isinstance(m.content, list) else []
    return {
        "role": m.role,
        "text": m.text,
        "images": [p.image for p in parts if p.type == "image"],
        "tool_calls": [
            {"function": c.function, "arguments": c.arguments} for c in getattr(m, "tool_calls", None) or ()
        ],
    }


def sample(s) -> dict:
    return {
        "id": s.id,
        "epoch": s.epoch,
        "scores": {name: score.value for name, score in s.scores.items()},
        "metadata": s.metadata,
        "messages": [message(m) for m in s.messages],
        "events": [{"request": e.call.request, "response": e.call.response} for e in s.events if e.event == "model"],
        "usage": {model: [u.input_tokens, u.output_tokens] for model, u in s.model_usage.items()},
    }


def main(folder: str) -> None:
    logs = []
    for info in list_eval_logs(folder):
        log = read_eval_log(info, resolve_attachments=True)
        logs.append(
            {
                "file": info.name,
                "model": log.eval.model,
                "task": log.eval.task,
                "status": log.status,
                "epochs": log.eval.config.epochs,
                "metadata": log.eval.metadata,
                "results": {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores},
                "samples": [sample(s) for s in log.samples],
            }
        )
    frame = samples_df(folder, quiet=True)
    print(
        json.dumps(
            {
                "logs": logs,
                "frame": {
                    "rows": len(frame),
                    "columns": list(frame.columns),
                    "endings": sorted(set(frame["score_ending"])),
                },
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
