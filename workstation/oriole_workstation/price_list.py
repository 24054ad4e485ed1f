"""Model prices kept outside a deployment: the local prices file in the state folder (``$ORIOLE_HOME/prices.json``),
seeded into the local Parameter Store as ``/oriole/pricing/<model>`` on every run, or Parameter Store itself with
``--aws``. Where a price is looked for, and in which order, is the runtime's (``oriole.core.prices``).
"""

from __future__ import annotations

import json
from pathlib import Path

from oriole import catalog
from oriole.config import PRICE_KEYS, parse_pricing
from oriole.core import prices
from oriole.errors import InvalidParameter, OrioleError
from oriole.text import load_json
from oriole_workstation import files
from oriole_workstation.database import home

FILE_NAME = "prices.json"
MAX_FILE_BYTES = 1024 * 1024


class PricesRejected(OrioleError):
    """A price, or the local prices file, that an experiment could not be charged at."""


def path() -> Path:
    return home() / FILE_NAME


def load() -> dict[str, dict]:
    """Model -> ``{"inputPerMTok", "outputPerMTok"}`` from the local prices file (none: {}), each entry checked
    as Parameter Store's would be."""
    if not path().exists():
        return {}
    text = files.read_text(path(), MAX_FILE_BYTES, PricesRejected, "a prices file lists models' prices")
    try:
        data = load_json(text, long_integers=False)
    except ValueError as error:
        raise PricesRejected(f"{path()} is not valid JSON ({error}); fix it or remove it") from None
    if not isinstance(data, dict):
        raise PricesRejected(f"{path()} must hold a JSON object of model -> prices; fix it or remove it")
    return {model: checked(model, json.dumps(entry)) for model, entry in data.items()}


def checked(model: str, text: str) -> dict:
    """A pricing entry as Parameter Store holds it, refused in one line when an experiment could not use it."""
    try:
        prices = parse_pricing(catalog.pricing_name(model), text)
    except InvalidParameter as error:
        raise PricesRejected(str(error)) from None
    assert prices is not None, "parse_pricing answers None only when there is no text"
    return prices


def entry(input_per_mtok: float, output_per_mtok: float) -> dict:
    return dict(zip(PRICE_KEYS, (input_per_mtok, output_per_mtok), strict=True))


def put(model: str, input_per_mtok: float, output_per_mtok: float) -> Path:
    """Set a model's prices in the local prices file; a model whose Parameter Store name another model already
    takes (``a:b`` and ``a-b`` both become ``/oriole/pricing/a-b``) is refused."""
    found = load()
    name = catalog.pricing_name(model)
    if clash := next((m for m in found if m != model and catalog.pricing_name(m) == name), None):
        raise PricesRejected(f"{model!r} and {clash!r} share the Parameter Store name {name}; unset {clash!r} first")
    found[model] = checked(model, json.dumps(entry(input_per_mtok, output_per_mtok)))
    _write(found)
    return path()


def remove(model: str) -> bool:
    """Take a model out of the local prices file; False when it was not in it."""
    found = load()
    if found.pop(model, None) is None:
        return False
    _write(found)
    return True


def _write(found: dict[str, dict]) -> None:
    files.write_text(path(), json.dumps(dict(sorted(found.items())), indent=2) + "\n", PricesRejected)


def parameters() -> dict[str, str]:
    """The local Parameter Store's pricing entries: ``/oriole/pricing/<model>`` -> its JSON."""
    return {catalog.pricing_name(model): json.dumps(value) for model, value in load().items()}


def listed(stored: dict[str, dict], where: str) -> list[tuple[str, prices.Price]]:
    """Every known price, model by model: the ``stored`` ones (``where``: the local prices file or Parameter
    Store), then the shipped list prices of the models not stored."""
    rows = [
        (model, prices.Price(value["inputPerMTok"], value["outputPerMTok"], where))
        for model, value in sorted(stored.items())
    ]
    rows += [
        (model, found)
        for model in sorted(prices.LIST_PRICES)
        if model not in stored and (found := prices.list_price(model)) is not None
    ]
    return rows


def aws_prices(ssm) -> dict[str, dict]:
    """The pricing entries in Parameter Store, by the model part of their name (``qwen2.5-7b``), each checked."""
    pages = ssm.get_paginator("get_parameters_by_path").paginate(Path=catalog.PRICING_PATH, Recursive=False)
    return {
        p["Name"].rsplit("/", 1)[-1]: checked(p["Name"].rsplit("/", 1)[-1], p["Value"])
        for page in pages
        for p in page["Parameters"]
    }


def put_aws(ssm, model: str, input_per_mtok: float, output_per_mtok: float) -> str:
    """Set a model's prices in Parameter Store (``/oriole/pricing/<model>``); returns the parameter's name."""
    name = catalog.pricing_name(model)
    value = checked(model, json.dumps(entry(input_per_mtok, output_per_mtok)))
    ssm.put_parameter(Name=name, Value=json.dumps(value), Type="String", Overwrite=True)
    return name


def remove_aws(ssm, model: str) -> bool:
    """Delete a model's prices from Parameter Store; False when there were none."""
    try:
        ssm.delete_parameter(Name=catalog.pricing_name(model))
    except ssm.exceptions.ParameterNotFound:
        return False
    return True
