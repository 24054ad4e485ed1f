"""How every adapter waits before it asks a model again after an attempt another attempt may fix (a throttle, a busy
or unreachable server): exponential backoff with full jitter, the schedule AWS recommends ("Exponential Backoff And
Jitter"). The wait before a retry is drawn uniformly between 0 and a cap that doubles with each retry, so turns that
failed together spread out instead of retrying in step. The HTTP transport (``oriole.providers.transport``) and the
Bedrock adapter both retry by this one schedule; what each retries, and for how long, is theirs."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_BACKOFF_SECONDS = 20.0  # no single wait longer than this, however many retries came before


@dataclass(frozen=True)
class Backoff:
    """At most ``attempts`` attempts in all (the first included), waiting ``wait(retry)`` seconds before each retry
    through ``sleep`` (a test records the waits instead of waiting)."""

    attempts: int
    base_seconds: float
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    cap_seconds: float = MAX_BACKOFF_SECONDS

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("a request needs at least 1 attempt")

    def wait(self, retry: int) -> float:
        """The wait before retry number ``retry`` (1 for the first): uniform in [0, base x 2^(retry-1)], capped."""
        return random.uniform(0, min(self.cap_seconds, self.base_seconds * 2 ** (retry - 1)))

    def allows(self, attempt: int) -> bool:
        """Whether another attempt may follow attempt number ``attempt``."""
        return attempt < self.attempts
