"""`oriole view` over real runs, through Flask's test client: every page answers from the read-only role, filters
and sorts and searches, links up and across, refuses what it cannot use with a reason, sends its security headers,
and shows a hostile model answer as text. (The same pages in Chromium: tests/browser/test_viewer_in_chromium.py.)"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser

import psycopg
import pytest

from oriole_workstation.viewer.app import POLICY, create_app
from oriole_workstation.viewer.reader import Reader, ReaderRefused, connect_reader
from tests import openai_server
from tests.integration.conftest import baseline
from tests.integration.test_providers_local import MAZE, OPENAI_MODEL, shortest_moves

SWEEP = "viewer-test"  # each test module's sweep adds a hash of its module's name
BEACON = "http://127.0.0.2:9/beacon"
# A model answer that tries to leave every context it could land in (a <pre>, an attribute, a script's JSON, an
# SVG title) and to load a beacon or run a script.
HOSTILE = (
    f"</pre></div></script><script>window.pwned=1;fetch('{BEACON}')</script><img src=\"{BEACON}.png\" "
    f'onerror="window.pwned=2"><svg onload="window.pwned=3"></svg>"\'><!-- {{{{7*7}}}} \u202eevil'
)


@dataclass(frozen=True)
class Viewed:
    """What the viewer's tests look at: a sweep of baselines (its id, the experiments' ids in order) and an
    experiment whose model answered ``HOSTILE``."""

    sweep_id: str
    sweep: list[int]
    hostile: int


def sweep_input(sweep: str, agent: str, maze: str, repetition: int) -> dict:
    """An experiment of the (planned) sweep, as its sweep flow starts it."""
    return baseline(agent, maze, maxMoves=60) | {
        "agentId": f"{sweep}/{agent}-{maze}/r{repetition}",
        "sweepId": sweep,
        "comment": f"sweep:{sweep}",
    }


@pytest.fixture(scope="module")
def viewed(local, request) -> Viewed:
    # a sweep id (at most 40 characters) per test module, none a prefix of another: they share one database
    sweep = f"{SWEEP}-{hashlib.sha256(request.module.__name__.encode()).hexdigest()[:8]}"
    local.store.record_sweep_plan(sweep, 4, {"id": sweep})  # as PlanSweep does: its experiments join it
    ids = [
        local.run(sweep_input(sweep, agent, maze, 1)).as_json()["experiment_id"]
        for agent in ("oracle", "random")
        for maze in ("perfect-7", "perfect-9")
    ]
    assert all(ids), "every experiment of the viewer's sweep started"
    first, *rest = shortest_moves(MAZE)
    script = [  # the answer as the text beside a call, as a call's reasoning, and as a whole answer
        openai_server.tool_calls((first, {"reasoning": HOSTILE}), content=HOSTILE),
        openai_server.text_reply(HOSTILE),
        *(openai_server.tool_calls((m, {})) for m in rest),
    ]
    with openai_server.ScriptedOpenAI(*script) as server:
        hostile = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": OPENAI_MODEL,
                "comment": f"hostile-answer {sweep}-hostile",
                "config": {"baseUrl": server.base_url, "temperature": 0.0},
            }
        ).as_json()
    assert hostile["status"] == "succeeded", hostile
    return Viewed(sweep, ids, hostile["experiment_id"])


@pytest.fixture(scope="module")
def client(database_url):
    reader = Reader(database_url)
    app = create_app(reader)
    app.testing = True
    yield app.test_client()
    reader.close()


class Page(HTMLParser):
    """The tags, links, scripts and text of a page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def links(self) -> list[str]:
        return [a["href"] for tag, a in self.tags if tag == "a" and "href" in a]

    def attributes(self) -> set[str]:
        return {name for _, attrs in self.tags for name in attrs}


def get(client, path: str, status: int = 200) -> Page:
    answer = client.get(path)
    assert answer.status_code == status, (path, answer.status_code, answer.text[:500])
    assert answer.headers["Content-Security-Policy"] == POLICY and answer.headers["X-Content-Type-Options"] == "nosniff"
    return Page(answer.text)


def test_the_viewer_reads_as_the_read_only_role_and_cannot_write(database_url):
    conn = connect_reader(database_url)
    assert conn.execute("SELECT current_user").fetchone()["current_user"] == "oriole_reader"
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute("UPDATE experiments SET comment = 'changed' WHERE id = 1")
    conn.close()


def test_the_index_lists_the_sweep_and_the_latest_experiments(client, viewed):
    page = get(client, "/")
    assert f"/sweeps/{viewed.sweep_id}" in page.links() and f"/compare?sweep={viewed.sweep_id}" in page.links()
    assert f"/experiments/{viewed.hostile}" in page.links()


def test_a_sweep_page_counts_its_experiments_and_its_progress_is_json(client, viewed):
    page = get(client, f"/sweeps/{viewed.sweep_id}")
    assert {f"/experiments/{n}" for n in viewed.sweep} <= set(page.links())
    progress = client.get(f"/sweeps/{viewed.sweep_id}/progress").get_json()
    assert progress["status"]["done"] == len(viewed.sweep) and progress["status"]["running"] == 0
    assert sorted(e["id"] for e in progress["experiments"]) == viewed.sweep
    assert get(client, "/sweeps/no-such-sweep", 404)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("sweep=SWEEP&agent=baseline/oracle", lambda v: v.sweep[:2]),
        ("sweep=SWEEP&maze=perfect-9", lambda v: v.sweep[1::2]),
        ("sweep=SWEEP&ending=success&model=oracle", lambda v: v.sweep[:2]),
        ("q=SWEEP-hostile", lambda v: [v.hostile]),
        ("q=sweep:SWEEP&sort=id&order=asc", lambda v: v.sweep),
    ],
)
def test_the_experiment_list_filters_and_searches(client, viewed, query, expected):
    query = query.replace("SWEEP", viewed.sweep_id)
    page = get(client, f"/experiments?{query}" + ("" if "order=" in query else "&sort=id&order=asc"))
    shown = [int(a["data-id"]) for tag, a in page.tags if tag == "tr" and "data-id" in a]
    assert shown == expected(viewed), query


def test_the_experiment_list_sorts_by_a_column_either_way(client, viewed):
    ids = {}
    for order in ("asc", "desc"):
        page = get(client, f"/experiments?sweep={viewed.sweep_id}&sort=actions&order={order}")
        ids[order] = [int(a["data-id"]) for tag, a in page.tags if tag == "tr" and "data-id" in a]
    assert ids["asc"] != ids["desc"] and sorted(ids["asc"]) == sorted(viewed.sweep)


@pytest.mark.parametrize(
    "query, said",
    [
        ("since=yesterday", "since must be a date like 2026-11-25"),
        ("sort=secret", "sort must be one of id, agent"),
        ("ending=won", "ending must be one of success, agent, censored, error, running"),
        ("page=0", "page must be a whole number from 1"),
    ],
)
def test_a_query_it_cannot_use_is_refused_with_the_reason(client, query, said):
    answer = client.get(f"/experiments?{query}")
    assert answer.status_code == 400 and said in answer.text


def test_an_experiment_page_has_its_animation_transcript_provenance_and_links_up_and_across(client, viewed):
    middle = viewed.sweep[1]
    page = get(client, f"/experiments/{middle}")
    links = page.links()
    assert (
        f"/sweeps/{viewed.sweep_id}" in links and f"/compare?sweep={viewed.sweep_id}" in links
    )  # up, and to its report
    assert f"/experiments/{viewed.sweep[0]}" in links and f"/experiments/{viewed.sweep[2]}" in links  # across
    ids = {a.get("id") for _, a in page.tags}
    assert {"maze", "controls", "slider", "goto", "conversation", "provenance", "run-data"} <= ids
    scripts = [a.get("src") for tag, a in page.tags if tag == "script"]
    assert scripts == [None, "/static/animation.js", "/static/transcript.js"]  # the run as JSON, then the assets
    turns = [a for tag, a in page.tags if tag == "details" and a.get("class") == "turn"]
    assert turns and all(a["data-src"] == f"/experiments/{middle}/turns/{a['data-turn']}" for a in turns)
    one = client.get(turns[0]["data-src"])  # each turn is read when it is opened
    assert one.status_code == 200 and 'class="call"' in one.text
    assert client.get(f"/experiments/{middle}/turns/99999").status_code == 404
    assert get(client, "/experiments/99999999", 404)


def test_the_comparison_is_the_reports_with_links_down_to_each_experiment(client, viewed):
    page = get(client, f"/compare?sweep={viewed.sweep_id}")
    ids = {a.get("id") for _, a in page.tags}
    assert {"leaderboard", "comparison-table", "experiments-table", "success", "provenance"} <= ids
    assert {f"/experiments/{n}" for n in viewed.sweep} <= set(page.links())
    assert get(client, f"/compare?sweep={viewed.sweep_id}&by=maze").tags
    assert client.get("/compare?by=size").status_code == 400
    chosen = get(client, f"/compare?id={viewed.sweep[0]}&id={viewed.hostile}")  # a selection, one by one
    assert {link for link in chosen.links() if link.startswith("/experiments/")} == {
        f"/experiments/{n}" for n in (viewed.sweep[0], viewed.hostile)
    }
    assert client.get("/compare?id=seven").status_code == 400


def test_a_hostile_model_answer_is_text_everywhere(client, viewed):
    answer = client.get(f"/experiments/{viewed.hostile}")
    assert answer.status_code == 200
    text = answer.text
    page = Page(text)
    assert [a.get("src") for tag, a in page.tags if tag == "script"] == [
        None,
        "/static/animation.js",
        "/static/transcript.js",
    ]
    assert not [a for tag, a in page.tags if tag == "img" and BEACON in a.get("src", "")]
    assert not {name for name in page.attributes() if name.startswith("on")}  # no event handler anywhere
    assert f'src="{BEACON}' not in text and "<script>window.pwned" not in text  # never markup
    assert "\u202e" not in text
    turn = client.get(f"/experiments/{viewed.hostile}/turns/1")  # the turn the page reads when it is opened
    assert turn.status_code == 200 and turn.headers["Content-Security-Policy"] == POLICY
    fragment = Page(turn.text)
    assert {tag for tag, _ in fragment.tags} <= {"div", "p", "span", "pre", "details", "summary", "img"}
    assert not {name for name in fragment.attributes() if name.startswith("on")}
    shown = "".join(fragment.text)
    assert shown.count("window.pwned=1") >= 3 and "\\u202eevil" in shown  # text, call reasoning, answer: as text


def test_a_request_naming_another_host_is_refused(client):
    answer = client.get("/", headers={"Host": "attacker.example"})
    assert answer.status_code == 400


def test_the_deployed_readers_own_login_serves_and_an_application_login_is_refused(database_url, viewed):
    """On AWS the viewer logs in as oriole_reader itself (its secret, through the port forward): it serves. A login
    that cannot take the read-only role (the functions' oriole_app) is refused at start, saying what to use."""
    from oriole.store import db

    def as_login(role: str) -> str:
        info = psycopg.conninfo.conninfo_to_dict(database_url)
        return psycopg.conninfo.make_conninfo(**{**info, "user": role, "password": f"pw-{role}"})

    owner = db.connect(database_url)
    try:
        for role in ("oriole_reader", "oriole_app"):
            owner.execute(f"ALTER ROLE {role} LOGIN PASSWORD 'pw-{role}'")
        reader = Reader(as_login("oriole_reader"))
        answer = create_app(reader).test_client().get(f"/experiments/{viewed.sweep[0]}")
        reader.close()
        assert answer.status_code == 200
        with pytest.raises(ReaderRefused, match="connect as oriole_reader"):
            Reader(as_login("oriole_app")).open()
    finally:
        for role in ("oriole_reader", "oriole_app"):
            owner.execute(f"ALTER ROLE {role} NOLOGIN")
        owner.close()


def test_oriole_view_serves_on_loopback_until_ctrl_c_and_refuses_an_address_in_use(database_url, viewed, tmp_path):
    """The command a researcher runs: it prints its address, serves the pages with their security headers, stops
    cleanly at Ctrl-C; a second one on the same port is refused in one line, exit 2 (not werkzeug's exit 1)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "ORIOLE_HOME": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",
    }
    command = [sys.executable, "-c", "from oriole_workstation.command import main; main()", "view", "--port"]
    server = subprocess.Popen([*command, "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        said = server.stdout.readline() if server.stdout else ""
        address = re.search(r"http://127\.0\.0\.1:(\d+)/", said)
        assert address, (said, server.stderr.read() if server.poll() is not None and server.stderr else "")
        # generous: the first answer once took over a minute on a machine other suites loaded
        with urllib.request.urlopen(f"{address[0]}experiments/{viewed.sweep[0]}", timeout=240) as answer:
            assert answer.status == 200 and answer.headers["Content-Security-Policy"] == POLICY
        taken = subprocess.run([*command, address[1]], env=env, capture_output=True, text=True, timeout=120)
        assert taken.returncode == 2, taken.stderr
        assert taken.stderr.strip().splitlines() == [taken.stderr.strip()]
        assert f"cannot listen on 127.0.0.1:{address[1]}" in taken.stderr and "--port" in taken.stderr
    finally:
        server.send_signal(signal.SIGINT)
        # its pipes read while it stops (a child blocked writing to a full pipe never exits), and shown if it fails
        try:
            said, logged = server.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # where it was, rather than a bare timeout
            server.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack on stderr
            said, logged = server.communicate(timeout=60)
        if server.returncode != 0:  # whole, not cut as an assertion's operands are
            pytest.fail(f"oriole view exited {server.returncode} after Ctrl-C:\n{said}\n{logged}", pytrace=False)
