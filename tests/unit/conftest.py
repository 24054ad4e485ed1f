"""The unit tier (``make test-unit``): pure code and the adapters' wire formats (over loopback at most), no database
and no waiting on the clock, so it runs in seconds. A unit test that asks for PostgreSQL fails here, naming the tier
it belongs to; a test that waits out real timeouts belongs in tests/integration too."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def server_url() -> str:
    pytest.fail("a unit test asked for PostgreSQL: it belongs in tests/integration", pytrace=False)
