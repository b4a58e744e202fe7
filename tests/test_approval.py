"""Human approval: the plan and risky policies, approve, edit, invalid edit, reject, the
audit trail; from Python (Command(resume=...)) and from the CLI."""

from __future__ import annotations

import json

import pytest
from langgraph.types import Command

from hugginggpt.cli import main
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts import register_tool

PLAN = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "a long text"}},
        {"id": 1, "task": "translation", "dep": [0],
         "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}}]


def _context(workspace, **overrides) -> Context:
    return Context(**({"backend": "dry-run", "plan": PLAN, "dry_run_latency_scale": 0.01,
                       "workspace": str(workspace), "approval": "plan"} | overrides))


def _start(compiled, context, thread="a"):
    config = {"configurable": {"thread_id": thread}}
    compiled.invoke({"request": "summarise then translate"}, config, context=context)
    return config


def _pending(compiled, config) -> dict:
    interrupts = compiled.get_state(config).interrupts
    assert len(interrupts) == 1
    return interrupts[0].value


def test_plan_policy_waits_then_approval_runs_it(compiled, workspace):
    context = _context(workspace)
    config = _start(compiled, context)
    shown = _pending(compiled, config)
    assert shown["policy"] == "plan" and [s["task"] for s in shown["plan"]] == [
        "summarization", "translation"]
    assert shown["selections"]["0"]["model"]  # the selected models are shown too
    assert compiled.get_state(config).values["results"] == {}  # nothing ran yet

    out = compiled.invoke(Command(resume={"action": "approve", "who": "ana"}), config,
                          context=context)
    assert out["status"] == "completed" and len(out["results"]) == 2
    [record] = out["approvals"]
    assert (record.action, record.who, record.policy) == ("approve", "ana", "plan")
    assert record.at.endswith("+00:00")


def test_an_edited_plan_is_validated_selected_and_run(compiled, workspace):
    context = _context(workspace)
    config = _start(compiled, context)
    bad = [{"id": 0, "task": "teleportation", "dep": [], "args": {}}]
    compiled.invoke(Command(resume={"action": "edit", "plan": bad, "who": "ana"}), config,
                    context=context)
    shown = _pending(compiled, config)  # asked again, with what is wrong
    assert any("unknown task type 'teleportation'" in p for p in shown["problems"])

    edited = [{"id": 0, "task": "text-to-speech", "dep": [], "args": {"text": "bonjour"}}]
    out = compiled.invoke(Command(resume={"action": "edit", "plan": edited, "who": "ana"}),
                          config, context=context)
    assert out["status"] == "completed"
    assert [s.task for s in out["plan"]] == ["text-to-speech"]
    assert out["selections"][0].task == "text-to-speech"
    assert out["results"][0].outputs["audio"]["kind"] == "audio"
    assert [a.action for a in out["approvals"]] == ["edit"]


def test_rejection_ends_the_run_with_the_reason(compiled, workspace):
    context = _context(workspace)
    config = _start(compiled, context)
    out = compiled.invoke(Command(resume={"action": "reject", "reason": "too costly",
                                          "who": "bo"}), config, context=context)
    assert out["status"] == "aborted"
    assert out["abort_reason"] == "the plan was rejected: too costly"
    assert out["approvals"][0].who == "bo"
    # nothing ran, and every planned subtask says so (was: no results; issue 12)
    assert {i: r.status for i, r in out["results"].items()} == {0: "skipped", 1: "skipped"}
    assert all(r.attempts == 0 and "the plan was rejected: too costly" in r.error
               for r in out["results"].values())


def test_risky_policy_asks_only_for_tools_above_read_only(compiled, workspace, test_tools):
    def remote(text: str) -> str:
        return f"remote summary of {text}"

    test_tools.append(register_tool(remote, "summarization", backend="test",
                                    models=["test/remote"], risk="network"))
    test_tools.append(register_tool(_echo, "translation", backend="test",
                                    models=["test/local"]))
    risky = _context(workspace, backend="test", approval="risky")
    config = _start(compiled, risky, thread="risky")
    shown = _pending(compiled, config)
    assert shown["risky"] == [{"id": 0, "task": "summarization", "model": "test/remote",
                               "backend": "test", "risk": "network"}]
    out = compiled.invoke(Command(resume="approve"), config, context=risky)
    assert out["status"] == "completed" and out["approvals"][0].policy == "risky"

    only_translation = [PLAN[1] | {"id": 0, "dep": [], "args": {"text": "hi", "tgt_lang": "fr"}}]
    safe = _context(workspace, backend="test", approval="risky", plan=only_translation)
    config = _start(compiled, safe, thread="safe")
    assert compiled.get_state(config).interrupts == ()
    assert compiled.get_state(config).values["status"] == "completed"


def _echo(text: str, tgt_lang: str = "") -> str:
    return f"[{tgt_lang}] {text}"


@pytest.mark.parametrize(("answer", "status", "ran"), [
    (["--approve"], "completed", 2),
    (["--reject", "not today"], "aborted", 0),
])
def test_cli_waits_for_approval_then_resume_decides(capsys, workspace, tmp_path, answer,
                                                    status, ran):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(PLAN))
    code = main(["run", "summarise then translate", "--dry-run", "--plan", str(plan_file),
                 "--latency-scale", "0.01", "--approval", "plan", "--thread", "cli-a",
                 "--json", "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    # waiting has its own status and code (was "interrupted" and 130, Ctrl-C's; issue 12)
    assert code == 6 and doc["status"] == "waiting"
    assert doc["interrupt"]["policy"] == "plan"
    assert "hugginggpt resume --thread cli-a --approve" in err

    code = main(["resume", "--thread", "cli-a", "--json", "--workspace", str(workspace),
                 *answer])
    doc = json.loads(capsys.readouterr().out)
    assert code == (0 if status == "completed" else 5)
    # every planned subtask has a result; a rejected plan's are skipped (issue 12)
    assert doc["status"] == status and len(doc["results"]) == 2
    assert sum(r["status"] == "done" for r in doc["results"].values()) == ran
    assert doc["approvals"][0]["action"] == ("approve" if status == "completed" else "reject")


def test_cli_resume_with_an_edited_plan_file(capsys, workspace, tmp_path):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(PLAN))
    main(["run", "summarise then translate", "--dry-run", "--plan", str(plan_file),
          "--latency-scale", "0.01", "--approval", "plan", "--thread", "cli-e",
          "--workspace", str(workspace)])
    capsys.readouterr()
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps([PLAN[0]]))
    code = main(["resume", "--thread", "cli-e", "--plan", str(edited), "--json",
                 "--workspace", str(workspace)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and [s["task"] for s in doc["plan"]] == ["summarization"]
    assert doc["approvals"][0]["action"] == "edit"


def test_terminal_prompt_answers(monkeypatch, tmp_path, capsys):
    from hugginggpt.cli import session as cli

    pending = {"policy": "plan", "request": "r", "plan": PLAN,
               "selections": {"0": {"model": "m", "backend": "dry-run"}}, "problems": []}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps([PLAN[0]]))
    answers = iter(["x", "a", "r", "too slow", "e", str(tmp_path / "missing.json"), "e",
                    str(edited)])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert cli._ask(pending)["action"] == "approve"  # "x" is asked again
    assert cli._ask(pending) | {"who": None} == {"action": "reject", "reason": "too slow",
                                                 "who": None}
    edit = cli._ask(pending)  # a missing file is reported, then asked again
    assert edit["action"] == "edit" and edit["plan"] == [PLAN[0]]
    assert "cannot read the plan file" in capsys.readouterr().err


def test_never_policy_runs_straight_through(compiled, workspace):
    context = _context(workspace, approval="never")
    config = _start(compiled, context, thread="never")
    snapshot = compiled.get_state(config)
    assert snapshot.interrupts == () and snapshot.values["status"] == "completed"
    assert snapshot.values["approvals"] == [] and len(snapshot.values["results"]) == 2
