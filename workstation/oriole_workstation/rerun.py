"""A recorded experiment run again from its record: the execution input that starts a new experiment with exactly
the configuration, prompt text, maze and seed the recorded one ran with (``oriole rerun``).

Where ``oriole replay`` answers every call from the stored answers to check the harness, a rerun asks the model
again: a new experiment, compared with the original as any two experiments are. It is built from the row alone:
the maze by its id (the very grid), the provider and model, the configuration snapshot as overrides (the seed
included, so the maze's randomness and a seeded server's sampling are the same; the keys of its provider only: a
snapshot taken before issue 31 may hold other providers' keys, which never applied), the price it was charged at,
and the prompt version, refused unless the text stored under that version today is the recorded text (by hash), and
the model build its server reported (StartExperiment refuses the rerun when the server now serves another).
Refused with the reason, too: a replay's scratch experiment, a snapshot that StartExperiment could not have
written (its row was altered), and one holding a value a new experiment may no longer use (a maximum lowered since
it ran: ``Parameter.recorded_maximum``). Pure: the caller reads the row and the stored prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oriole import catalog
from oriole.config import SNAPSHOT_EXTRAS, check_override, snapshot_problem
from oriole.errors import InvalidConfig, OrioleError
from oriole.providers.identity import UNKNOWN

# what a rerun reads of the recorded experiment (experiments' columns)
RECORD = """SELECT id, maze_id, llm_provider, model_name, prompt_version, prompt_hash, agent_id, agent_label, config,
                   replay_of, model_build
              FROM experiments WHERE id = %s"""


class RerunRefused(OrioleError):
    """A recorded experiment that cannot be run again exactly as it ran."""


def execution_input(record: Mapping[str, Any], prompts: Mapping[str, str], any_build: bool = False) -> dict:
    """The execution input of the rerun of ``record`` (a ``RECORD`` row), given the prompt versions stored now
    (version -> text); ``RerunRefused`` saying why when the rerun could not be what ran. The recorded model build,
    where the server told one, is asked for (``modelBuild``: StartExperiment refuses the rerun, with the reason,
    when the server now serves another), unless ``any_build``."""
    number, snapshot = record["id"], record["config"]
    if record["replay_of"] is not None:
        raise RerunRefused(
            f"experiment {number} is the replay of experiment {record['replay_of']}: rerun experiment "
            f"{record['replay_of']}"
        )
    if problem := snapshot_problem(snapshot):
        raise RerunRefused(f"experiment {number} cannot be rerun: {problem}")
    version, recorded = record["prompt_version"], record["prompt_hash"]
    text = prompts.get(version)
    if text is None or catalog.prompt_hash(text) != recorded:
        now = "none" if text is None else f"a text with sha256 {catalog.prompt_hash(text)[:12]}"
        raise RerunRefused(
            f"experiment {number} ran with prompt {version} sha256 {recorded[:12]}, and {version} now holds {now}: "
            f"store the recorded text (experiments.prompt_text) as {version} again (`oriole prompts put`) to rerun it"
        )
    provider = record["llm_provider"]
    # the keys that played a part, the only ones a new experiment may set (a snapshot taken before issue 31 may hold
    # another provider's keys, and one taken before the catalog's applies_when a key its other settings left idle,
    # historyTurns under historyMode actions, a retired compaction without summary): the rerun runs the same
    config = catalog.applying(
        {
            key: value
            for key, value in snapshot.items()
            if key not in SNAPSHOT_EXTRAS and provider in catalog.BY_KEY[key].providers
        }
    )
    try:  # a record may hold what a release since refuses to new experiments (a lowered maximum, a retired choice)
        for key, value in config.items():
            check_override(catalog.BY_KEY[key], value)
    except InvalidConfig as err:
        raise RerunRefused(
            f"experiment {number} cannot be rerun as it ran: a new experiment may no longer use its {err}; "
            "`oriole replay` still reads it"
        ) from None
    data: dict = {
        "mazeId": record["maze_id"],
        "llmProvider": provider,
        "modelName": record["model_name"],
        "promptVersion": version,
        "config": config,
        "comment": f"rerun of experiment {number}",
    }
    if price := snapshot.get("pricing"):
        data["prices"] = {
            "inputPerMTok": price["inputPerMTok"],
            "outputPerMTok": price["outputPerMTok"],
            "source": f"experiment {number}'s snapshot",
        }
    build = record.get("model_build")
    if build is not None and build != UNKNOWN and not any_build:
        data["modelBuild"] = build
    for field, column in (("agentId", "agent_id"), ("agentLabel", "agent_label")):
        if record[column] is not None:
            data[field] = record[column]
    return data
