"""Checkpoints that grow linearly (issue 16, item 4): the LLM calls' prompts and replies
live in the store beside the checkpoints, the state keeps their accounting records of
the latest run only, and ``trace`` and ``replay`` read the text back from the store, or
from the records themselves in a thread checkpointed before the change.

Real parts: the SQLite checkpointer and store of ``hugginggpt run``, the local
OpenAI-compatible server over HTTP, the CLI's ``trace`` and ``replay``.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.graph.checkpoint import open_checkpointer, serializer
from hugginggpt.graph.state import this_run
from hugginggpt.tools.llm.records import LLMCall
from tests.conftest import run
from tests.test_postgres import database  # noqa: F401  # the fixture: a fresh database

PLAN = {"subtasks": [{"id": 0, "task": "translation", "dep": [],
                      "args": {"text": "hello", "tgt_lang": "fr"}}]}
OLD_THREAD = Path(__file__).parent / "data" / "old_thread.sqlite.gz"
"""Two runs on thread ``old`` checkpointed by main's a8304c7, before the change (made by
``tests/data/make_old_thread.py``): every record holds its prompt and reply."""


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _turn(capsys: Any, workspace: Path, llm_server: Any, thread: str, n: int) -> None:
    llm_server.script("planner", {"tool_args": PLAN})
    llm_server.script("responder", {"content": f"Bonjour ({n})."})
    # --no-cache: each turn runs its expert, as the replay does (a turn served from the
    # result cache tells the responder so, and a replay, which runs the experts again,
    # would then see a different prompt)
    code, _, err = _cli(capsys, "run", f"Translate hello into French ({n})", "--llm",
                        "scripted", "--llm-base-url", llm_server.url, "--dry-run",
                        "--latency-scale", "0.01", "--planner", "llm", "--thread", thread,
                        "--workspace", str(workspace), "--no-cache")
    assert code == 0, err


def _checkpoints(path: Path, thread: str) -> list[dict[str, Any]]:
    """Every checkpoint's channel values, oldest first."""
    serde = serializer()
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? "
                            "ORDER BY checkpoint_id", (thread,)).fetchall()
    return [serde.loads_typed((kind, blob))["channel_values"] for kind, blob in rows]


def test_prompts_go_to_the_store_and_each_checkpoint_holds_one_runs_records(
        capsys, workspace, llm_server):
    for n in range(3):
        _turn(capsys, workspace, llm_server, "t", n)
    db_file = workspace / "checkpoints.sqlite"
    checkpoints = _checkpoints(db_file, "t")
    records = [c for values in checkpoints for c in values.get("llm_calls", [])]
    assert records and all(c.request == [] and c.reply is None for c in records)
    # one run's records in each checkpoint, and so about the same bytes at every turn
    assert all(len({c.turn for c in values.get("llm_calls", [])}) <= 1 for values in checkpoints)
    sizes: dict[int, int] = {}
    for values in checkpoints:
        calls = values.get("llm_calls", [])
        if calls:
            size = len(serializer().dumps_typed(calls)[1])
            sizes[calls[0].turn] = max(sizes.get(calls[0].turn, 0), size)
    assert sorted(sizes) == [0, 1, 2] and sizes[2] < 1.1 * sizes[0], sizes
    # the text is in the store table of the same file, once per call, by thread and id
    with sqlite3.connect(db_file) as conn:
        stored = {key: json.loads(value) for key, value in conn.execute(
            "SELECT key, value FROM store WHERE prefix = 'hugginggpt.llm_calls.t'")}
    latest = checkpoints[-1]["llm_calls"]
    assert [c.turn for c in latest] == [2, 2] and all(c.call_id in stored for c in latest)
    assert len(stored) == 6  # planner and responder, three runs
    planner = next(stored[c.call_id] for c in latest if c.role == "planner")
    assert "task planner of HuggingGPT" in planner["request"][0]["content"]
    assert planner["reply"]["tool_calls"][0]["args"] == PLAN

    # trace reads every run's prompts and replies back from the store
    code, out, err = _cli(capsys, "trace", "--thread", "t", "--workspace", str(workspace),
                          "--json")
    assert code == 0, err
    runs = json.loads(out)["runs"]
    assert [len(r["events"]) for r in runs] == [3, 3, 3]  # planner, tool, responder
    for n, one in enumerate(runs):
        llm = [e for e in one["events"] if e["type"] == "llm"]
        assert [e["turn"] for e in llm] == [n, n] and one["usage"]["calls"] == 2
        assert llm[0]["request"][0]["role"] == "system"
        assert llm[0]["reply"]["tool_calls"][0]["args"] == PLAN
        assert llm[1]["reply"]["content"] == f"Bonjour ({n})."

    llm_server.stop()  # the replay answers from the store's replies
    code, out, err = _cli(capsys, "replay", "--thread", "t", "--workspace", str(workspace),
                          "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["same"] is True and report["response"] == "Bonjour (2)."
    assert report["unused_recorded_calls"] == 0 and report["divergences"] == []


def test_a_thread_checkpointed_before_the_change_traces_replays_and_goes_on(
        capsys, workspace, llm_server):
    db_file = workspace / "old.sqlite"
    with gzip.open(OLD_THREAD) as packed, db_file.open("wb") as out_file:
        shutil.copyfileobj(packed, out_file)
    url = f"sqlite:///{db_file}"
    old = _checkpoints(db_file, "old")[-1]["llm_calls"]
    assert [c.turn for c in old] == [0, 0, 1, 1] and all(c.request for c in old)

    code, out, err = _cli(capsys, "trace", "--thread", "old", "--checkpoint-url", url,
                          "--workspace", str(workspace), "--full")
    assert code == 0, err
    assert "Thread old: 2 run(s)" in out and out.count("task planner of HuggingGPT") == 2
    assert "< Bonjour." in out and "< Salut." in out  # the replies, inline in the records

    code, out, err = _cli(capsys, "replay", "--thread", "old", "--checkpoint-url", url,
                          "--workspace", str(workspace), "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["same"] is True and report["response"] == "Salut."
    assert report["unused_recorded_calls"] == 0
    assert llm_server.requests == []  # the recorded replies answered

    # a new run on the old thread: its text goes to the store, the old runs keep theirs
    llm_server.script("planner", {"tool_args": PLAN})
    llm_server.script("responder", {"content": "Coucou."})
    code, _, err = _cli(capsys, "run", "And once more", "--llm", "scripted",
                        "--llm-base-url", llm_server.url, "--dry-run", "--planner", "llm",
                        "--thread", "old", "--checkpoint-url", url, "--workspace",
                        str(workspace))
    assert code == 0, err
    latest = _checkpoints(db_file, "old")[-1]["llm_calls"]
    assert [c.turn for c in latest] == [2, 2] and not any(c.request for c in latest)
    code, out, _ = _cli(capsys, "trace", "--thread", "old", "--checkpoint-url", url,
                        "--workspace", str(workspace), "--json")
    runs = json.loads(out)["runs"]
    replies = [[e["reply"]["content"] for e in r["events"] if e["type"] == "llm"][-1]
               for r in runs]
    assert replies == ["Bonjour.", "Salut.", "Coucou."]


def test_without_a_store_the_text_stays_in_the_records(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": PLAN})
    out = run(compiled, make_context(backend="dry-run", planner="llm"))
    assert out["status"] == "completed"
    planner = next(c for c in out["llm_calls"] if c.role == "planner")
    assert planner.request and planner.reply is not None  # nowhere else to keep it


def test_the_memory_checkpointer_comes_with_a_store(make_context, llm_server):
    from hugginggpt import build_graph
    from hugginggpt.graph.checkpoint import store_of
    from hugginggpt.tools.llm.transcripts import hydrate, namespace

    llm_server.script("planner", {"tool_args": PLAN})
    with open_checkpointer("memory") as saver:
        graph = build_graph(checkpointer=saver)
        out = run(graph, make_context(backend="dry-run", planner="llm"), thread="m.1")
        calls = out["llm_calls"]
        assert calls and not any(c.request or c.reply for c in calls)
        store = store_of(saver)
        assert store is not None and graph.store is store
        assert len(store.search(namespace("m.1"))) == len(calls)  # a period in the id
        full = hydrate(store, "m.1", calls)
        assert full[0].role == "planner" and full[0].reply["tool_calls"][0]["args"] == PLAN


def _tables(db_file: Path) -> set[str]:
    with closing(sqlite3.connect(db_file)) as conn:
        return {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_sqlite_store_opens_at_its_first_use_for_sync_and_async_callers(tmp_path):
    """The store beside a SQLite checkpointer is opened (its tables made) only when an
    operation needs it. Then it serves async calls, and sync calls from worker threads
    (a sync node's), with the sync and the async checkpointer alike; a sync call on the
    event loop's own thread is refused, as LangGraph's async stores refuse it."""
    import asyncio

    from hugginggpt.graph.checkpoint import aopen_checkpointer, store_of

    first, second = tmp_path / "first.sqlite", tmp_path / "second.sqlite"
    with open_checkpointer(f"sqlite:///{first}") as saver:
        store = store_of(saver)
        assert store is not None and "store" not in _tables(first)
        store.put(("ns",), "a", {"n": 1})
        assert "store" in _tables(first)
        assert asyncio.run(store.aget(("ns",), "a")).value == {"n": 1}

    async def async_callers() -> None:
        async with aopen_checkpointer(f"sqlite:///{second}") as saver:
            store = store_of(saver)
            assert store is not None and "store" not in _tables(second)
            await asyncio.to_thread(store.put, ("ns",), "b", {"n": 2})
            assert "store" in _tables(second)
            assert (await store.aget(("ns",), "b")).value == {"n": 2}
            assert (await asyncio.to_thread(store.get, ("ns",), "b")).value == {"n": 2}
            with pytest.raises(asyncio.InvalidStateError, match="use abatch"):
                store.get(("ns",), "b")
        async with aopen_checkpointer(f"sqlite:///{first}") as saver:  # opened again
            found = await store_of(saver).aget(("ns",), "a")  # type: ignore[union-attr]
            assert found is not None and found.value == {"n": 1}

    asyncio.run(async_callers())


def test_the_channel_keeps_the_newest_runs_records():
    def call(turn: int) -> LLMCall:
        return LLMCall(role="planner", llm="x", ok=True, turn=turn)

    first = this_run(None, [call(0), call(0)])
    assert [c.turn for c in first] == [0, 0]
    assert [c.turn for c in this_run(first, [call(1)])] == [1]  # a new run replaces
    assert [c.turn for c in this_run(first, [])] == [0, 0]  # nothing new: kept
    assert this_run(first, None) == []  # a run that starts without a call clears
    assert [c["turn"] for c in this_run([{"turn": 3}], [{"turn": 3}])] == [3, 3]  # served


def test_on_postgresql_the_text_is_in_its_store_and_traces(capsys, workspace, llm_server,
                                                           database):  # noqa: F811
    import psycopg

    for n in range(2):
        llm_server.script("planner", {"tool_args": PLAN})
        llm_server.script("responder", {"content": f"Bonjour ({n})."})
        code, _, err = _cli(capsys, "run", f"Translate hello ({n})", "--llm", "scripted",
                            "--llm-base-url", llm_server.url, "--dry-run", "--planner",
                            "llm", "--thread", "pg", "--checkpoint-url", database,
                            "--workspace", str(workspace))
        assert code == 0, err
    with psycopg.connect(database) as conn:
        rows = conn.execute("SELECT value FROM store WHERE prefix = "
                            "'hugginggpt.llm_calls.pg'").fetchall()
    assert len(rows) == 4 and any(
        "task planner of HuggingGPT" in r[0]["request"][0]["content"] for r in rows)
    code, out, err = _cli(capsys, "trace", "--thread", "pg", "--checkpoint-url", database,
                          "--workspace", str(workspace), "--full")
    assert code == 0, err
    assert "Thread pg: 2 run(s)" in out and out.count("task planner of HuggingGPT") == 2
    assert "< Bonjour (0)." in out and "< Bonjour (1)." in out


def test_the_benchmark_counts_the_records_and_the_side_store(tmp_path):
    from tests.conftest import benchmark

    bench = benchmark("checkpoints")
    sizes = bench.measure(2, tmp_path)
    assert [s["checkpoints"] for s in sizes] == [7, 14]
    for one in sizes:
        assert 0 < one["llm_calls_bytes"] < one["checkpoint_bytes"]
        assert 0 < one["conversation_bytes"] < one["checkpoint_bytes"]
    assert sizes[1]["side_store_bytes"] > sizes[0]["side_store_bytes"] > 0
    assert bench._growth(sizes, "checkpoint_bytes", 2, 2) == (
        sizes[1]["checkpoint_bytes"] - sizes[0]["checkpoint_bytes"])
