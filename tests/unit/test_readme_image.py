"""The HTML report's picture (README, docs) (docs/report-baseline-ladder.png) is the page the code draws today:
drawn again from the worked example's recorded rows, the page has the structure recorded when the picture was
taken (docs/report_image.py makes both)."""

from __future__ import annotations

import hashlib

from docs import report_image

REGENERATE = "regenerate it: .venv/bin/python docs/report_image.py (needs Chromium)"


def test_the_readme_image_is_of_the_page_as_it_is_drawn_today():
    record = report_image.load()
    assert report_image.fingerprint(report_image.page_of(record)) == record["fingerprint"], (
        f"the report page's structure changed since {report_image.IMAGE.name} was taken; {REGENERATE}"
    )
    assert hashlib.sha256(report_image.IMAGE.read_bytes()).hexdigest() == record["image_sha256"], (
        f"{report_image.IMAGE.name} is not the picture recorded with the page; {REGENERATE}"
    )


def test_the_fingerprint_sees_structure_not_numbers():
    page = report_image.page_of(report_image.load())
    assert report_image.fingerprint(
        page.replace(">100.0%<", ">99.0%<").replace('x="', 'x="1')
    ) == report_image.fingerprint(page)
    assert report_image.fingerprint(page.replace("<h2>Provenance</h2>", "<h2>Origin</h2>")) != report_image.fingerprint(
        page
    )
    assert report_image.fingerprint(page.replace('class="count"', 'class="tally"', 1)) != report_image.fingerprint(page)
