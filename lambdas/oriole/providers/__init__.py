"""Model providers: each adapter turns the turn loop's neutral ``ModelRequest`` into its wire format,
calls the model, and turns the answer back into a ``ModelResponse``. Nothing else differs between them."""

from oriole.errors import InvalidModelResponse

MAX_TOKENS_PER_CALL = 10_000_000  # far beyond any context window, far inside the integer columns
MAX_LATENCY_MS = 3_600_000  # an hour: four times the longest request timeout the catalog allows


def reported_count(value: object, what: str, limit: int = MAX_TOKENS_PER_CALL) -> int:
    """A number a provider reports (tokens, milliseconds), checked: absent is 0; a whole number from 0 to
    ``limit`` is kept; anything else (negative, fractional, a string, absurdly large) is an
    ``InvalidModelResponse`` naming it, so no impossible count reaches a total, a cost or a spend cap."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit:
        return value
    raise InvalidModelResponse(f"the provider reported {what} = {value!r:.100}, which is not a count from 0 to "
                               f"{limit:,}; the response was not used")
