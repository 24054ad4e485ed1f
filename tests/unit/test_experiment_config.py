"""The configuration snapshot as a typed model: one field per catalog key read at start, typed as the catalog
declares it, reading a resolved snapshot back exactly and an older snapshot with the defaults of the keys it lacks."""

from __future__ import annotations

import json

import pytest

from oriole.catalog import CATALOG
from oriole.config import resolve
from oriole.experiment_config import DEFAULTS, ExperimentConfig, SnapshotPrice

STARTED = [p for p in CATALOG if p.overridable]  # what a snapshot holds besides the captured price


def test_every_key_read_at_start_is_one_field_of_the_catalogs_type():
    fields = ExperimentConfig.model_fields
    assert {field.alias for name, field in fields.items() if name != "pricing"} == {p.key for p in STARTED}
    for param in STARTED:
        name = next(name for name, field in fields.items() if field.alias == param.key)
        assert fields[name].annotation is param.type, param.key


def test_a_resolved_snapshot_reads_back_exactly_and_its_json_is_unchanged():
    snapshot = resolve({}, {"maxMoves": 77, "temperature": 0, "historyMode": "summary", "enableGiveUp": True})
    snapshot["pricing"] = {"inputPerMTok": 3.0, "outputPerMTok": 15.0, "source": "Parameter Store"}
    stored = json.dumps(snapshot)
    config = ExperimentConfig.of(snapshot)
    assert json.dumps(snapshot) == stored  # reading never changes the stored JSON
    assert "imageView" not in snapshot  # observation text: no picture, so no picture's view is stored (read as default)
    assert config.model_dump(mode="json", by_alias=True) == DEFAULTS | snapshot
    assert (config.max_actions, config.temperature, config.history_mode, config.enable_give_up) == (
        77,
        0.0,
        "summary",
        True,
    )
    assert type(config.temperature) is float and config.pricing == SnapshotPrice(
        inputPerMTok=3.0, outputPerMTok=15.0, source="Parameter Store"
    )


def test_a_snapshot_taken_before_a_key_existed_reads_its_catalog_default():
    old = {"maxMoves": 500, "visionRange": 2, "pricing": None, "aKeyNoLongerInTheCatalog": 1}
    config = ExperimentConfig.of(old)
    assert (config.max_actions, config.vision_range, config.pricing) == (500, 2, None)
    assert config.model_dump(by_alias=True, exclude={"pricing"}) == DEFAULTS | {"maxMoves": 500, "visionRange": 2}


def test_the_model_is_frozen():
    config = ExperimentConfig.of({})
    with pytest.raises(ValueError, match="frozen"):
        config.max_actions = 1
