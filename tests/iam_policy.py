"""An offline evaluator of IAM identity policies: would a role's statements allow one action on one resource?

It implements the part of AWS's policy evaluation logic that the identity policies of one account use
(IAM User Guide, reference_policies_evaluation-logic.html): an explicit Deny wins, then any Allow, else the
implicit deny. ``Action``/``NotAction`` match case-insensitively with ``*`` and ``?``; ``Resource``/``NotResource``
match ARNs case-sensitively, a wildcard staying inside its colon-separated segment unless it is the segment's last
character (reference_policies_elements_resource.html). A ``Condition`` is evaluated for the operators in
``CONDITIONS`` against the request context the caller gives; any other operator, a key the context lacks, or a
``Principal`` (a resource policy) raises ``UnsupportedPolicy`` rather than guess.

Maintained offline evaluators exist outside Python (npm ``@cloud-copilot/iam-simulate``); moto's own checker is
lenient (actions case-sensitive, ``?`` and ``NotResource`` unsupported, unknown conditions ignored), which is what
this contract must not be.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping


class UnsupportedPolicy(ValueError):
    """A statement this evaluator cannot decide; the contract fails rather than guess."""


@functools.cache
def _action_pattern(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.IGNORECASE)


@functools.cache
def _arn_pattern(pattern: str) -> re.Pattern:
    """A resource ARN pattern: ``*`` and ``?`` stay within a segment, but a ``*`` ending a segment may span colons."""
    parts = []
    for i, c in enumerate(pattern):
        if c == "*":
            parts.append(".*" if i + 1 == len(pattern) or pattern[i + 1] == ":" else "[^:]*")
        elif c == "?":
            parts.append("[^:]")
        else:
            parts.append(re.escape(c))
    return re.compile("".join(parts))


@functools.cache
def _string_pattern(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _any_matches(patterns: str | list[str], value: str, compile_) -> bool:
    return any(compile_(p).fullmatch(value) for p in _listed(patterns))


CONDITIONS = {
    "StringEquals": lambda expected, actual: actual == expected,
    "StringLike": lambda expected, actual: _string_pattern(expected).fullmatch(actual) is not None,
    "ArnEquals": lambda expected, actual: actual == expected,
    "ArnLike": lambda expected, actual: _arn_pattern(expected).fullmatch(actual) is not None,
    "Bool": lambda expected, actual: actual.lower() == str(expected).lower(),
}


def _conditions_hold(conditions: Mapping[str, Mapping], context: Mapping[str, str]) -> bool:
    """Every operator block holds (AND); in a block every key holds (AND); a key holds if any value matches (OR). An
    operator ending in ``IfExists`` holds for a key the request does not carry."""
    keys = {k.lower(): v for k, v in context.items()}
    for operator, block in conditions.items():
        base = operator.removesuffix("IfExists")
        if base not in CONDITIONS:
            raise UnsupportedPolicy(f"condition operator {operator} is not evaluated here: add it to CONDITIONS")
        for key, expected in block.items():
            if key.lower() not in keys:
                if base != operator:
                    continue
                raise UnsupportedPolicy(f"condition key {key} is not in the request context {sorted(context)}")
            if not any(CONDITIONS[base](value, keys[key.lower()]) for value in _listed(expected)):
                return False
    return True


def _applies(statement: Mapping, action: str, resource: str, context: Mapping[str, str]) -> bool:
    if "Principal" in statement or "NotPrincipal" in statement:
        raise UnsupportedPolicy(f"a statement with a principal is a resource policy: {statement}")
    if "Action" in statement:
        acts = _any_matches(statement["Action"], action, _action_pattern)
    else:
        acts = not _any_matches(statement["NotAction"], action, _action_pattern)
    if not acts:
        return False
    if "Resource" in statement:
        on = _any_matches(statement["Resource"], resource, _arn_pattern)
    else:
        on = not _any_matches(statement["NotResource"], resource, _arn_pattern)
    return on and _conditions_hold(statement.get("Condition", {}), context)


def allows(statements: Iterable[Mapping], action: str, resource: str, context: Mapping[str, str] | None = None) -> bool:
    """Whether ``statements`` (resolved: plain strings, no intrinsic functions) allow ``action`` on ``resource``."""
    effects = {s["Effect"] for s in statements if _applies(s, action, resource, context or {})}
    return "Allow" in effects and "Deny" not in effects
