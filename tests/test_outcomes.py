"""How a run ends, told apart: every planned subtask has a result (done, failed or
skipped, with the reason) on every path; the run's status says whether everything,
part or nothing was done, or why nothing could go on; each status has its own exit
code, the same in the Python API, ``--json`` and the graph's state."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

import hugginggpt
from hugginggpt.cli import main
from hugginggpt.graph.context import Context

ROOT = Path(__file__).resolve().parents[1]

DRAW = {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a red boat"}}
CAPTION = {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}}
SUMMARY = {"id": 2, "task": "summarization", "dep": [], "args": {"text": "a long text"}}
VIDEO = {"id": 3, "task": "text-to-video", "dep": [], "args": {"text": "a kite"}}
#: every call of subtask 0 fails for good (two models tried)
BREAK_DRAW = {"script": {"0": ["permanent"] * 6}}

EXPECTED_CODES = {"completed": 0, "partial": 3, "failed": 4, "aborted": 5, "waiting": 6,
                  "interrupted": 130}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip().startswith("{") else {}, err


def _plan_file(tmp_path: Path, *subtasks: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(list(subtasks)))
    return str(path)


def _dry_run(capsys, tmp_path, workspace, *subtasks, extra=()) -> tuple[int, dict, str]:
    return _cli(capsys, "run", "do these", "--dry-run", "--plan", _plan_file(tmp_path, *subtasks),
                "--latency-scale", "0.01", "--json", "--workspace", str(workspace), *extra)


def _explained(doc: dict[str, Any]) -> None:
    """Every planned subtask has a result; every one not done says why."""
    assert sorted(doc["results"]) == sorted(str(s["id"]) for s in doc["plan"])
    for result in doc["results"].values():
        assert result["status"] in ("done", "failed", "skipped")
        assert (result["status"] == "done") == (result["error"] is None), result


def test_everything_done_is_completed(capsys, workspace, tmp_path):
    code, doc, err = _dry_run(capsys, tmp_path, workspace, DRAW, CAPTION)
    assert (code, doc["status"]) == (0, "completed"), err
    _explained(doc)


def test_some_done_some_failed_or_skipped_is_partial(capsys, workspace, tmp_path,
                                                     monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_DRY_RUN_FAULTS", json.dumps(BREAK_DRAW))
    code, doc, err = _dry_run(capsys, tmp_path, workspace, DRAW, CAPTION, SUMMARY)
    assert (code, doc["status"]) == (3, "partial"), err
    _explained(doc)
    assert [doc["results"][k]["status"] for k in "012"] == ["failed", "skipped", "done"]
    assert "thread " in err and ": partial (1 of 3 subtasks done)" in err


def test_nothing_done_is_failed(capsys, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_DRY_RUN_FAULTS", json.dumps(BREAK_DRAW))
    code, doc, err = _dry_run(capsys, tmp_path, workspace, DRAW, CAPTION)
    assert (code, doc["status"]) == (4, "failed"), err
    _explained(doc)
    assert doc["results"]["1"]["error"].startswith("skipped: dependency 0 (text-to-image) failed")
    assert ": failed (0 of 2 subtasks done)" in err


def test_no_subtask_with_a_model_still_has_a_result_each(capsys, workspace, tmp_path):
    """Before: nothing was runnable, so execution was skipped and results stayed empty,
    and the run said completed."""
    code, doc, err = _cli(capsys, "run", "draw a kite, then a video", "--backend", "lite",
                          "--plan", _plan_file(tmp_path, DRAW, VIDEO), "--json",
                          "--workspace", str(workspace))
    assert (code, doc["status"]) == (4, "failed"), err
    _explained(doc)
    for key in ("0", "3"):
        result = doc["results"][key]
        assert result["status"] == "failed"
        assert result["error"] == doc["selections"][key]["reason"]
        assert result["error"].startswith("no model can run ")
        assert result["error"] in doc["response"]


def test_a_subtask_without_a_model_beside_runnable_ones_fails_with_its_reason(
        capsys, workspace, tmp_path):
    code, doc, err = _cli(capsys, "run", "summarise, and draw", "--backend", "lite",
                          "--plan", _plan_file(tmp_path, SUMMARY, DRAW), "--json",
                          "--workspace", str(workspace))
    assert (code, doc["status"]) == (3, "partial"), err
    _explained(doc)
    assert doc["results"]["2"]["status"] == "done"
    assert doc["results"]["0"]["status"] == "failed"
    assert doc["results"]["0"]["error"] == doc["selections"]["0"]["reason"]


def test_the_run_time_limit_leaves_a_result_for_every_subtask(capsys, workspace, tmp_path):
    # simulated: the drawing takes 0.5 s of a 0.05 s budget, so nothing is done
    code, doc, err = _cli(capsys, "run", "draw and caption", "--dry-run", "--plan",
                          _plan_file(tmp_path, DRAW, CAPTION), "--max-run-time", "0.05",
                          "--json", "--workspace", str(workspace))
    assert (code, doc["status"]) == (4, "failed"), err
    _explained(doc)
    assert "max_run_s" in doc["results"]["0"]["error"]


def test_waiting_for_approval_is_its_own_status_everywhere(capsys, workspace, tmp_path,
                                                           compiled):
    code, doc, err = _dry_run(capsys, tmp_path, workspace, SUMMARY,
                              extra=("--approval", "plan", "--thread", "w"))
    assert (code, doc["status"]) == (6, "waiting"), err  # not 130, the code of Ctrl-C
    assert doc["results"] == {} and doc["interrupt"]["policy"] == "plan"
    assert "thread w: waiting for approval" in err

    result = hugginggpt.run("summarise", backend="dry-run", plan=[SUMMARY],
                            approval="plan", workspace=str(workspace))
    assert result.status == "waiting" and result.approval is not None

    # the graph's own state (what the LangGraph server shows) says so too
    context = Context(backend="dry-run", plan=[SUMMARY], workspace=str(workspace),
                      approval="plan", dry_run_latency_scale=0.01)
    config = {"configurable": {"thread_id": "state"}}
    compiled.invoke({"request": "summarise"}, config, context=context)
    assert compiled.get_state(config).values["status"] == "waiting"
    out = compiled.invoke(Command(resume="approve"), config, context=context)
    assert out["status"] == "completed"


def test_a_rejected_plan_is_aborted_and_each_subtask_says_why(capsys, workspace, tmp_path):
    _dry_run(capsys, tmp_path, workspace, DRAW, CAPTION,
             extra=("--approval", "plan", "--thread", "rej"))
    code, doc, err = _cli(capsys, "resume", "--thread", "rej", "--reject", "too costly",
                          "--json", "--workspace", str(workspace))
    assert (code, doc["status"]) == (5, "aborted"), err
    _explained(doc)
    assert {r["status"] for r in doc["results"].values()} == {"skipped"}
    assert all("the plan was rejected: too costly" in r["error"]
               for r in doc["results"].values())


def test_no_plan_is_aborted(capsys, workspace, tmp_path):
    bad = _plan_file(tmp_path, {"id": 0, "task": "teleportation", "dep": [], "args": {}})
    code, doc, err = _cli(capsys, "run", "x", "--dry-run", "--plan", bad, "--json",
                          "--workspace", str(workspace))
    assert (code, doc["status"]) == (5, "aborted"), err
    assert doc["results"] == {} and doc["plan"] == []


def test_an_empty_plan_answered_directly_is_completed(capsys, workspace, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": []}})
    llm_server.script("responder", {"content": "Hello! How can I help?"})
    code, doc, err = _cli(capsys, "run", "hi there", "--llm", "scripted", "--llm-base-url",
                          llm_server.url, "--json", "--workspace", str(workspace))
    assert (code, doc["status"]) == (0, "completed"), err
    assert doc["plan"] == [] and doc["results"] == {}
    assert doc["response"] == "Hello! How can I help?"


def test_the_exit_codes_are_documented_in_help_and_docs(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    pages = {page: (ROOT / page).read_text()
             for page in ("docs/concepts/run-end.md", "docs/reference/exit-codes.md")}
    for status, code in EXPECTED_CODES.items():
        assert re.search(rf"^\s+{code}\s+{status}\b", text, re.M), (status, text)
        for page, shown in pages.items():
            assert re.search(rf"^\| `{status}` \| {code} \|", shown, re.M), (page, status)
    assert re.search(r"^\s+2\s+usage\b", text, re.M)
