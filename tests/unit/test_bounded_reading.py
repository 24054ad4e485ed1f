"""Reading what comes from outside is bounded by the input's size, and refused at one fixed depth (issue 37): a
TOML key's parts are counted before the parser meets them, every local file goes through the bounded reader, and a
number too long to read is named by its length, never shown as ``inf``."""

from __future__ import annotations

import random
import time

import pytest

from oriole.core import mazeset, sweep_plan
from oriole.errors import InvalidModelResponse, SweepFileError, UnknownMaze
from oriole.providers.wire import reported_count
from oriole.text import MAX_JSON_DEPTH, LongInteger, NestedTooDeeply, load_json
from oriole_workstation import files, mazefiles, price_list, prompts, sweep_runs

BASE = 'id = "s"\nagents = ["baseline/explorer"]\nmazes = ["perfect-7"]\n'


def dotted(parts: int, rng: random.Random) -> str:
    """A dotted key of ``parts`` parts, bare and quoted, with or without spaces and tabs around the dots."""
    names = [rng.choice(("a", "k_1", '"q"', "'lit'", '"with.dot"', "x-y")) for _ in range(parts)]
    return "".join(
        name + (rng.choice((".", " . ", "\t.", ". ")) if n < parts - 1 else "") for n, name in enumerate(names)
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_toml_key_of_more_parts_than_a_file_may_nest_is_refused_before_the_parser_meets_it(tmp_path, seed):
    rng = random.Random(seed)
    parts = rng.choice((MAX_JSON_DEPTH + 1, rng.randint(100, 1000), rng.randint(20_000, 120_000)))
    key = dotted(parts, rng)
    text = BASE + rng.choice((f"{key} = 1\n", f"[{key}]\nx = 1\n", f"[[{key}]]\n", f"t = {{ {key} = 1 }}\n"))
    path = tmp_path / "sweep.toml"
    path.write_text(text[: sweep_runs.MAX_FILE_BYTES])
    started = time.process_time()
    with pytest.raises(SweepFileError, match=f"TOML nested deeper than {MAX_JSON_DEPTH} levels"):
        sweep_runs.load(path)
    assert time.process_time() - started < 1.0  # before the fix: 56 s for 100 KB, over an hour for 1 MB


def test_the_count_reads_strings_and_comments_as_the_parser_does():
    deep = ".".join(["a"] * 80)
    for text in (
        f'x = "{deep}"\n',  # a value, not a key
        f"x = '{deep}'\n",
        f'x = """\n{deep} = 1\n"""\n',  # a key in a multi-line string is text
        f"x = '''\n{deep} = 1\n'''''\n",
        f"# {deep} = 1\n",
        f'x = "escaped \\" {deep}"\n',
    ):
        assert files.toml_key_parts(text) <= 2, text
        assert files.load_toml(text, MAX_JSON_DEPTH) is not None
    hidden = 'x = """ends here \\\\"""\n' + deep + " = 1\n"  # an escaped backslash does not escape the quote
    assert files.toml_key_parts(hidden) == 80
    assert files.toml_key_parts('a."b.c" . d = 1') == 3


def test_the_parts_a_file_may_nest_still_read_and_a_megabyte_of_them_reads_in_seconds():
    key = ".".join(["a"] * MAX_JSON_DEPTH)
    assert files.load_toml(f"{key} = 1\n", MAX_JSON_DEPTH)
    text = "".join(f"k{i}." + ".".join(["a"] * (MAX_JSON_DEPTH - 2)) + " = 1\n" for i in range(7_500))
    started = time.process_time()
    files.load_toml(text, MAX_JSON_DEPTH + 1)
    assert time.process_time() - started < 10  # about 2.5 s here: linear in the file's size


@pytest.mark.parametrize("seed", range(3))
def test_the_local_prices_file_is_read_through_the_bounded_reader(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    depth = rng.randint(MAX_JSON_DEPTH + 1, 200_000)
    for text, message in (
        ('{"m": ' + "[" * depth + "]" * depth + "}", "nested deeper than 64 levels"),
        ('{"m": {"inputPerMTok": ' + "9" * rng.randint(101, 50_000) + ', "outputPerMTok": 1}}', "digits"),
        ("[" * depth, "nested deeper than 64 levels"),
    ):
        price_list.path().write_text(text)
        with pytest.raises(price_list.PricesRejected, match=message):
            price_list.load()


def test_a_json_integer_too_long_to_read_is_named_by_its_length_never_inf():
    digits = "7" * 5000
    value = load_json(f'{{"eval_count": {digits}}}')
    assert isinstance(value, dict) and isinstance(value["eval_count"], LongInteger)
    assert repr(value["eval_count"]) == "an integer of 5,000 digits"
    with pytest.raises(InvalidModelResponse, match="eval_count = an integer of 5,000 digits, which is not a count"):
        reported_count(value["eval_count"], "eval_count")
    with pytest.raises(NestedTooDeeply, match="nested deeper than 3 levels"):
        load_json("[[[[1]]]]", 3)


@pytest.mark.parametrize("seed", range(4))
def test_a_name_with_a_final_line_break_is_refused_whole(tmp_path, seed):
    rng = random.Random(seed)
    name = "".join(rng.choice("abcxyz019._-") for _ in range(rng.randint(1, 60))) + "v"
    ending = rng.choice(["\n", "\r\n", "\n\n", "\r"])
    with pytest.raises(prompts.PromptRejected, match="must be 1-64 letters"):
        prompts.check(name + ending, "a prompt")
    maze = tmp_path / "maze.txt"
    maze.write_text("S.G\n")
    with pytest.raises(mazefiles.MazeFileError, match="must be 1-64 letters"):
        mazefiles.read(maze, name=name + ending)
    with pytest.raises(UnknownMaze):
        mazeset.seeded(f"perfect-{rng.choice((7, 9, 11))}@{rng.randint(0, 10**9)}{ending}")


@pytest.mark.parametrize("seed", range(4))
def test_numbers_a_sweep_file_gives_are_range_checked_where_it_is_read(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "sweep.toml"
    limit = rng.choice((f"1e{rng.randint(10, 308)}", str(sweep_plan.MAX_SPEND_LIMIT_USD * 10), "9" * 30 + ".0"))
    path.write_text(BASE + f"spend_limit_usd = {limit}\n")
    with pytest.raises(SweepFileError, match="spend_limit_usd"):
        sweep_runs.load(path)
    path.write_text(BASE.replace('["perfect-7"]', f"[{rng.randint(2**63, 2**80)}]"))
    with pytest.raises(SweepFileError, match="mazes"):
        sweep_runs.load(path)
