"""The browser tier: pages driven in headless Chromium by Playwright, as a person would use them (navigation, live
updates, the replay's controls, hostile text shown as text). Debian's Chromium (``/usr/bin/chromium``, installed by
``make test``; ``ORIOLE_CHROMIUM`` names another) is driven through Playwright's ``executable_path``: Playwright's
own browser downloads are never used. Every page is looked at 1,400 px wide, the width the pages must fit."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

WIDTH, HEIGHT = 1400, 900
CHROMIUM = os.environ.get("ORIOLE_CHROMIUM", "/usr/bin/chromium")
# What this machine's Chromium needs headless, as root, with no network: no sandbox (root), no GPU, no calls home.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium", pytrace=False)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator:
    """A fresh page 1,400 px wide; every console error and failed request it meets fails the test."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on(
        "console",
        lambda message: problems.append(f"console {message.type}: {message.text}") if message.type == "error" else None,
    )
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    page.problems = problems
    yield page
    context.close()
    assert not problems, problems
