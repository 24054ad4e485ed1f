"""Resolving an experiment's configuration snapshot: catalog defaults, then Parameter Store values,
then the execution input's overrides. The snapshot is stored on the experiment and every later step
reads it, never the live Parameter Store, so a sweep that changes parameters cannot race a running
experiment."""

from __future__ import annotations

import difflib
import ipaddress
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from oriole.catalog import BY_KEY, BY_NAME, CATALOG, MAX_PRICE_PER_MTOK, Parameter, applies, applying, setting_text
from oriole.errors import InvalidConfig, InvalidParameter
from oriole.text import JsonObject, ascii_float, ascii_int, bounded, load_json, unstorable

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
_SHOWN_CHARS = 200  # how much of a refused value an error message quotes


def _shown(value: object) -> str:
    return bounded(repr(value), _SHOWN_CHARS)


_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<authority>[^/]*)(?P<path>.*)")
_HOST = re.compile(r"\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|[A-Za-z0-9][A-Za-z0-9.-]*")
_PORT = re.compile(r":(?P<port>[0-9]{1,5})")
_PATH = re.compile(r"(?:/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})*)*")


def without_userinfo(url: str) -> str:
    """``url`` as a message may quote it: whatever precedes its last ``@`` (a user name, a password) hidden."""
    if "@" not in url:
        return url
    scheme = url.split("://", 1)[0] + "://" if "://" in url else ""
    return f"{scheme}***@{url.rsplit('@', 1)[1]}"


def url_problem(value: str, schemes: tuple[str, ...]) -> str | None:
    """Why ``value`` is not a base URL oriole will send requests (and an API key) to, or None when it is one.

    A base URL is ``scheme://host[:port][/path]`` in printable ASCII: the host a name, an IPv4 address or a
    bracketed IPv6 address. Everything on which URL parsers disagree, and which could send a request or a
    credential somewhere else than the host a reader sees, is refused: user information (``user:password@``,
    and any ``@`` before the path), a backslash, a percent sign or a zone in the host, spaces and control
    characters, a query or a fragment (``http://evil#@good``), non-ASCII characters (write a host in its
    ``xn--`` form). Only the ``schemes`` given are opened (a ``file:`` URL would be read by the HTTP client).
    """
    if not all("!" <= ch <= "~" for ch in value) or "?" in value or "#" in value:
        return "must be a base URL of printable ASCII characters without spaces, query or fragment"
    if "\\" in value:
        return "must not contain a backslash (URL parsers disagree on what it means)"
    match = _URL.fullmatch(value)
    if match is None or match["scheme"].lower() not in schemes:
        return f"must be an {' or '.join(schemes)} URL with a host"
    authority = match["authority"]
    if "@" in authority:
        return (
            "must not hold a user name or password (user:password@...): credentials are never sent in a URL; "
            "an API key comes from the deployment's secret or the provider's API key variable"
        )
    host = _HOST.match(authority)
    port = _PORT.fullmatch(authority[host.end() :]) if host else None
    if (
        host is None
        or (port is None and host.end() != len(authority))
        or (host["ipv6"] is not None and not _ipv6(host["ipv6"]))
    ):
        return (
            f"must be an {' or '.join(schemes)} URL with a host: a name, an IPv4 address or a bracketed IPv6 "
            "address (no zone), and an optional port"
        )
    if port is not None and not 1 <= int(port["port"]) <= 65535:
        return "must have a port from 1 to 65535"
    if not _PATH.fullmatch(match["path"]):
        return "must have a path of letters, digits, '/', '.', '-', '_', '~' or %XX escapes"
    return None


def canonical_value(param: Parameter, value: object) -> object:
    """A checked value as two experiments are compared: ``-0.0`` is ``0.0``; a base URL without a trailing ``/``,
    its scheme and host in lower case and a default port left out."""
    if isinstance(value, float):
        return value + 0.0  # -0.0 + 0.0 is 0.0
    if not (isinstance(value, str) and param.url_schemes):
        return value
    match = _URL.fullmatch(value)
    assert match is not None, "a value with url_schemes was checked as a URL before it is compared"
    scheme, authority = match["scheme"].lower(), match["authority"].lower()
    authority = authority.removesuffix({"http": ":80", "https": ":443"}[scheme])
    return f"{scheme}://{authority}{match['path'].rstrip('/')}"


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _check_url(param: Parameter, value: str, where: str) -> None:
    problem = url_problem(value, param.url_schemes)
    if problem:
        raise InvalidConfig(f"{where} {problem}, like {param.default}; got {_shown(without_userinfo(value))}")


def _check_text(param: Parameter, value: str, where: str) -> None:
    problem = unstorable(value)
    if problem:
        raise InvalidConfig(f"{where} {problem}")
    if param.max_length is not None and len(value) > param.max_length:
        raise InvalidConfig(f"{where} must be at most {param.max_length} characters; got {len(value)}")
    if param.url_schemes:
        _check_url(param, value, where)


def _parse_text(param: Parameter, text: str) -> object:
    """A Parameter Store string or a CLI value as the catalog type (ValueError when it is not one): a number
    in ASCII digits only (``oriole.text.ascii_int``), an integer setting never from ``3.0`` or ``true``."""
    text = text.strip()
    if param.type is bool:
        return _BOOLEANS[text.lower()]
    if param.type is str:
        return text
    value = ascii_int(text) if param.type is int else ascii_float(text)
    if value is None:
        raise ValueError(f"not {_TYPE_NAMES[param.type]}")
    return value


def _expected(param: Parameter) -> str:
    """What a value of ``param`` is, as a refusal says it: ``an integer from 1 to 1000000``."""
    bounds = f" from {param.minimum:.15g} to {param.maximum:.15g}" if param.maximum is not None else ""
    return _TYPE_NAMES[param.type] + bounds


def _range(param: Parameter) -> str:
    return f" (from {param.minimum:.15g} to {param.maximum:.15g})" if param.maximum is not None else ""


def _check_range(param: Parameter, value: object, where: str) -> object:
    """Choices, text, finiteness and the catalog's bounds: every value that passes fits the columns and the
    code."""
    if param.choices and value not in param.choices:
        instead = dict(param.retired_choices).get(value) if isinstance(value, str) else None
        why = f" ({value} is retired: {instead})" if instead else ""
        raise InvalidConfig(f"{where} must be one of {', '.join(param.choices)}; got {_shown(value)}{why}")
    if isinstance(value, str):
        _check_text(param, value, where)
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidConfig(f"{where} must be a finite number; got {value!r}")
    if not isinstance(value, int | float):
        return value  # only numbers have bounds
    if param.minimum is not None and value < param.minimum:
        raise InvalidConfig(f"{where} must be at least {param.minimum:.15g}{_range(param)}; got {value!r}")
    if param.maximum is not None and value > param.maximum:
        raise InvalidConfig(f"{where} must be at most {param.maximum:.15g}{_range(param)}; got {_shown(value)}")
    return value


def parse_stored(param: Parameter, text: str) -> object:
    """Parse a Parameter Store string as the catalog type; a bad stored value names the parameter."""
    try:
        value = _parse_text(param, text)
    except (ValueError, KeyError):
        raise InvalidParameter(
            f"Parameter Store value of {param.name} is {_shown(text)}, not {_expected(param)}; "
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
        raise InvalidConfig(f"{where} must be {_expected(param)}; got {_shown(value)}")
    try:
        typed = param.type(value)
    except OverflowError:  # an integer too large for a float
        raise InvalidConfig(
            f"{where} must be at most {param.maximum:.15g}{_range(param)}; got {_shown(value)}"
        ) from None
    return _check_range(param, typed, where)


def did_you_mean(key: str) -> str:
    """`` (did you mean maxMoves?)`` for a typo'd key close to a catalog key; empty when none is close."""
    close = difflib.get_close_matches(
        key, [p.key for p in CATALOG if p.overridable], n=1, cutoff=0.75
    ) or difflib.get_close_matches(key.lower(), [p.key.lower() for p in CATALOG if p.overridable], n=1, cutoff=0.75)
    if not close:
        return ""
    found = next(p.key for p in CATALOG if p.key.lower() == close[0].lower())
    return f" (did you mean {found}?)"


def resolve(
    stored: Mapping[str, str], overrides: Mapping[str, object], provider: str | None = None
) -> dict[str, object]:
    """The configuration snapshot (camelCase keys) for one experiment.

    ``stored`` maps parameter names (``/oriole/...``) to Parameter Store strings; missing entries fall
    back to the catalog default. ``overrides`` are the execution input's ``config``. With ``provider``, the snapshot
    holds only the keys that apply to it (the catalog's ``providers``: a baseline stores no model server, no
    temperature), what applied to the experiment and nothing else, and an override of a key that does not apply is
    refused; without, every provider's key (a sweep cell's settings before its agent is known). Either way a key that
    depends on another setting (the catalog's ``applies_when``) is held only where that setting lets it play a part
    (no ``historyTurns`` under ``historyMode`` actions), and an override that sets it elsewhere is refused
    (``inapplicable``).
    """
    unknown = sorted(set(overrides) - set(BY_KEY))
    if unknown:
        raise InvalidConfig(
            f"unknown config key(s) {', '.join(unknown)}{did_you_mean(unknown[0])}; known keys: "
            + ", ".join(p.key for p in CATALOG if p.overridable)
        )
    fixed = sorted(k for k in overrides if not BY_KEY[k].overridable)
    if fixed:
        raise InvalidConfig(f"config key(s) {', '.join(fixed)} are read at deploy time and cannot be overridden")
    if provider is not None and (idle := sorted(k for k in overrides if provider not in BY_KEY[k].providers)):
        raise InvalidConfig(
            f"config key(s) {', '.join(idle)} do not apply to {provider} experiments (only to "
            + "; ".join(f"{k}: {', '.join(BY_KEY[k].providers)}" for k in idle)
            + "): leave them out"
        )
    snapshot: dict[str, object] = {}
    for param in CATALOG:
        if not param.overridable or (provider is not None and provider not in param.providers):
            continue
        if param.key in overrides:
            snapshot[param.key] = check_override(param, overrides[param.key])
        elif param.name in stored:
            snapshot[param.key] = parse_stored(param, stored[param.name])
        else:
            snapshot[param.key] = param.default
    if problem := inapplicable(overrides, snapshot):
        raise InvalidConfig(problem)
    return applying(snapshot)


def inapplicable(overrides: Iterable[str], values: Mapping[str, object]) -> str | None:
    """Why ``overrides`` (keys an input sets) set a key that plays no part under ``values`` (the settings they
    resolve to), or None when they do not: ``config.historyTurns applies only with historyMode = conversation or
    summary (here historyMode is actions): leave it out, or set historyMode``."""
    for key in sorted(overrides):
        param = BY_KEY.get(key)
        if param is None or param.applies_when is None or applies(param, values):
            continue
        when = param.applies_when
        here = setting_text(values.get(when.key, BY_KEY[when.key].default))
        return (
            f"config.{key} applies only with {when} (here {when.key} is {here}): it would play no part; leave it "
            f"out, or set {when.key}"
        )
    return None


def parse_assignment(text: str) -> tuple[str, object]:
    """Turn a CLI ``KEY=VALUE`` into a config override, typed and checked against the catalog (the same check
    as an execution input's ``config``, so ``--config`` and ``oriole params set`` refuse what a start would).

    KEY may be the camelCase key or the parameter's path (``max-moves``, ``experiments/max-moves``), or the path or
    name it had before a rename (``Parameter.renamed_from``).
    """
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise InvalidConfig(f"--config expects KEY=VALUE; got {_shown(text)}")
    param = (
        BY_KEY.get(key)
        or BY_NAME.get(key)
        or next((p for p in CATALOG if p.path == key or p.path.endswith("/" + key)), None)
        or next((p for p in CATALOG if p.renamed_from and key in (p.renamed_from, p.previous_name)), None)
    )
    if param is None:
        raise InvalidConfig(f"unknown config key {_shown(key)}{did_you_mean(key)}; see `oriole params list`")
    try:
        value = _parse_text(param, raw)
    except (ValueError, KeyError):
        raise InvalidConfig(f"config {param.key} must be {_expected(param)}; got {_shown(raw)}") from None
    return param.key, check_override(param, value)


PRICE_KEYS = ("inputPerMTok", "outputPerMTok")


SNAPSHOT_EXTRAS = ("pricing",)  # what StartExperiment adds to a snapshot beside the catalog's keys


def snapshot_problem(snapshot: object) -> str | None:
    """Why a stored configuration snapshot (``experiments.config``) is not one StartExperiment could have written,
    or None when it is: a JSON object of catalog keys, each value of its type and range (``check_override``), and
    the captured price. A snapshot may lack keys (taken before they existed); anything else means its row was
    altered, and an experiment read from it would not be the one that ran. A number is held to the largest value
    any release accepted (``Parameter.recorded_maximum`` where a maximum was lowered since), not to today's: a bound
    applies to new executions' inputs, and a recorded run is read, and replayed, under the limits it ran with."""
    if not isinstance(snapshot, dict):
        return f"its configuration snapshot was altered: it is {_shown(snapshot)}, not a JSON object"
    unknown = sorted(set(snapshot) - {p.key for p in CATALOG if p.overridable} - set(SNAPSHOT_EXTRAS))
    if unknown:
        return "its configuration snapshot was altered: it holds key(s) the catalog does not know: " + _shown(
            ", ".join(unknown)
        )
    for key, value in snapshot.items():
        try:
            if key in SNAPSHOT_EXTRAS:
                _check_snapshot_price(value)
            else:
                check_override(recorded(BY_KEY[key]), value)
        except InvalidConfig as err:
            return f"its configuration snapshot was altered: {err}"
    return None


def recorded(param: Parameter) -> Parameter:
    """``param`` with the bounds a stored snapshot was written under: its ``recorded_maximum`` where it has one, and
    its retired choices among its choices."""
    if param.recorded_maximum is not None:
        param = replace(param, maximum=param.recorded_maximum)
    if param.retired_choices:
        param = replace(param, choices=(*param.choices, *(value for value, _ in param.retired_choices)))
    return param


def _check_snapshot_price(value: object) -> None:
    """``config.pricing`` as ``Price.as_snapshot`` writes it: null (unpriced), or both prices and their source."""
    if value is None:
        return
    prices = value if isinstance(value, dict) else {}
    numbers = [prices.get(key) for key in PRICE_KEYS]
    if (
        set(prices) - {*PRICE_KEYS, "source"}
        or not all(
            isinstance(n, int | float) and not isinstance(n, bool) and 0 <= n <= MAX_PRICE_PER_MTOK for n in numbers
        )
        or not isinstance(prices.get("source"), str | None)
    ):
        raise InvalidConfig(
            f"config.pricing must be null or two prices from 0 to {MAX_PRICE_PER_MTOK:g} USD per million tokens "
            f"and their source; got {_shown(value)}"
        )


def parse_pricing(name: str, text: str | None) -> JsonObject | None:
    """A pricing entry (``{"inputPerMTok": 3.0, "outputPerMTok": 15.0}``, USD per million tokens), or None: both
    keys and nothing else, each a JSON number (not a string, not true or false) from 0 to MAX_PRICE_PER_MTOK."""
    if text is None:
        return None
    try:
        value = load_json(text)
    except ValueError:
        value = None
    if (
        not isinstance(value, dict)
        or sorted(value) != sorted(PRICE_KEYS)
        or not all(isinstance(value[key], int | float) and not isinstance(value[key], bool) for key in PRICE_KEYS)
    ):
        raise InvalidParameter(
            f'{name} must be JSON with two numbers, like {{"inputPerMTok": 3.0, '
            f'"outputPerMTok": 15.0}}; got {_shown(text)}'
        )
    prices = {key: float(value[key]) + 0.0 for key in PRICE_KEYS}  # -0 is 0 (it would read "$-0")
    if not all(0 <= price <= MAX_PRICE_PER_MTOK for price in prices.values()):  # NaN fails every comparison
        raise InvalidParameter(
            f"{name} must hold prices from 0 to {MAX_PRICE_PER_MTOK:g} USD per million tokens; got {_shown(text)}"
        )
    return prices
