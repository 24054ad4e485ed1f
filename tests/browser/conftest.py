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


# The texts under a selector that a line break splits anywhere but at a space: what `famil|y` looks like to a test.
BROKEN_WORDS = """selector => {
  const broken = [];
  for (const cell of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      for (let i = 1; i < text.length; i++) {
        if (text[i - 1] === " " || text[i] === " ") continue;
        const range = document.createRange();
        range.setStart(node, i - 1); range.setEnd(node, i);
        const before = range.getBoundingClientRect();
        range.setStart(node, i); range.setEnd(node, i + 1);
        if (range.getBoundingClientRect().top > before.top + 2) broken.push(text);
      }
    }
  }
  return broken;
}"""


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
    page.on(  # a request cut short by leaving the page (a sweep page's poll) is no failure
        "requestfailed",
        lambda request: (
            None
            if request.failure == "net::ERR_ABORTED"
            else problems.append(f"request failed: {request.url}: {request.failure}")
        ),
    )
    page.problems = problems
    yield page
    context.close()
    assert not problems, problems


# The local state machine and the viewer's data, as the integration tier builds them (and the IAM contract over
# every AWS call they make).
from tests.integration.conftest import calls_the_deployed_roles_allow, local  # noqa: E402, F401
from tests.integration.test_viewer import viewed  # noqa: E402, F401


@pytest.fixture(scope="module")
def viewer(database_url) -> Iterator[str]:
    """``oriole view``'s application served on a free loopback port by the server the command uses (werkzeug's,
    threaded) in a thread of this process; its base URL. A sweep page polls every 0.2 s here."""
    import threading

    from werkzeug.serving import make_server

    from oriole_workstation.viewer.app import create_app
    from oriole_workstation.viewer.reader import Reader

    reader = Reader(database_url)
    server = make_server("127.0.0.1", 0, create_app(reader, poll_seconds=0.2), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=10)
    server.server_close()
    reader.close()
