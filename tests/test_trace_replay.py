"""Traces and replay through the CLI: a thread's runs read back from its checkpoints,
and a recorded run re-run with its recorded LLM replies while no LLM server runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main

PLAN = {"subtasks": [
    {"id": 0, "task": "translation", "dep": [], "args": {"text": "hello", "tgt_lang": "fr"}},
    {"id": 1, "task": "translation", "dep": [], "args": {"text": "good night",
                                                         "tgt_lang": "de"}},
    {"id": 2, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
]}
REQUEST = "Translate hello into French and good night into German, then summarize"


@pytest.fixture
def close_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Two equally good models per task: every choice is a close call for the selector."""
    cards = [{"id": model, "task": task, "downloads": 1000, "likes": 10,
              "expected_latency_s": 0.01}
             for task, model in (("translation", "t/one"), ("translation", "t/two"),
                                 ("summarization", "s/one"), ("summarization", "s/two"))]
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"version": 1, "models": cards}))
    monkeypatch.setenv("HUGGINGGPT_CATALOG", str(path))
    return str(path)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run(capsys: Any, workspace: Path, llm_url: str, *extra: str,
         request: str = REQUEST) -> dict[str, Any]:
    code, out, err = _cli(capsys, "run", request, "--llm", "scripted", "--llm-base-url",
                          llm_url, "--dry-run", "--latency-scale", "0.01", "--json",
                          "--workspace", str(workspace), *extra)
    doc = json.loads(out)
    doc["exit_code"], doc["stderr"] = code, err
    return doc


def _script_run(llm_server: Any) -> None:
    llm_server.script("planner", {"tool_args": PLAN})
    llm_server.script("selector",
                      {"tool_args": {"model": "t/two", "reason": "fluent French"}},
                      {"tool_args": {"model": "t/one", "reason": "fluent German"}},
                      {"tool_args": {"model": "s/two", "reason": "short summaries"}})
    llm_server.script("responder", {"content": "Bonjour, gute Nacht, and a summary."})


def test_a_recorded_thread_replays_with_no_llm_server(capsys, workspace, llm_server,
                                                      close_catalog):
    _script_run(llm_server)
    recorded = _run(capsys, workspace, llm_server.url, "--thread", "rec")
    assert recorded["exit_code"] == 0 and recorded["status"] == "completed"
    assert len(llm_server.calls("selector")) == 3  # parallel close calls, in any order
    llm_server.stop()  # from here on, any LLM call would fail

    code, out, err = _cli(capsys, "replay", "--thread", "rec", "--workspace", str(workspace),
                          "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["same"] is True and report["differences"] == []
    assert report["divergences"] == [] and report["unused_recorded_calls"] == 0
    assert report["response"] == "Bonjour, gute Nacht, and a summary."
    assert "same plan, selections and response as recorded" in err

    # the replay is a thread of its own, whose calls say they were replayed
    replay_thread = report["replay_thread_id"]
    code, out, _ = _cli(capsys, "trace", "--thread", replay_thread, "--checkpoint-url",
                        f"sqlite:///{workspace}/checkpoints.sqlite", "--json",
                        "--workspace", str(workspace))
    runs = json.loads(out)["runs"]
    llm_events = [e for e in runs[0]["events"] if e["type"] == "llm"]
    assert len(llm_events) == 5 and all(e["replayed"] for e in llm_events)
    # the parallel selector calls were matched by prompt, whatever their order
    selections = {k: v["model"] for k, v in runs[0]["selections"].items()}
    assert selections == {k: v["model"] for k, v in recorded["selections"].items()}
    assert all(s["reason"].startswith("chosen by the selector LLM")
               or "not a candidate" in s["reason"] for s in recorded["selections"].values())


def test_a_failed_run_replays_to_the_same_failure(capsys, workspace, llm_server):
    llm_server.script("planner", {"status": 500})
    # --planner llm: with auto the offline planner would stand in (issue 14)
    recorded = _run(capsys, workspace, llm_server.url, "--thread", "broken", "--planner", "llm")
    assert recorded["status"] == "aborted" and "HTTP 500" in recorded["abort_reason"] or \
        "500" in recorded["abort_reason"]
    llm_server.stop()
    code, out, err = _cli(capsys, "replay", "--thread", "broken", "--workspace",
                          str(workspace), "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["same"] is True and report["status"] == "aborted"


def test_a_replay_that_diverges_says_where(capsys, workspace, llm_server, close_catalog,
                                           monkeypatch):
    _script_run(llm_server)
    _run(capsys, workspace, llm_server.url, "--thread", "drift")
    llm_server.stop()
    # the planner's prompt changes (as after an edit of the prompts): the recorded reply
    # is still served by order, and the replay says the prompt differed
    import importlib

    plan_module = importlib.import_module("hugginggpt.nodes.plan")
    monkeypatch.setattr(plan_module, "PLANNER_USER", plan_module.PLANNER_USER + "\n(v2)")
    code, out, err = _cli(capsys, "replay", "--thread", "drift", "--workspace",
                          str(workspace), "--json")
    report = json.loads(out)
    assert report["divergences"] and "planner prompt differs" in report["divergences"][0]
    assert "differs: a planner prompt differs" in err


def test_replay_of_an_unknown_thread_is_a_clear_error(capsys, workspace):
    code, _, err = _cli(capsys, "replay", "--thread", "nope", "--workspace", str(workspace))
    assert code == 2 and "no saved settings for thread 'nope'" in err


def test_trace_shows_every_run_with_llm_and_tool_calls_and_why_it_stopped(
        capsys, workspace, llm_server, close_catalog):
    _script_run(llm_server)
    first = _run(capsys, workspace, llm_server.url, "--thread", "t")
    assert first["status"] == "completed"
    llm_server.script("planner", {"status": 503})  # the second request fails to plan
    second = _run(capsys, workspace, llm_server.url, "--thread", "t", "--planner", "llm",
                  request="and now draw it")
    assert second["status"] == "aborted"

    code, out, err = _cli(capsys, "trace", "--thread", "t", "--workspace", str(workspace))
    assert code == 0, err
    assert "Thread t: 2 run(s)" in out
    first_run, second_run = out.split("\nRun 2: ")
    assert f"Run 1: {REQUEST!r}" in first_run
    assert "LLM  planner   scripted @ http://127.0.0.1" in first_run
    assert first_run.count("LLM  selector") == 3
    chosen = first["selections"]["0"]["model"]  # the parallel selector calls race
    assert f"tool #0 translation on {chosen} (dry-run)" in first_run
    assert "output text:" in first_run and "stopped: completed: 3 of 3 subtasks done" in first_run
    assert "answer: Bonjour, gute Nacht" in first_run
    assert "FAILED" in second_run and "stopped: aborted: the LLM planner failed" in second_run

    code, out, _ = _cli(capsys, "trace", "--thread", "t", "--workspace", str(workspace),
                        "--full")
    assert "task planner of HuggingGPT" in out  # whole prompts
    code, out, _ = _cli(capsys, "trace", "--thread", "t", "--workspace", str(workspace),
                        "--json")
    runs = json.loads(out)["runs"]
    assert [r["status"] for r in runs] == ["completed", "aborted"]
    tool_events = [e for e in runs[0]["events"] if e["type"] == "tool"]
    assert {e["id"] for e in tool_events} == {0, 1, 2}
    assert all(e["at"] > 0 and e["latency_s"] >= 0 and e["ok"] for e in tool_events)
    planner = next(e for e in runs[0]["events"] if e["type"] == "llm")
    assert planner["role"] == "planner" and planner["reply"]["tool_calls"][0]["args"] == PLAN
    assert planner["request"][0]["role"] == "system"
    # the 503 is retried (llm_max_retries = 2), each request recorded
    assert runs[0]["usage"]["calls"] == 5 and runs[1]["usage"]["failed"] == 3
    # events are in time order
    times = [e["at"] for e in runs[0]["events"]]
    assert times == sorted(times)


def test_trace_of_a_run_waiting_for_approval(capsys, workspace, llm_server):
    llm_server.script("planner", {"tool_args": PLAN})
    doc = _run(capsys, workspace, llm_server.url, "--thread", "wait", "--approval", "plan")
    assert doc["status"] == "waiting"  # was "interrupted" (issue 12)
    code, out, _ = _cli(capsys, "trace", "--thread", "wait", "--workspace", str(workspace))
    assert "stopped: waiting for a human approval" in out


def test_json_document_has_accounting_without_prompts(capsys, workspace, llm_server,
                                                      close_catalog):
    _script_run(llm_server)
    doc = _run(capsys, workspace, llm_server.url, "--thread", "acct")
    assert doc["usage"]["calls"] == 5
    assert doc["usage"]["by_endpoint"] == {f"scripted @ {llm_server.url}": 5}
    assert all("request" not in c and "reply" not in c for c in doc["llm_calls"])
    assert "LLM calls: 5 (planner 1, selector 3, responder 1; 0 failed; endpoints:" in (
        doc["stderr"])
