"""Labels a reader tells apart (issue 37): a model name or an agent's label that would read the same as another in
a table is refused where it enters (the execution input, a sweep file), with the character and what it reads as."""

from __future__ import annotations

import random
import unicodedata

import pytest
from confusable_homoglyphs import categories, confusables

from oriole.core import sweep_plan
from oriole.errors import InvalidExecutionInput, SweepFileError
from oriole.inputs import ExecutionInput, parse
from oriole.labels import label_problem, look_alike

MODELS = ["gpt-4.1-mini", "qwen2.5:7b", "llama3.1:8b", "claude-sonnet", "mistral-small", "gemma2:9b"]


def homoglyph(char: str, rng: random.Random) -> str | None:
    """A letter of another script (not Latin, not common to all) that Unicode lists as confusable with ``char``."""
    found = [
        glyph["c"]
        for glyph in confusables.confusables_data.get(char, ())
        if len(glyph["c"]) == 1
        and categories.alias(glyph["c"]) not in {"LATIN", "COMMON", "INHERITED"}
        and unicodedata.is_normalized("NFKC", glyph["c"])
    ]
    return rng.choice(found) if found else None


def spoofed(name: str, rng: random.Random) -> str:
    """``name`` with one letter swapped for a look-alike of another script."""
    positions = [i for i, char in enumerate(name) if char.isalpha() and homoglyph(char, rng)]
    i = rng.choice(positions)
    return name[:i] + str(homoglyph(name[i], rng)) + name[i + 1 :]


@pytest.mark.parametrize("seed", range(12))
def test_a_model_name_with_a_letter_of_another_script_that_looks_alike_is_refused_at_the_input(seed):
    rng = random.Random(seed)
    name = spoofed(rng.choice(MODELS), rng)
    assert label_problem(name) is not None and "looks like" in str(label_problem(name))
    with pytest.raises(InvalidExecutionInput, match="mixes scripts"):
        parse(ExecutionInput, {"mazeId": "perfect-7", "llmProvider": "ollama", "modelName": name}, "input")
    with pytest.raises(InvalidExecutionInput, match="agentLabel"):
        parse(
            ExecutionInput,
            {"mazeId": "perfect-7", "llmProvider": "ollama", "modelName": "m", "agentLabel": name},
            "input",
        )


@pytest.mark.parametrize("seed", range(6))
def test_a_label_that_normalisation_would_change_is_refused(seed):
    rng = random.Random(seed)
    base = rng.choice(["café", "naïve-model", "Ångström", "résumé-7b"])
    changed = rng.choice(
        [
            unicodedata.normalize("NFD", base),
            base.replace("e", "\uff45"),  # fullwidth e
            base[0] + "\U0001d5ba" + base[1:],  # mathematical sans-serif a
            base + "\u00b2",  # superscript two
        ]
    )
    assert changed != base and "reads as others" not in (label_problem(base) or "")
    assert "Unicode reads as others" in str(label_problem(changed))


def test_words_of_different_scripts_side_by_side_are_labels_like_any_other():
    for label in ("qwen 中文", "модель gpt", "Ollama/qwen2.5:7b @ 東京", "日本語モデル", "Straße", "ΑΒΓ model"):
        assert label_problem(label) is None, label


@pytest.mark.parametrize("seed", range(6))
def test_two_agents_of_a_sweep_that_read_the_same_are_refused(seed):
    rng = random.Random(seed)
    label = rng.choice(
        ["\u0440\u043e\u0440", "\u0441\u043e\u0441\u043e\u0430", "\u0435\u0440\u043e\u0441"]
    )  # Cyrillic words that read as Latin ones
    latin = "".join(next(g["c"] for g in confusables.confusables_data[c] if g["c"].isascii()) for c in label)
    assert look_alike(label, latin) and not look_alike(latin, latin) and not look_alike("gpt-4o", "gpt-40")
    agents = [
        {"label": label, "provider": "baseline", "model": "oracle"},
        {"label": latin, "provider": "baseline", "model": "explorer"},
    ]
    spec = sweep_plan.SweepFile.model_validate({"id": "s", "agents": agents, "mazes": ["perfect-7"]})
    with pytest.raises(SweepFileError, match="read the same"):
        sweep_plan.cells(spec)


def test_a_name_that_reads_like_a_stored_one_is_refused_with_both_spellings_escaped():
    from oriole.labels import check_against_stored

    asked = []

    def stored(ascii_too: bool) -> list[str]:
        asked.append(ascii_too)
        return ["cafe\u0301", "cocoa", "gpt-4.1-mini"]

    with pytest.raises(InvalidExecutionInput) as refused:
        check_against_stored(["\u0441\u043e\u0441\u043e\u0430"], stored)  # Cyrillic letters
    assert "'\\u0441\\u043e\\u0441\\u043e\\u0430' reads the same as 'cocoa'" in str(refused.value)
    with pytest.raises(InvalidExecutionInput, match=r"'caf\\xe9' reads the same as 'cafe\\u0301'"):
        check_against_stored(["café"], stored)
    check_against_stored(["gpt-4.1-mini", "cocoa"], stored)  # the stored spellings themselves
    check_against_stored(["qwen 中文"], stored)
    assert asked == [True, True, False, True]  # ASCII names are held only against the stored ones beyond ASCII
