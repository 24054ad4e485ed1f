"""Resolving an experiment's configuration snapshot: catalog defaults, then Parameter Store values,
then the execution input's overrides. The snapshot is stored on the experiment and every later step
reads it, never the live Parameter Store, so a sweep that changes parameters cannot race a running
experiment."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from oriole.catalog import BY_KEY, BY_NAME, CATALOG, Parameter
from oriole.errors import InvalidConfig, InvalidParameter

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


def _parse_text(param: Parameter, text: str) -> object:
    """A Parameter Store string or a CLI value as the catalog type (ValueError when it is not one)."""
    if param.type is bool:
        return _BOOLEANS[text.strip().lower()]
    return param.type(text.strip())


def _check_range(param: Parameter, value: object, where: str) -> object:
    """Choices, finiteness and the catalog's bounds: every value that passes fits the columns and the code."""
    if param.choices and value not in param.choices:
        raise InvalidConfig(f"{where} must be one of {', '.join(param.choices)}; got {value!r}")
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
            f"Parameter Store value of {param.name} is {text!r}, not {_TYPE_NAMES[param.type]}; "
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
        raise InvalidConfig(f"{where} must be {_TYPE_NAMES[param.type]}; got {value!r}")
    return _check_range(param, param.type(value), where)


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
    """Turn a CLI ``KEY=VALUE`` into a config override, typed by the catalog.

    KEY may be the camelCase key or the parameter's path (``max-moves``, ``experiments/max-moves``).
    """
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise InvalidConfig(f"--config expects KEY=VALUE; got {text!r}")
    param = BY_KEY.get(key) or BY_NAME.get(key) or next(
        (p for p in CATALOG if p.path == key or p.path.endswith("/" + key)), None
    )
    if param is None:
        raise InvalidConfig(f"unknown config key {key!r}; see `oriole params list`")
    try:
        value = _parse_text(param, raw)
    except (ValueError, KeyError):
        raise InvalidConfig(f"config {param.key} must be {_TYPE_NAMES[param.type]}; got {raw!r}") from None
    return param.key, value


def parse_pricing(name: str, text: str | None) -> dict | None:
    """A pricing entry (``{"inputPerMTok": 3.0, "outputPerMTok": 15.0}``, USD per million tokens), or None."""
    if text is None:
        return None
    try:
        value = json.loads(text)
        prices = {key: float(value[key]) for key in ("inputPerMTok", "outputPerMTok")}
    except (ValueError, TypeError, KeyError):
        raise InvalidParameter(
            f"{name} must be JSON like {{\"inputPerMTok\": 3.0, \"outputPerMTok\": 15.0}}; got {text!r}"
        ) from None
    if min(prices.values()) < 0:
        raise InvalidParameter(f"{name} has a negative price: {text!r}")
    return prices
