"""How docs/report-baseline-ladder.png, the HTML report's picture (README, docs), is made, and how a test knows it
is still the page the code draws.

    .venv/bin/python docs/report_image.py      # needs Chromium (Debian: apt-get install chromium)

runs the shipped worked example (sweeps/baseline-ladder.toml, resumed if it ran before) in its own local
database (.oriole/worked-example), records what the page is drawn from in docs/report-baseline-ladder.json,
draws the page and photographs it in headless Chromium. The record carries the page's fingerprint (its
structure: elements, ids, classes, headings, table headers, captions; not coordinates) and the image's hash:
tests/unit/test_readme_image.py draws the page again from the record and fails when the structure changed
without the picture being made again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict
from datetime import UTC, datetime
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
SWEEP = CHECKOUT / "sweeps" / "baseline-ladder.toml"
RECORD = CHECKOUT / "docs" / "report-baseline-ladder.json"
IMAGE = CHECKOUT / "docs" / "report-baseline-ladder.png"
TAG = "sweep:baseline-ladder"
WIDTH = 1400  # the width the page must fit
TEXT_OF = {"h1", "h2", "th", "dt", "figcaption"}  # elements whose text is part of the page's structure
VOID = frozenset({"meta", "br", "rect", "line", "circle", "polygon", "input", "img"})  # elements without content


class _Skeleton(HTMLParser):
    """One line per element: its depth, tag, id and class, and for headings, table headers, terms and captions
    their text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.depth = 0
        self._text_of: list[int] = []

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        self.lines.append(f"{'  ' * self.depth}{tag}#{found.get('id', '')}.{found.get('class', '')}")
        if tag in TEXT_OF:
            self._text_of.append(len(self.lines) - 1)
        if tag not in VOID:
            self.depth += 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.depth -= 1

    def handle_endtag(self, tag):
        if tag not in VOID:
            self.depth -= 1
        if tag in TEXT_OF and self._text_of:
            self._text_of.pop()

    def handle_data(self, data):
        if self._text_of and data.strip():
            self.lines[self._text_of[-1]] += " " + data.strip()


def fingerprint(html: str) -> str:
    """The page's structure as a short hash: what changes when a section, a chart's kind of mark, a heading,
    a column or a caption changes, not when a number or a position does."""
    skeleton = _Skeleton()
    skeleton.feed(html)
    return hashlib.sha256("\n".join(skeleton.lines).encode()).hexdigest()[:16]


def _plain(value: object) -> object:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _typed(row: dict) -> dict:
    """A recorded row as the page reads it: timestamps as datetimes again (numbers stay floats)."""
    return {k: datetime.fromisoformat(v) if k.endswith("_at") and isinstance(v, str) else v for k, v in row.items()}


def load(path: Path = RECORD) -> dict:
    """The recorded page inputs and what was drawn from them, as the typed rows ``Results`` reads (an
    experiment's settings snapshot, left out of the record, as empty)."""
    from oriole_workstation.analysis import GroupRow
    from oriole_workstation.rows import ComparedExperiment

    record = json.loads(path.read_text(encoding="utf-8"))
    return {
        **record,
        "rows": [GroupRow(**{**_typed(r), "confounds": tuple(r["confounds"])}) for r in record["rows"]],
        "experiments": [ComparedExperiment(**{**_typed(e), "config": {}}) for e in record["experiments"]],
        "now": datetime.fromisoformat(record["now"]),
    }


def page_of(record: dict) -> str:
    """The page the record draws, with the code as it is now."""
    from oriole_workstation.grouping import GroupBy
    from oriole_workstation.report_html import page
    from oriole_workstation.results import Filters

    return page(
        record["rows"],
        record["experiments"],
        GroupBy(record["by"]),
        Filters(**{name: tuple(values) for name, values in record["filters"].items()}),
        {},
        database=record["database"],
        now=record["now"],
    )


def _run_the_sweep(home: Path) -> dict:
    """The worked example in its own database (resumed: nothing runs twice); what the page is drawn from."""
    os.environ["ORIOLE_HOME"] = str(home)
    os.environ.pop("DATABASE_URL", None)
    subprocess.run([str(Path(sys.executable).parent / "oriole"), "sweep", str(SWEEP), "--quiet"], check=True)
    from oriole_workstation.analysis import groups
    from oriole_workstation.database import open_results
    from oriole_workstation.grouping import GroupBy
    from oriole_workstation.results import Filters

    results = open_results(aws=False)
    filters = Filters(tags=(TAG,))
    return {
        "by": GroupBy.family.value,
        "filters": {"tags": [TAG]},
        "database": results.database().replace(str(home), "$ORIOLE_HOME"),
        "now": datetime.now(UTC).replace(microsecond=0),
        "rows": [asdict(r) for r in groups(results, filters, GroupBy.family)],
        # without each experiment's settings snapshot: the page reads the compared configuration, not it
        "experiments": [{k: v for k, v in asdict(e).items() if k != "config"} for e in results.compared(filters)],
    }


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        raise SystemExit("needs Chromium: apt-get install chromium (Debian) or put chromium on PATH")
    return found


def _photograph(html: str, target: Path) -> None:
    """The page in headless Chromium, 1,400 px wide, from its top to the end of its charts (the comparison
    table and the experiments follow in the page)."""
    from PIL import Image

    headless = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--hide-scrollbars",
        f"--window-size={WIDTH},8000",
    ]
    with tempfile.TemporaryDirectory() as folder:
        measured = Path(folder) / "measured.html"  # the page with a script that says where its table starts
        measured.write_text(
            html.replace(
                "</body>",
                "<script>document.title = String(Math.round(document"
                '.getElementById("comparison").getBoundingClientRect().top))</script>'
                "</body>",
            ),
            encoding="utf-8",
        )
        dom = subprocess.run(
            [*headless, "--dump-dom", measured.as_uri()], check=True, capture_output=True, text=True
        ).stdout
        height = int(dom.split("<title>", 1)[1].split("</title>", 1)[0]) - 24
        page, shot = Path(folder) / "report.html", Path(folder) / "shot.png"
        page.write_text(html, encoding="utf-8")
        subprocess.run([*headless, f"--screenshot={shot}", page.as_uri()], check=True, capture_output=True)
        picture = Image.open(shot).convert("RGB").crop((0, 0, WIDTH, height))
        picture.quantize(colors=256).save(target, optimize=True)  # a third of the bytes, the same to the eye


def _write(record: dict) -> None:
    """The record as JSON, one table row per line (numbers as numbers, times as ISO 8601)."""
    head = {k: v for k, v in record.items() if k not in ("rows", "experiments")}
    parts = [json.dumps({k: _plain(v) for k, v in head.items()})[:-1]]
    for name in ("rows", "experiments"):
        rows = ",\n".join(json.dumps({k: _plain(v) for k, v in r.items()}) for r in record[name])
        parts.append(f', "{name}": [\n{rows}\n]')
    RECORD.write_text("".join(parts) + "}\n", encoding="utf-8")


def main() -> None:
    record = _run_the_sweep(CHECKOUT / ".oriole" / "worked-example")
    _write(record)
    html = page_of(load())  # drawn from the record as the test reads it back
    _photograph(html, IMAGE)
    _write(record | {"fingerprint": fingerprint(html), "image_sha256": hashlib.sha256(IMAGE.read_bytes()).hexdigest()})
    print(f"wrote {IMAGE.relative_to(CHECKOUT)} and {RECORD.relative_to(CHECKOUT)}")


if __name__ == "__main__":
    main()
