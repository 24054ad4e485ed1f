"""Resolving the configuration snapshot: defaults, stored values, overrides, and their errors."""

import pytest

from oriole import catalog
from oriole.catalog import BY_KEY, CATALOG
from oriole.config import parse_assignment, resolve
from oriole.errors import InvalidConfig, InvalidParameter


def test_keys_are_the_camel_case_of_the_catalog_names():
    assert catalog.BY_KEY["maxActionsPerTurn"].name == "/oriole/experiments/max-actions-per-turn"
    assert catalog.BY_KEY["numCtx"].name == "/oriole/ollama/num-ctx"
    assert len(catalog.BY_KEY) == len(catalog.CATALOG)


def test_defaults_then_stored_values_then_overrides():
    snapshot = resolve(
        {"/oriole/experiments/max-moves": "500", "/oriole/gameplay/vision-range": "2"},
        {"visionRange": 1, "temperature": 0},
    )
    assert snapshot["maxMoves"] == 500
    assert snapshot["visionRange"] == 1
    assert snapshot["temperature"] == 0.0 and isinstance(snapshot["temperature"], float)
    assert snapshot["maxActionsPerTurn"] == 8
    assert "maxExecutionSeconds" not in snapshot  # read at deploy time only


def test_a_zero_override_is_kept_not_dropped():
    assert resolve({}, {"temperature": 0.0})["temperature"] == 0.0


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"maxMovez": 3}, "unknown config key"),
        ({"maxMoves": "500"}, "must be an integer"),
        ({"maxMoves": 5.5}, "must be an integer"),
        ({"maxMoves": True}, "must be an integer"),
        ({"temperature": "hot"}, "must be a number"),
        ({"goalCondition": "touch"}, "must be one of reach, sight"),
        ({"maxMoves": 0}, "at least 1"),
        ({"maxExecutionSeconds": 60}, "deploy time"),
    ],
)
def test_bad_overrides_name_the_key_and_the_problem(overrides, message):
    with pytest.raises(InvalidConfig, match=message):
        resolve({}, overrides)


def test_a_bad_stored_value_names_the_parameter():
    with pytest.raises(InvalidParameter, match="/oriole/experiments/max-moves"):
        resolve({"/oriole/experiments/max-moves": "lots"}, {})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("maxMoves=200", ("maxMoves", 200)),
        ("max-moves=200", ("maxMoves", 200)),
        ("experiments/max-moves=200", ("maxMoves", 200)),
        ("temperature=0", ("temperature", 0.0)),
        ("goal-condition=sight", ("goalCondition", "sight")),
        ("models/request-timeout-seconds=300", ("requestTimeoutSeconds", 300.0)),
        ("ollama/request-timeout-seconds=300", ("requestTimeoutSeconds", 300.0)),  # its name before the rename
        ("/oriole/ollama/request-timeout-seconds=300", ("requestTimeoutSeconds", 300.0)),
    ],
)
def test_cli_assignments_are_typed_by_the_catalog(text, expected):
    assert parse_assignment(text) == expected


@pytest.mark.parametrize("text", ["maxMoves", "nope=1", "maxMoves=many"])
def test_bad_cli_assignments_are_refused(text):
    with pytest.raises(InvalidConfig):
        parse_assignment(text)


def test_shipped_prompt_is_seeded_with_the_defaults():
    values = catalog.defaults()
    assert "navigating a 2D grid maze" in values["/oriole/prompts/v1"]
    assert values["/oriole/experiments/max-moves"] == "10000"


def test_pricing_entries_parse_and_bad_ones_name_the_parameter():
    from oriole.config import parse_pricing
    from oriole.core.prices import cost_usd, turn_cost
    from oriole.experiment_config import SnapshotPrice

    name = catalog.pricing_name("qwen2.5:7b")
    assert name == "/oriole/pricing/qwen2.5-7b"
    prices = parse_pricing(name, '{"inputPerMTok": 3, "outputPerMTok": 15}')
    assert cost_usd(1_000_000, 100_000, SnapshotPrice.model_validate(prices)) == pytest.approx(4.5)
    assert parse_pricing(name, None) is None and turn_cost((0, 0), (10, 10), None) is None  # unpriced: unknown, not $0
    free = SnapshotPrice.model_validate({"inputPerMTok": 0.0, "outputPerMTok": 0.0})
    assert turn_cost((0, 0), (10, 10), free) == 0.0  # free: $0
    for bad in ('{"inputPerMTok": 3}', "cheap", '{"inputPerMTok": -1, "outputPerMTok": 1}'):
        with pytest.raises(InvalidParameter, match=r"qwen2\.5-7b"):
            parse_pricing(name, bad)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("maxMoves", 10**12, "at most 1000000"),
        ("temperature", float("nan"), "finite"),
        ("requestTimeoutSeconds", float("inf"), "finite"),
        ("requestTimeoutSeconds", 1e300, "at most 840"),
        ("seed", 2**40, "at most"),
    ],
)
def test_every_number_is_finite_and_within_the_catalog_bounds(key, value, message):
    with pytest.raises(InvalidConfig, match=message):
        resolve({}, {key: value})
    name = BY_KEY[key].name
    with pytest.raises(InvalidParameter, match=message):
        resolve({name: str(value)}, {})


def test_every_numeric_catalog_entry_has_both_bounds():
    for param in CATALOG:
        if param.type in (int, float):
            assert param.minimum is not None and param.maximum is not None, param.name


def test_each_parameter_says_which_providers_it_applies_to_and_whether_it_is_experimental():
    for param in CATALOG:
        assert param.providers and set(param.providers) <= set(catalog.ALL_PROVIDERS), param.key
    not_experimental = {p.key for p in CATALOG if not p.experimental and p.overridable}
    assert {"endpoint", "requestTimeoutSeconds", "seed"} <= not_experimental
    assert {"maxMoves", "visionRange", "temperature", "numCtx"}.isdisjoint(not_experimental)
    assert "baseline" not in BY_KEY["temperature"].providers + BY_KEY["numCtx"].providers
    assert BY_KEY["temperature"].providers == catalog.LLM_PROVIDERS


def _written_snapshot() -> dict:
    """A snapshot as StartExperiment writes it: every key resolved, a captured price."""
    return {**resolve({}, {}), "pricing": {"inputPerMTok": 0.4, "outputPerMTok": 1.6, "source": "sweep file"}}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"evilKey": 1}, "does not know: 'evilKey'"),
        ({"maxMoves": "many"}, "config.maxMoves must be an integer"),
        ({"maxMoves": True}, "config.maxMoves must be an integer"),
        ({"visionRange": -5}, "config.visionRange must be at least"),
        ({"temperature": 1e308}, "config.temperature must be at most"),
        ({"historyMode": "bogus"}, "config.historyMode must be one of"),
        ({"baseUrl": "http://user:pw@evil"}, "config.baseUrl must not hold a user name"),
        ({"pricing": "x"}, "config.pricing must be null or two prices"),
        ({"pricing": {"inputPerMTok": -1, "outputPerMTok": 1}}, "config.pricing must be null or two prices"),
        ({"pricing": {"inputPerMTok": 1, "outputPerMTok": 1, "extra": 2}}, "config.pricing must be null"),
    ],
)
def test_an_altered_snapshot_says_what_is_wrong(change, message):
    from oriole.config import snapshot_problem

    problem = snapshot_problem({**_written_snapshot(), **change})
    assert problem is not None and problem.startswith("its configuration snapshot was altered: "), problem
    assert message in problem, problem


def test_a_snapshot_as_written_or_older_and_unpriced_is_sound():
    from oriole.config import snapshot_problem

    assert snapshot_problem(_written_snapshot()) is None
    assert snapshot_problem({"maxMoves": 5, "pricing": None}) is None  # taken before the other keys existed
    assert "not a JSON object" in (snapshot_problem([1]) or "")


def test_a_snapshot_is_read_under_the_limits_it_ran_with_and_a_new_input_under_todays():
    """maxTurnsPerExecution was at most 350 before the history budget was recounted (180 now): a record holding 350
    is sound (a replay reads it), a new execution's input is refused, and a value no release accepted is an
    alteration."""
    from oriole.config import snapshot_problem

    assert snapshot_problem({**_written_snapshot(), "maxTurnsPerExecution": 350}) is None
    with pytest.raises(InvalidConfig, match=r"config\.maxTurnsPerExecution must be at most 180"):
        resolve({}, {"maxTurnsPerExecution": 350})
    assert "at most 350" in (snapshot_problem({**_written_snapshot(), "maxTurnsPerExecution": 351}) or "")


# -- settings that depend on another (the catalog's applies_when) -------------------------------------------------

DEPENDENT = {p.key: p.applies_when for p in CATALOG if p.applies_when is not None}


def test_each_setting_that_depends_on_another_says_on_which_values_and_its_controller_is_always_there():
    """The keys whose part depends on another setting, each declared in the catalog: the setting it depends on is a
    choice (or true/false) of every provider the key applies to (so a snapshot that holds the key holds it too)."""
    assert {key: (when.key, when.values) for key, when in DEPENDENT.items()} == {
        "historyTurns": ("historyMode", ("conversation", "summary")),
        "compaction": ("historyMode", ("summary",)),
        "mapAid": ("observation", ("text", "both")),
        "imageView": ("observation", ("image", "both")),
        "textView": ("observation", ("text", "both")),
        "parallelToolCalls": ("textToolCalls", (False,)),
    }
    for key, when in DEPENDENT.items():
        controller = BY_KEY[when.key]
        assert set(BY_KEY[key].providers) <= set(controller.providers), key
        assert set(when.values) <= set(controller.choices or (True, False)), key


@pytest.mark.parametrize(
    "provider, overrides, left_out, kept",
    [
        ("ollama", {}, {"historyTurns", "compaction", "imageView"}, {"mapAid", "textView"}),
        ("ollama", {"historyMode": "conversation"}, {"compaction"}, {"historyTurns"}),
        ("ollama", {"historyMode": "summary"}, set(), {"historyTurns", "compaction"}),
        ("ollama", {"observation": "image"}, {"mapAid", "textView"}, {"imageView"}),
        ("ollama", {"observation": "both"}, set(), {"mapAid", "textView", "imageView"}),
        ("openai", {}, set(), {"parallelToolCalls"}),
        ("openai", {"textToolCalls": True}, {"parallelToolCalls"}, set()),
        (None, {}, {"historyTurns", "compaction", "imageView"}, {"parallelToolCalls", "textView"}),
    ],
)
def test_the_snapshot_holds_a_dependent_key_only_where_it_plays_a_part(provider, overrides, left_out, kept):
    snapshot = resolve({}, overrides, provider)
    assert not left_out & set(snapshot) and kept <= set(snapshot), sorted(snapshot)


def test_a_stored_value_of_a_key_that_plays_no_part_is_left_out_and_one_that_does_is_kept():
    """Parameter Store's historyTurns (the deployment's) is nobody's explicit choice: left out where the memory mode
    carries no turns, kept where it does."""
    stored = {BY_KEY["historyTurns"].name: "4"}
    assert "historyTurns" not in resolve(stored, {}, "ollama")
    assert resolve(stored, {"historyMode": "summary"}, "ollama")["historyTurns"] == 4
    # and a stored controller decides for an override: historyMode conversation in Parameter Store
    mode = {BY_KEY["historyMode"].name: "conversation"}
    assert resolve(mode, {"historyTurns": 3}, "ollama")["historyTurns"] == 3


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            {"historyTurns": 5},
            "config.historyTurns applies only with historyMode = conversation or summary (here historyMode is "
            "actions): it would play no part; leave it out, or set historyMode",
        ),
        ({"historyMode": "conversation", "compaction": "model"}, "compaction applies only with historyMode = summary"),
        ({"observation": "text", "imageView": "map"}, "imageView applies only with observation = image or both"),
        ({"observation": "image", "mapAid": False}, "mapAid applies only with observation = text or both"),
        ({"observation": "image", "textView": "local"}, "(here observation is image)"),
        (
            {"textToolCalls": True, "parallelToolCalls": False},
            "parallelToolCalls applies only with textToolCalls = false",
        ),
    ],
)
def test_an_input_setting_a_key_where_it_plays_no_part_is_refused_naming_what_it_needs(overrides, message):
    provider = "openai" if "parallelToolCalls" in overrides else "ollama"
    with pytest.raises(InvalidConfig) as refused:
        resolve({}, overrides, provider)
    assert message in str(refused.value)
    with pytest.raises(InvalidConfig):  # a sweep cell's settings, before its agent is known, alike
        resolve({}, overrides)


def test_a_snapshot_older_than_the_rule_is_still_sound_and_applying_keeps_what_played_a_part():
    """A snapshot written before applies_when holds historyTurns under actions: sound (replay reads it as it ran);
    ``applying`` is what played a part in it, reading a key it lacks (observation) at its default."""
    from oriole.config import snapshot_problem

    old = {"maxMoves": 5, "historyMode": "actions", "historyTurns": 3, "imageView": "map", "mapAid": True}
    assert snapshot_problem(old) is None
    assert catalog.applying(old) == {"maxMoves": 5, "historyMode": "actions", "mapAid": True}
