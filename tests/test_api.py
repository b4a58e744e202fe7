"""The Python API: ``hugginggpt.run``/``arun``/``resume`` return a typed result with the
output files as paths; bad input is a clear error before anything runs."""

from __future__ import annotations

import asyncio
import json

import pytest

import hugginggpt
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.llm.config import ConfigError

PLAN = [
    {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a red boat"}},
    {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
    {"id": 2, "task": "text-to-speech", "dep": [1], "args": {"text": "<GENERATED>-1"}},
]


def _settings(tmp_path, **extra):
    return {"backend": "dry-run", "plan": PLAN, "dry_run_latency_scale": 0.0,
            "workspace": str(tmp_path / "ws"), **extra}


def test_run_returns_a_typed_result_with_artifact_paths(tmp_path):
    result = hugginggpt.run("Draw a red boat, caption it and read the caption aloud",
                            **_settings(tmp_path))
    assert isinstance(result, hugginggpt.RunResult)
    assert result.status == "completed" and result.response
    assert [r.status for r in result.results.values()] == ["done"] * 3
    assert [p.suffix for p in result.artifacts] == [".png", ".wav"]
    assert all(p.is_absolute() and p.is_file() for p in result.artifacts)
    assert all(p.is_relative_to(tmp_path / "ws") for p in result.artifacts)
    assert result.planner == "fixed plan" and result.workspace == (tmp_path / "ws")
    doc = json.loads(json.dumps(result.document()))
    assert doc["artifacts"] == [str(p) for p in result.artifacts]
    assert (tmp_path / "ws" / "checkpoints.sqlite").is_file()  # resumable, traceable


def test_run_works_inside_a_running_event_loop_and_arun_streams_events(tmp_path):
    events: list[tuple[str, object]] = []

    async def in_a_notebook() -> tuple[hugginggpt.RunResult, hugginggpt.RunResult]:
        sync = hugginggpt.run("Draw a red boat", **_settings(tmp_path))  # a loop is running
        streamed = await hugginggpt.arun(
            "Draw a red boat", on_event=lambda mode, chunk: events.append((mode, chunk)),
            **_settings(tmp_path))
        return sync, streamed

    sync, streamed = asyncio.run(in_a_notebook())
    assert sync.status == streamed.status == "completed"
    assert sync.thread_id != streamed.thread_id
    stages = [c["stage"] for m, c in events
              if m == "custom" and isinstance(c, dict) and c.get("type") == "stage"]
    assert stages[:3] == ["plan", "select", "execute"]


def test_approval_interrupts_then_resume_runs_the_plan(tmp_path):
    pending = hugginggpt.run("Draw a red boat", **_settings(tmp_path, approval="plan"))
    assert pending.status == "waiting" and not pending.results  # was "interrupted" (issue 12)
    assert pending.approval is not None and len(pending.approval["plan"]) == 3
    done = hugginggpt.resume(pending.thread_id, {"action": "approve", "who": "ana"},
                             **_settings(tmp_path, approval="plan"))
    assert done.status == "completed" and done.approvals[0].who == "ana"
    assert len(done.artifacts) == 2


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda ws: hugginggpt.run("Caption it", files=["missing.png"], workspace=ws),
     ArgumentError, "missing.png: no such file"),
    (lambda ws: hugginggpt.run("   ", workspace=ws), ArgumentError, "the request is empty"),
    (lambda ws: hugginggpt.run("Hello", workspace=ws, bakend="lite"), TypeError,
     "unknown setting(s) ['bakend']"),
    (lambda ws: hugginggpt.run("Hello", workspace=ws, llm_config="/nowhere/llms.toml"),
     ConfigError, "/nowhere/llms.toml"),
    (lambda ws: hugginggpt.resume("no-such-thread", workspace=ws), ArgumentError,
     "thread 'no-such-thread' has no checkpoint"),
])
def test_bad_input_is_a_clear_error_before_anything_runs(tmp_path, call, error, message):
    with pytest.raises(error) as caught:
        call(str(tmp_path / "ws"))
    assert message in str(caught.value)
    assert not (tmp_path / "ws" / "artifacts").exists()
