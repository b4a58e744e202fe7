"""PostgreSQL checkpoints: many threads from two processes on one database; one process
is killed mid-run and the other resumes its threads; every thread completes and no
finished subtask runs twice. Needs a server: `.ci/run` starts one (scripts/postgres.sh)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
URL = os.environ.get("HUGGINGGPT_TEST_POSTGRES_URL")


@pytest.fixture
def database():
    if not URL:
        if os.environ.get("CI"):
            pytest.fail("HUGGINGGPT_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL")
        pytest.skip("no PostgreSQL: run `eval \"$(scripts/postgres.sh start)\"` first")
    import psycopg

    name = f"hgpt_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield URL.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _worker(url: str, mode: str, workspace: Path, log: Path, threads: list[str]):
    env = {**os.environ, "PG_TEST_LOG": str(log), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(ROOT / "tests" / "pg_worker.py"), url, mode,
                             str(workspace), *threads], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _subtask(line: str) -> tuple[str, int]:
    """(thread, subtask id) of a log line: "start PID a3/a 0.4" is subtask 0, "a3/a->b"
    subtask 1, "a3/c" subtask 2."""
    name = line.split()[2]
    thread, step = name.split("/", 1)
    return thread, {"a": 0, "a->b": 1, "c": 2}[step]


def _checkpointed_subtasks(url: str, threads: list[str]) -> set[tuple[str, int]]:
    """The subtasks whose results are saved in the threads' checkpoints: in the state's
    results (execute finished) or in the pending writes of an interrupted execute step."""
    from hugginggpt.graph.checkpoint import open_checkpointer

    def done(value: object) -> bool:
        status = value.get("status") if isinstance(value, dict) else getattr(value, "status", None)
        return status == "done"

    saved = set()
    with open_checkpointer(url) as saver:
        for thread in threads:
            found = saver.get_tuple({"configurable": {"thread_id": thread}})
            if found is None:
                continue
            results = found.checkpoint["channel_values"].get("results") or {}
            saved |= {(thread, int(i)) for i, value in results.items() if done(value)}
            for _, _, value in found.pending_writes or []:
                if isinstance(value, dict) and done(value) and "id" in value:
                    saved.add((thread, int(value["id"])))
    return saved


def test_two_processes_one_killed_the_other_resumes(database, tmp_path):
    log = tmp_path / "calls.log"
    doomed = [f"a{i}" for i in range(10)]
    survivor = [f"b{i}" for i in range(10)]
    a = _worker(database, "run", tmp_path / "ws", log, doomed)
    b = _worker(database, "run", tmp_path / "ws", log, survivor)

    def lines() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    deadline = time.monotonic() + 120
    while not sum(1 for x in lines() if x.startswith(f"end {a.pid} ")) >= 10:
        assert time.monotonic() < deadline and a.poll() is None, (a.poll(), lines()[-5:])
        time.sleep(0.05)
    # kill as soon as a finished subtask's result is in the database (not after a guess
    # of how long the writes take: on a busy machine they take longer)
    while not _checkpointed_subtasks(database, doomed):
        assert time.monotonic() < deadline and a.poll() is None, (a.poll(), lines()[-5:])
        time.sleep(0.02)
    a.send_signal(signal.SIGKILL)
    a.wait(10)
    finished_before_kill = sum(1 for x in lines() if x.startswith(f"done {a.pid} "))
    assert finished_before_kill < len(doomed)  # it really died mid-run
    at_kill = len(lines())
    saved = _checkpointed_subtasks(database, doomed)
    assert saved  # some of the killed process's subtasks had finished and were saved

    assert b.wait(120) == 0, b.stderr.read()
    resumed = _worker(database, "resume", tmp_path / "ws", log, doomed)
    assert resumed.wait(120) == 0, resumed.stderr.read()

    done = {x.split()[2] for x in lines() if x.startswith("done ")}
    assert done == set(doomed) | set(survivor)  # every thread completed
    ends = Counter(_subtask(x) for x in lines() if x.startswith("end "))
    assert len(ends) == 20 * 3  # every subtask of every thread finished
    # what the resume ran (the survivor keeps starting its own subtasks after the kill)
    rerun = Counter(_subtask(x) for x in lines()[at_kill:]
                    if x.startswith(f"start {resumed.pid} "))
    # exactly the subtasks not saved at the kill ran again (none, when the killed process
    # had saved every result and only the answers were left)
    assert set(rerun) == {(t, s) for t in doomed for s in range(3)} - saved

    from hugginggpt import build_graph
    from hugginggpt.graph.checkpoint import open_checkpointer

    with open_checkpointer(database) as saver:
        app = build_graph(checkpointer=saver)
        for thread in doomed + survivor:
            values = app.get_state({"configurable": {"thread_id": thread}}).values
            assert values["status"] == "completed"
            assert {r.status for r in values["results"].values()} == {"done"}
