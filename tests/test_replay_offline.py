"""Replaying runs made without an LLM, or with one for some roles only: the offline
planner, the ranking and the template responder are deterministic, so the replay
recomputes them instead of asking the recording, answers the other roles from the
recorded replies, and says which part came from where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.tools.llm.records import stable_text

SIMILAR = "How similar are 'a cat on a mat' and 'a kitten on a rug'?"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _replay(capsys: Any, workspace: Path, thread: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = _cli(capsys, "replay", "--thread", thread, "--workspace",
                          str(workspace), "--json")
    return code, json.loads(out), err


def test_an_offline_lite_run_replays_the_same(capsys, workspace):
    code, out, err = _cli(capsys, "run", SIMILAR, "--backend", "lite", "--thread", "off",
                          "--json", "--workspace", str(workspace))
    recorded = json.loads(out)
    assert code == 0 and recorded["status"] == "completed", err
    assert recorded["planner"].startswith("offline: ") and recorded["llm_calls"] == []

    code, report, err = _replay(capsys, workspace, "off")
    assert code == 0, err  # was 1: "the recording has no planner reply left"
    assert report["same"] is True and report["differences"] == []
    assert report["status"] == "completed"  # and the same answer, timings aside
    assert stable_text(report["response"]) == stable_text(recorded["response"])
    assert report["parts"] == {
        "planner": "recomputed without an LLM: " + recorded["planner"],
        "selector": "recomputed without an LLM: ranking only (no selector LLM)",
        "responder": "recomputed without an LLM: template (no LLM configured)",
    }
    assert "planner: recomputed without an LLM: offline: read from the request" in err
    assert "same plan, selections and response as recorded" in err


def test_a_dry_run_of_a_plan_file_replays_the_same(capsys, workspace, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([
        {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a kite"}},
        {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
        {"id": 2, "task": "summarization", "dep": [1], "args": {"text": "<GENERATED>-1"}},
    ]))
    code, _, err = _cli(capsys, "run", "draw, caption, summarise", "--dry-run", "--plan",
                        str(plan), "--latency-scale", "0.01", "--thread", "dry",
                        "--workspace", str(workspace))
    assert code == 0, err
    code, report, err = _replay(capsys, workspace, "dry")
    assert code == 0, err
    assert report["same"] is True and report["status"] == "completed"
    assert report["parts"]["planner"] == "recomputed without an LLM: fixed plan"
    assert report["parts"]["responder"].startswith("recomputed without an LLM: template")


def test_an_offline_run_that_aborted_replays_to_the_same_abort(capsys, workspace):
    code, out, _ = _cli(capsys, "run", "Do it to clip.mp4", "--backend", "lite", "--thread", "no-plan",
                        "--json", "--workspace", str(workspace))
    recorded = json.loads(out)
    assert recorded["status"] == "aborted" and recorded["planner"] == "offline"
    code, report, err = _replay(capsys, workspace, "no-plan")
    assert code == 0, err
    assert report["same"] is True and report["status"] == "aborted"
    assert report["parts"] == {"planner": "recomputed without an LLM: offline"}


def test_an_llm_planner_with_offline_selector_and_responder(capsys, workspace, tmp_path,
                                                          llm_server):
    """Only the planner has an LLM: its reply comes from the recording, the rest is
    recomputed."""
    config = tmp_path / "llms.toml"
    config.write_text(f'[[endpoints]]\nname = "planner-only"\nmodel = "scripted"\n'
                      f'base_url = "{llm_server.url}"\nroles = ["planner"]\n')
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": "a long text"}}]}})
    code, out, err = _cli(capsys, "run", "summarise a long text", "--llm-config", str(config),
                          "--dry-run", "--latency-scale", "0.01", "--thread", "mixed",
                          "--json", "--workspace", str(workspace))
    recorded = json.loads(out)
    assert code == 0 and recorded["responder"] == "template (no LLM configured)", err
    llm_server.stop()  # from here on, any LLM call would fail

    code, report, err = _replay(capsys, workspace, "mixed")
    assert code == 0, err
    assert report["same"] is True and report["unused_recorded_calls"] == 0
    assert report["parts"]["planner"] == "from 1 recorded LLM call"
    assert report["parts"]["responder"] == ("recomputed without an LLM: template (no LLM "
                                            "configured)")
    assert "planner: from 1 recorded LLM call" in err
