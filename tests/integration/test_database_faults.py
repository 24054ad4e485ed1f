"""Database faults against real PostgreSQL: a connection the server dropped is replaced once and the
statement sent again, a turn whose commit reached the database but whose answer was lost is safe to send
again, and the migrations wait (within bounds) for a database still starting. Drops are real: the server
ends the backend (``pg_terminate_backend``); refusals too: nothing listens on the port."""

import threading

import psycopg
import pytest

from oriole import catalog
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest, TurnRequest
from oriole.providers import baseline
from oriole.store import Store, db


def terminate(database_url: str, conn: psycopg.Connection) -> None:
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


def reconnecting_store(database_url: str) -> tuple[Store, list]:
    fresh = []

    def reconnect():
        fresh.append(db.connect(database_url))
        return fresh[-1]

    return Store(db.connect(database_url), reconnect=reconnect), fresh


def start(store, arn: str) -> int:
    event = {
        "input": {
            "mazeId": "perfect-9",
            "llmProvider": "baseline",
            "modelName": "oracle",
            "config": {"maxActionsPerTurn": 3},
        },
        "executionArn": arn,
    }
    return experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()[
        "experimentId"
    ]


def play(store, experiment_id: int, turn: int) -> dict:
    return experiments.play_turn(
        TurnRequest.model_validate({"experimentId": experiment_id, "turnNumber": turn}), store, baseline.agent
    )


def written(store, experiment_id: int) -> tuple:
    row = store.conn.execute(
        "SELECT (SELECT count(*) FROM actions WHERE experiment_id = %(id)s) AS actions, "
        "(SELECT count(*) FROM turns WHERE experiment_id = %(id)s) AS turns, "
        "(SELECT action_count FROM experiments WHERE id = %(id)s) AS total",
        {"id": experiment_id},
    ).fetchone()
    return row["actions"], row["turns"], row["total"]


def test_a_connection_dropped_between_turns_is_replaced_once(database_url):
    store, fresh = reconnecting_store(database_url)
    experiment_id = start(store, "arn:test:dropped-between-turns")
    play(store, experiment_id, 1)
    dropped = store.conn
    terminate(database_url, dropped)
    assert play(store, experiment_id, 2).actions == 3
    assert len(fresh) == 1 and store.conn is fresh[0] and dropped.closed
    assert written(store, experiment_id) == (6, 2, 6)


def test_a_commit_whose_answer_was_lost_is_sent_again_and_writes_nothing(database_url):
    store, fresh = reconnecting_store(database_url)
    experiment_id = start(store, "arn:test:lost-commit")
    play(store, experiment_id, 1)
    doomed = store.conn
    seen_committed = []

    class LosingTheCommitsAnswer(psycopg.Cursor):
        def execute(self, query, params=None, **options):
            sent = super().execute(query, params, **options)
            if "WITH advanced AS" in query:  # the turn's one write statement has committed on the server
                seen_committed.append(written(Store(fresh_probe), experiment_id))
                terminate(database_url, doomed)
                super().execute("SELECT 1")  # the connection is gone before the answer is read: OperationalError
            return sent

    with db.connect(database_url) as fresh_probe:
        doomed.cursor_factory = LosingTheCommitsAnswer
        result = play(store, experiment_id, 2)
    assert seen_committed == [(6, 2, 6)]  # the first send wrote the turn
    assert len(fresh) == 1 and written(store, experiment_id) == (6, 2, 6)  # the second send wrote nothing
    assert result == play(store, experiment_id, 2) and result.actions == 3


def test_an_error_on_a_healthy_connection_is_not_sent_again(database_url):
    store = Store(db.connect(database_url), reconnect=lambda: pytest.fail("the connection was not dropped"))
    experiment_id = start(store, "arn:test:lock-timeout")
    with psycopg.connect(database_url) as holder:  # a transaction holding the experiment's row
        holder.execute("SELECT 1 FROM experiments WHERE id = %s FOR UPDATE", (experiment_id,))
        store.conn.execute("SET lock_timeout = '50ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            store.finalize(experiment_id, "failed", "blocked")
    assert not store.conn.broken


class Clock:
    """Time that passes only when the code under test sleeps."""

    def __init__(self):
        self.now, self.waits = 0.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def test_the_migrations_wait_for_a_database_that_is_still_starting(monkeypatch, database_url):
    """The first deploy's trigger runs the migrations right after the database was created: connections are
    refused (here: a real refusal, nothing listens on the port) until it is up, then the migrations go on."""
    clock = Clock()
    monkeypatch.setenv("DATABASE_URL", "postgresql://oriole@127.0.0.1:9/oriole?connect_timeout=2")

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        if len(clock.waits) == 3:  # the database comes up
            monkeypatch.setenv("DATABASE_URL", database_url)

    with db.connect_patiently(240, sleep=sleep, clock=clock) as conn:
        assert conn.execute("SELECT 1 AS up").fetchone()["up"] == 1
    assert clock.waits == [1.0, 2.0, 4.0]  # backoff


def test_a_database_that_never_comes_up_fails_the_migrations_with_its_reason_in_bounded_time(monkeypatch):
    clock = Clock()
    monkeypatch.setenv("DATABASE_URL", "postgresql://oriole@127.0.0.1:9/oriole?connect_timeout=2")
    with pytest.raises(psycopg.OperationalError, match="Connection refused"):
        db.connect_patiently(60, sleep=clock.sleep, clock=clock)
    assert clock.waits == [1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]  # capped backoff, all within the budget
    assert sum(clock.waits) <= 60


def _statement_on_the_shared_connection(database_url: str, monkeypatch, sql: str) -> tuple[threading.Thread, list]:
    """A thread sending ``sql`` on the shared connection, started once the statement is on its way."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    db.reset()
    conn, answered, sent = db.connection(), [], threading.Event()

    def send() -> None:
        try:
            with conn.lock:  # what psycopg's execute holds for the statement: taken here to know it is on its way
                sent.set()
                answered.append(conn.pgconn.exec_(sql.encode()).status)
        except psycopg.Error as error:
            answered.append(error)

    thread = threading.Thread(target=send)
    thread.start()
    assert sent.wait(10)
    return thread, answered


def test_the_shared_connection_closes_after_another_threads_statement_ends(database_url, monkeypatch):
    """A sweep's executions write their turns on the shared connection from their own threads; the runner closes
    it when it stops (a second Ctrl-C), and closing under a statement freed what libpq was reading (a SIGABRT)."""
    thread, answered = _statement_on_the_shared_connection(database_url, monkeypatch, "SELECT pg_sleep(0.5)")
    db.reset()
    assert answered == [psycopg.pq.ExecStatus.TUPLES_OK]  # the statement ended before the close
    thread.join(10)
    assert db.current() is None


def test_a_statement_that_does_not_end_is_cancelled_before_the_close(database_url, monkeypatch):
    monkeypatch.setattr(db, "CLOSE_PATIENCE_SECONDS", 0.2)
    thread, answered = _statement_on_the_shared_connection(database_url, monkeypatch, "SELECT pg_sleep(60)")
    db.reset()
    thread.join(10)
    assert not thread.is_alive() and answered == [psycopg.pq.ExecStatus.FATAL_ERROR]  # canceled, not waited out
