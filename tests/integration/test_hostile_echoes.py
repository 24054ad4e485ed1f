"""What a command echoes back (a model name, a path it wrote) is shown like stored text, never obeyed (issue 37):
escape sequences, OSC 8 links and bidirectional characters in an argument are written out."""

from __future__ import annotations

import random
import re

import pytest

from oriole_workstation import display
from tests.integration.conftest import baseline

RAW = re.compile(f"(?![\t\n])[{display.OBEYED}]")
SEQUENCES = [
    "\x1b[2J",  # clear the screen
    "\x1b]8;;http://evil.example\x07link\x1b]8;;\x07",  # OSC 8: a hidden link
    "\x1b]0;title\x07",  # retitle the window
    "\u202e",  # right-to-left override
    "\u2066\u2069",  # isolates
    "\x9b31m",  # C1 CSI
    "\u200b",  # zero width
]


def hostile(rng: random.Random, plain: str) -> str:
    """``plain`` with a few escape or bidirectional sequences spliced in at random places."""
    text = plain
    for sequence in rng.sample(SEQUENCES, 3):
        at = rng.randint(0, len(text))
        text = text[:at] + sequence + text[at:]
    return text


@pytest.fixture(scope="module")
def database_url(module_database):
    """A database of this file's own: the test reports and exports every experiment of the database."""
    return module_database


@pytest.mark.parametrize("seed", range(3))
def test_prices_set_and_unset_write_the_model_name_out(cli, seed):
    model = hostile(random.Random(seed), "my-model")
    for args in (("prices", "set", model, "--input", "1", "--output", "2"), ("prices", "unset", model)):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert not RAW.findall(result.output) and "my-model" not in result.output  # written out, so split
        assert "\\x1b" in result.output or "\\u20" in result.output or "\\x9b" in result.output


def test_a_price_of_minus_zero_reads_zero(cli):
    result = cli("prices", "set", "zero-model", "--input", "-0", "--output", "-0.0")
    assert result.exit_code == 0 and "$0 in, $0 out" in result.output and "-0" not in result.output


@pytest.mark.parametrize("seed", range(2))
def test_the_wrote_lines_write_a_hostile_path_out(cli, local, tmp_path, seed):
    experiment = local.run(baseline("oracle", "perfect-7")).summary.experiment_id
    folder = tmp_path / hostile(random.Random(seed), "out")
    for args in (
        ("render", str(experiment), "--dir", str(folder)),
        ("transcript", str(experiment), "-o", str(folder / "t.txt")),
        ("report", "-o", str(folder / "r.txt"), "--figures", str(folder / "figures")),
        ("export", "--format", "csv", "-o", str(folder / "export")),
    ):
        result = cli(*args)
        assert result.exit_code == 0, (args, result.output)
        assert "wrote" in result.output and not RAW.findall(result.output), args
