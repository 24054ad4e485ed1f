"""What a model's tokens cost, and where that price came from.

An experiment is charged at the first price found, in this order:

1. the prices its execution input carries (``prices``: a sweep file's agent, or a price stated for an unpriced
   model with ``--allow-unpriced``);
2. Parameter Store's ``/oriole/pricing/<model>`` (on AWS ``oriole prices set --aws`` writes it; locally the
   runner seeds its Parameter Store from the prices file in the state folder, ``oriole prices set``);
3. the list prices shipped here, for the example Bedrock and OpenAI models (``LIST_PRICES``).

A baseline plays no model and costs nothing. StartExperiment records the price and its source in the snapshot
(``config.pricing``); every turn's cost comes from it. A model found nowhere is unpriced: its cost is unknown
(NULL, shown "unpriced", never $0), and a sweep with a spend limit refuses it (``unpriced``) unless told to count it
at $0 (``--allow-unpriced``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from oriole.catalog import pricing_name
from oriole.config import parse_pricing
from oriole.experiment_config import SnapshotPrice
from oriole.provider_registry import PROVIDERS
from oriole.text import JsonObject

LIST_PRICES_READ = "2026-11-25"  # when the list prices below were read from the pages they cite
ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"
BEDROCK_PRICING = "https://aws.amazon.com/bedrock/pricing/"
OPENAI_PRICING = "https://openai.com/api/pricing/"
# USD per million tokens, input and output, on demand, without caching or batch discounts. Anthropic's models on
# Bedrock cost what Anthropic lists through a global inference profile (``global.``); from the 4.5 models on, a
# regional profile (``us.``, ``eu.``, ``apac.``, ``jp.``, ``au.``) or the model id in its region costs 10% more.
LIST_PRICES: dict[str, tuple[float, float, str]] = {
    "global.anthropic.claude-haiku-4-5-20251001-v1:0": (1.0, 5.0, ANTHROPIC_PRICING),
    "anthropic.claude-haiku-4-5-20251001-v1:0": (1.1, 5.5, BEDROCK_PRICING),
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0": (3.0, 15.0, ANTHROPIC_PRICING),
    "anthropic.claude-sonnet-4-5-20250929-v1:0": (3.3, 16.5, BEDROCK_PRICING),
    "gpt-4.1": (2.0, 8.0, OPENAI_PRICING),
    "gpt-4.1-mini": (0.4, 1.6, OPENAI_PRICING),
    "gpt-4.1-nano": (0.1, 0.4, OPENAI_PRICING),
    "gpt-4o-mini": (0.15, 0.6, OPENAI_PRICING),
    "o4-mini": (1.1, 4.4, OPENAI_PRICING),
}
REGIONAL_PROFILES = ("us.", "eu.", "apac.", "jp.", "au.")  # a regional inference profile's id: prefix + model id


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens, and where the price was read (stored with the experiment)."""

    input_per_mtok: float
    output_per_mtok: float
    source: str

    def as_snapshot(self) -> JsonObject:
        """The price as the experiment's snapshot keeps it (``config.pricing``)."""
        return {"inputPerMTok": self.input_per_mtok, "outputPerMTok": self.output_per_mtok, "source": self.source}

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000

    def describe(self) -> str:
        """``$0.40 / $1.60 per million tokens (sweep file)``."""
        return f"${self.input_per_mtok:g} / ${self.output_per_mtok:g} per million tokens in/out ({self.source})"


FREE = Price(0.0, 0.0, "baseline: no model")


def list_price(model: str) -> Price | None:
    """The shipped list price of ``model`` (a regional Bedrock profile at its model's regional price), or None."""
    regional = next((model.removeprefix(p) for p in REGIONAL_PROFILES if model.startswith(p)), model)
    found = LIST_PRICES.get(model) or LIST_PRICES.get(regional)
    if found is None:
        return None
    input_price, output_price, page = found
    return Price(input_price, output_price, f"list price read {LIST_PRICES_READ} from {page}")


def stored_price(model: str, text: str | None) -> Price | None:
    """The price Parameter Store holds for ``model`` (the text of ``/oriole/pricing/<model>``), or None."""
    name = pricing_name(model)
    prices = parse_pricing(name, text)
    return None if prices is None else Price(prices["inputPerMTok"], prices["outputPerMTok"], f"Parameter Store {name}")


def price(provider: str, model: str, given: Price | None, stored_text: str | None) -> Price | None:
    """The price an experiment of ``provider``/``model`` is charged at: a baseline's nothing; else the ``given``
    price (the execution input's ``prices``), the stored one, the list price; None when none is known."""
    if not PROVIDERS[provider].calls_model:
        return FREE
    return given or stored_price(model, stored_text) or list_price(model)


def unpriced(agents: Mapping[tuple[str, str], Price | None], stored: Mapping[str, str]) -> list[str]:
    """Of ``agents`` ((provider, model) -> the price a sweep gives it, or None), those no price is known for, as
    ``provider/model``: neither given, nor in ``stored`` (Parameter Store names -> texts), nor listed."""
    return [
        f"{provider}/{model}"
        for (provider, model), given in agents.items()
        if price(provider, model, given, stored.get(pricing_name(model))) is None
    ]


def cost_usd(input_tokens: int, output_tokens: int, pricing: SnapshotPrice) -> float:
    """Dollars for the tokens at the price captured in the snapshot, to the cent's ten-thousandth the cost columns
    keep (6 decimals)."""
    return round((input_tokens * pricing.input_per_mtok + output_tokens * pricing.output_per_mtok) / 1_000_000, 6)


def turn_cost(before: tuple[int, int], usage: tuple[int, int], pricing: SnapshotPrice | None) -> float | None:
    """A turn's cost: what the experiment's tokens cost after it, less what they cost before it (``before``: the
    experiment's input and output tokens so far). Each total is rounded once, so the turns' costs add up to
    exactly the cost of the experiment's tokens (rounding each turn's own cost would drift a millionth of a
    dollar a turn). None without a price: unpriced is unknown, never $0 (the experiment's total stays NULL)."""
    if pricing is None:
        return None
    after = (before[0] + usage[0], before[1] + usage[1])
    return round(cost_usd(*after, pricing) - cost_usd(*before, pricing), 6)
