"""Checkpoints: a run killed with SIGKILL mid-execution resumes from its last checkpoint,
and subtasks that had finished are not run again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from hugginggpt import build_graph
from hugginggpt.graph.checkpoint import open_checkpointer
from hugginggpt.graph.context import Context

PLUGIN = '''
import os, time
from pathlib import Path
from hugginggpt.tools.experts import register_tool

LOG = Path(os.environ["CRASH_LOG"])

def slow_summary(text: str) -> str:
    """Sleeps as long as the text says, logging each start and end."""
    with LOG.open("a") as log:
        log.write(f"start {text}\\n")
    time.sleep(float(text.split()[-1]))
    with LOG.open("a") as log:
        log.write(f"end {text}\\n")
    return f"summary of {text}"

register_tool(slow_summary, "summarization", backend="crash", models=["crash/slow"])
'''

PLAN = {"subtasks": [
    {"id": 0, "task": "summarization", "dep": [], "args": {"text": "fast-a 0.1"}},
    {"id": 1, "task": "summarization", "dep": [], "args": {"text": "fast-b 0.2"}},
    {"id": 2, "task": "summarization", "dep": [], "args": {"text": "slow 4"}},
    {"id": 3, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
]}


def _cli(tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "hugginggpt.cli", *args, "--workspace", str(tmp_path / "ws")]


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_sigkill_mid_execution_then_resume_runs_unfinished_subtasks_only(tmp_path: Path):
    (tmp_path / "crashplugin.py").write_text(PLUGIN)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    log = tmp_path / "calls.log"
    env = {**os.environ, "CRASH_LOG": str(log), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path.cwd())])}
    run_cmd = _cli(tmp_path, "run", "summarise these", "--plan", str(tmp_path / "plan.json"),
                   "--backend", "crash", "--plugin", "crashplugin", "--thread", "crash-1")
    proc = subprocess.Popen(run_cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def lines() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    def saved() -> set[int]:
        """The subtasks whose results are in the checkpoint's pending writes."""
        if not (tmp_path / "ws" / "checkpoints.sqlite").exists():
            return set()
        with open_checkpointer(f"sqlite:///{tmp_path / 'ws' / 'checkpoints.sqlite'}") as saver:
            found = saver.get_tuple({"configurable": {"thread_id": "crash-1"}})
            return {value["id"] for _, _, value in (found.pending_writes if found else [])
                    if isinstance(value, dict) and value.get("status") == "done"}

    try:
        _wait_for(lambda: {"end fast-a 0.1", "end fast-b 0.2", "start slow 4"} <= set(lines())
                  and any(line.startswith("end summary of") for line in lines()))
        # kill once the finished subtasks' results are in the checkpoint, not after a
        # guess of how long the writes take
        _wait_for(lambda: saved() == {0, 1, 3} or proc.poll() is not None)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "end slow 4" not in lines()
    assert saved() == {0, 1, 3}  # the premise: the finished subtasks were checkpointed

    resumed = subprocess.run(_cli(tmp_path, "resume", "--thread", "crash-1", "--json"),
                             env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["status"] == "completed"
    assert {r["status"] for r in doc["results"].values()} == {"done"}
    assert doc["results"]["3"]["outputs"]["text"] == "summary of summary of fast-a 0.1"

    starts = [line for line in lines() if line.startswith("start")]
    assert starts.count("start fast-a 0.1") == 1
    assert starts.count("start fast-b 0.2") == 1
    assert starts.count("start summary of fast-a 0.1") == 1
    assert starts.count("start slow 4") == 2  # killed once, run again


def test_python_api_resumes_with_invoke_none(tmp_path: Path):
    db = tmp_path / "checkpoints.sqlite"
    plan = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "x"}},
            {"id": 1, "task": "translation", "dep": [0],
             "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}}]
    context = Context(backend="dry-run", plan=plan, dry_run_latency_scale=0.01,
                      workspace=str(tmp_path / "ws"))
    config = {"configurable": {"thread_id": "py-1"}}
    with open_checkpointer(f"sqlite:///{db}") as saver:
        assert isinstance(saver, SqliteSaver)
        paused = build_graph(checkpointer=saver, interrupt_before=["respond"])
        first = paused.invoke({"request": "summarise and translate"}, config, context=context)
        assert first["status"] == "running" and len(first["results"]) == 2
        assert paused.get_state(config).next == ("respond",)

    with open_checkpointer(f"sqlite:///{db}") as saver:  # a new process would do the same
        resumed = build_graph(checkpointer=saver).invoke(None, config, context=context)
    assert resumed["status"] == "completed"
    assert resumed["results"][1].status == "done"
    assert resumed["response"].startswith("I ran 2 steps:\n1. Summary: ")  # both answered


def test_stream_yields_stage_and_subtask_events(tmp_path: Path):
    from langgraph.checkpoint.memory import InMemorySaver

    plan = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "x"}},
            {"id": 1, "task": "summarization", "dep": [], "args": {"text": "y"}}]
    context = Context(backend="dry-run", plan=plan, dry_run_latency_scale=0.01,
                      workspace=str(tmp_path))
    compiled = build_graph(checkpointer=InMemorySaver())
    events = list(compiled.stream({"request": "r"}, {"configurable": {"thread_id": "s"}},
                                  context=context, stream_mode=["updates", "custom"]))
    stages = [c["stage"] for m, c in events if m == "custom" and c["type"] == "stage"]
    assert stages == ["plan", "select", "execute", "respond"]
    done = sorted(c["id"] for m, c in events
                  if m == "custom" and c["type"] == "subtask" and c["event"] == "done")
    assert done == [0, 1]
    nodes = [next(iter(c)) for m, c in events if m == "updates"]
    assert nodes[0] == "plan" and nodes[-1] == "respond" and "execute" in nodes


def test_checkpoint_urls():
    import pytest

    from hugginggpt.graph.checkpoint import sqlite_path

    assert sqlite_path("sqlite:////abs/runs.sqlite") == Path("/abs/runs.sqlite")
    assert sqlite_path("sqlite:///runs.sqlite") == Path("runs.sqlite")
    assert sqlite_path("runs.db") == Path("runs.db")
    assert sqlite_path("postgresql://u@h/db") is None
    with pytest.raises(ValueError, match="unknown checkpoint URL"), open_checkpointer("redis://x"):
        pass
