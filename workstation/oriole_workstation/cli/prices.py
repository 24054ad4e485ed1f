"""``oriole prices``: what each model's tokens cost, kept in the local prices file (``$ORIOLE_HOME/prices.json``) or
in Parameter Store with ``--aws``, beside the list prices oriole ships. An experiment is charged at the first price
found: its sweep file's, then these, then the list price (``oriole.core.prices``)."""

from __future__ import annotations

from typing import Annotated

import typer

from oriole import catalog
from oriole.core import prices
from oriole_workstation.cli.common import AwsParameterStore, Commands, fail, number, out, print_columns
from oriole_workstation.display import terminal_safe

app = Commands(
    help="Model prices, in USD per million tokens.\n\nThe local prices file, or Parameter Store with --aws.",
    no_args_is_help=True,
)


def _ssm():
    import boto3

    return boto3.client("ssm")


@app.command("list")
def prices_list(aws: AwsParameterStore = False) -> None:
    """Every known price and where it comes from.

    The ones set (locally, or in Parameter Store with --aws), then the list prices shipped
    for the example Bedrock and OpenAI models, with where each comes from."""
    from oriole_workstation import price_list

    stored = price_list.aws_prices(_ssm()) if aws else price_list.load()
    where = f"Parameter Store {catalog.PRICING_PATH}" if aws else str(price_list.path())
    rows = [
        (model, f"{p.input_per_mtok:g}", f"{p.output_per_mtok:g}", p.source)
        for model, p in price_list.listed(stored, where)
    ]
    print_columns(("model", "input", "output", "source (USD per million tokens)"), rows)


@app.command("set")
def prices_set(
    model: Annotated[str, typer.Argument(help="The model name, exactly as experiments give it.")],
    input_price: Annotated[
        float,
        typer.Option(
            "--input", metavar="USD", help="USD per million input tokens.", parser=number(0, catalog.MAX_PRICE_PER_MTOK)
        ),
    ],
    output_price: Annotated[
        float,
        typer.Option(
            "--output",
            metavar="USD",
            help="USD per million output tokens.",
            parser=number(0, catalog.MAX_PRICE_PER_MTOK),
        ),
    ],
    aws: AwsParameterStore = False,
) -> None:
    """Set a model's prices.

    New experiments of the model are charged at them (a sweep file's own prices come
    first)."""
    from oriole_workstation import price_list

    where = (
        price_list.put_aws(_ssm(), model, input_price, output_price)
        if aws
        else price_list.put(model, input_price, output_price)
    )
    out.print(
        terminal_safe(f"{model}: ${input_price:g} in, ${output_price:g} out per million tokens, in {where}"),
        markup=False,
        highlight=False,
    )


@app.command("unset")
def prices_unset(model: Annotated[str, typer.Argument(help="The model name.")], aws: AwsParameterStore = False) -> None:
    """Remove a model's prices.

    Its list price, if oriole ships one, applies again.
    """
    from oriole_workstation import price_list

    if not (price_list.remove_aws(_ssm(), model) if aws else price_list.remove(model)):
        raise fail(f"no price set for {model}" + (" in Parameter Store" if aws else " in the local prices file"))
    fallback = prices.list_price(model)
    out.print(
        terminal_safe(
            f"{model}: price removed" + (f"; its list price applies: {fallback.describe()}" if fallback else "")
        ),
        markup=False,
        highlight=False,
    )
