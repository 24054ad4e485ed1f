"""Resolving an experiment's configuration snapshot: catalog defaults, then Parameter Store values,
then the execution input's overrides. The snapshot is stored on the experiment and every later step
reads it, never the live Parameter Store, so a sweep that changes parameters cannot race a running
experiment."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from urllib.parse import urlsplit

from oriole.catalog import BY_KEY, BY_NAME, CATALOG, MAX_PRICE_PER_MTOK, Parameter
from oriole.errors import InvalidConfig, InvalidParameter
from oriole.text import bounded, unstorable

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
_SHOWN_CHARS = 200  # how much of a refused value an error message quotes


def _shown(value: object) -> str:
    return bounded(repr(value), _SHOWN_CHARS)


def _check_url(param: Parameter, value: str, where: str) -> None:
    """A base URL with one of the parameter's schemes and a host: nothing else is ever opened (a ``file:``
    URL would be read by the HTTP client), and nothing that does not name a server."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as err:
        raise InvalidConfig(f"{where} is not a URL ({err}); got {_shown(value)}") from None
    if parts.scheme not in param.url_schemes or not parts.hostname:
        raise InvalidConfig(f"{where} must be an {' or '.join(param.url_schemes)} URL with a host, like "
                            f"{param.default}; got {_shown(value)}")
    if parts.query or parts.fragment or any(ch.isspace() or not ch.isprintable() for ch in value):
        raise InvalidConfig(f"{where} must be a base URL without spaces, query or fragment; got {_shown(value)}")


def _check_text(param: Parameter, value: str, where: str) -> None:
    problem = unstorable(value)
    if problem:
        raise InvalidConfig(f"{where} {problem}")
    if param.max_length is not None and len(value) > param.max_length:
        raise InvalidConfig(f"{where} must be at most {param.max_length} characters; got {len(value)}")
    if param.url_schemes:
        _check_url(param, value, where)


def _parse_text(param: Parameter, text: str) -> object:
    """A Parameter Store string or a CLI value as the catalog type (ValueError when it is not one)."""
    if param.type is bool:
        return _BOOLEANS[text.strip().lower()]
    return param.type(text.strip())


def _check_range(param: Parameter, value: object, where: str) -> object:
    """Choices, text, finiteness and the catalog's bounds: every value that passes fits the columns and the
    code."""
    if param.choices and value not in param.choices:
        raise InvalidConfig(f"{where} must be one of {', '.join(param.choices)}; got {_shown(value)}")
    if isinstance(value, str):
        _check_text(param, value, where)
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidConfig(f"{where} must be a finite number; got {value!r}")
    if param.minimum is not None and value < param.minimum:
        raise InvalidConfig(f"{where} must be at least {param.minimum:.15g}; got {value!r}")
    if param.maximum is not None and value > param.maximum:
        raise InvalidConfig(f"{where} must be at most {param.maximum:.15g}; got {value!r}")
    return value


def parse_stored(param: Parameter, text: str) -> object:
    """Parse a Parameter Store string as the catalog type; a bad stored value names the parameter."""
    try:
        value = _parse_text(param, text)
    except (ValueError, KeyError):
        raise InvalidParameter(
            f"Parameter Store value of {param.name} is {_shown(text)}, not {_TYPE_NAMES[param.type]}; "
            f"fix it with `oriole params set` or in the console"
        ) from None
    try:
        return _check_range(param, value, param.name)
    except InvalidConfig as err:
        raise InvalidParameter(str(err)) from None


def check_override(param: Parameter, value: object) -> object:
    """Validate one ``config`` override strictly: booleans are not numbers, strings are not numbers."""
    where = f"config.{param.key}"
    accepted = (float, int) if param.type is float else (param.type,)  # an integer is a fine number
    ok = isinstance(value, accepted) and (param.type is bool) == isinstance(value, bool)
    if not ok:
        raise InvalidConfig(f"{where} must be {_TYPE_NAMES[param.type]}; got {_shown(value)}")
    try:
        typed = param.type(value)
    except OverflowError:  # an integer too large for a float
        raise InvalidConfig(f"{where} must be at most {param.maximum:.15g}; got {_shown(value)}") from None
    return _check_range(param, typed, where)


def resolve(stored: Mapping[str, str], overrides: Mapping[str, object]) -> dict[str, object]:
    """The full configuration snapshot (camelCase keys) for one experiment.

    ``stored`` maps parameter names (``/oriole/...``) to Parameter Store strings; missing entries fall
    back to the catalog default. ``overrides`` are the execution input's ``config``.
    """
    unknown = sorted(set(overrides) - set(BY_KEY))
    if unknown:
        raise InvalidConfig(
            f"unknown config key(s) {', '.join(unknown)}; known keys: "
            + ", ".join(p.key for p in CATALOG if p.overridable)
        )
    fixed = sorted(k for k in overrides if not BY_KEY[k].overridable)
    if fixed:
        raise InvalidConfig(f"config key(s) {', '.join(fixed)} are read at deploy time and cannot be overridden")
    snapshot: dict[str, object] = {}
    for param in CATALOG:
        if not param.overridable:
            continue
        if param.key in overrides:
            snapshot[param.key] = check_override(param, overrides[param.key])
        elif param.name in stored:
            snapshot[param.key] = parse_stored(param, stored[param.name])
        else:
            snapshot[param.key] = param.default
    return snapshot


def parse_assignment(text: str) -> tuple[str, object]:
    """Turn a CLI ``KEY=VALUE`` into a config override, typed and checked against the catalog (the same check
    as an execution input's ``config``, so ``--config`` and ``oriole params set`` refuse what a start would).

    KEY may be the camelCase key or the parameter's path (``max-moves``, ``experiments/max-moves``).
    """
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise InvalidConfig(f"--config expects KEY=VALUE; got {_shown(text)}")
    param = BY_KEY.get(key) or BY_NAME.get(key) or next(
        (p for p in CATALOG if p.path == key or p.path.endswith("/" + key)), None
    )
    if param is None:
        raise InvalidConfig(f"unknown config key {_shown(key)}; see `oriole params list`")
    try:
        value = _parse_text(param, raw)
    except (ValueError, KeyError):
        raise InvalidConfig(f"config {param.key} must be {_TYPE_NAMES[param.type]}; got {_shown(raw)}") from None
    return param.key, check_override(param, value)


def parse_pricing(name: str, text: str | None) -> dict | None:
    """A pricing entry (``{"inputPerMTok": 3.0, "outputPerMTok": 15.0}``, USD per million tokens), or None."""
    if text is None:
        return None
    try:
        value = json.loads(text)
        prices = {key: float(value[key]) for key in ("inputPerMTok", "outputPerMTok")}
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
        raise InvalidParameter(
            f"{name} must be JSON like {{\"inputPerMTok\": 3.0, \"outputPerMTok\": 15.0}}; got {_shown(text)}"
        ) from None
    if not all(0 <= price <= MAX_PRICE_PER_MTOK for price in prices.values()):  # NaN fails every comparison
        raise InvalidParameter(f"{name} must hold prices from 0 to {MAX_PRICE_PER_MTOK:g} USD per million tokens; "
                               f"got {_shown(text)}")
    return prices
