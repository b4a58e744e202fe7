"""Plan files (``run --plan``, ``resume --plan``) and edited plans are read strictly: a
file that is not exactly JSON is refused with the file, line and column, and nothing
runs; an approval's edit is a plan object, not text. The tolerant reading of LLM
replies is not used for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.types import Command

from hugginggpt.cli import main
from hugginggpt.graph.context import Context, SettingsError

SUMMARY = {"id": 0, "task": "summarization", "dep": [], "args": {"text": "x"}}
TRANSLATION = {"id": 1, "task": "translation", "dep": [0],
               "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "where"), [
    # the issue's file: an object cut short after its first subtask
    ('{"subtasks": [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "x"}',
     "line 1, column 82"),
    # a list cut short after its first subtask: it ran in part before
    (json.dumps([SUMMARY, TRANSLATION], indent=2)[:-30], "line 18, column 5"),
])
def test_a_truncated_plan_file_is_refused_with_line_and_column(capsys, workspace, tmp_path,
                                                                text, where):
    plan = _write(tmp_path, "cut.json", text)
    code, out, err = _run(capsys, "run", "summarise x", "--dry-run", "--plan", str(plan),
                          "--json", "--workspace", str(workspace))
    assert code == 2, err
    assert out == ""  # nothing ran: no document, no thread
    assert f"the plan file {plan} holds no plan: it is not valid JSON" in err
    assert where in err and "cut short" in err
    assert "Traceback" not in err
    assert not (workspace / "artifacts").exists()


def test_a_prose_plan_file_is_refused_in_terms_of_the_file(capsys, workspace, tmp_path):
    prose = _write(tmp_path, "prose.json", "first caption, then translate\n")
    code, _, err = _run(capsys, "run", "x", "--plan", str(prose), "--workspace", str(workspace))
    assert code == 2
    assert f"the plan file {prose} holds no plan: it is not valid JSON" in err
    assert "line 1, column 1" in err
    assert "reply" not in err  # the file is not an LLM's reply
    assert 'a JSON list of subtasks or {"subtasks": [...]}' in err


def test_json_that_is_not_a_plan_and_binary_files_are_refused(capsys, workspace, tmp_path):
    other = _write(tmp_path, "other.json", json.dumps({"steps": [SUMMARY]}))
    code, _, err = _run(capsys, "run", "x", "--plan", str(other), "--workspace", str(workspace))
    assert code == 2 and f"the plan file {other} holds no plan: it is not a plan" in err
    assert "an object with keys ['steps']" in err

    binary = _write(tmp_path, "image.png", b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    code, _, err = _run(capsys, "run", "x", "--plan", str(binary), "--workspace",
                        str(workspace))
    assert code == 2 and f"the plan file {binary} holds no plan: it is not UTF-8 text" in err
    assert "Traceback" not in err


def test_a_valid_plan_file_with_a_byte_order_mark_still_runs(capsys, workspace, tmp_path):
    plan = _write(tmp_path, "bom.json", "\ufeff" + json.dumps({"subtasks": [SUMMARY]}))
    code, out, err = _run(capsys, "run", "summarise x", "--dry-run", "--plan", str(plan),
                          "--latency-scale", "0.01", "--json", "--workspace", str(workspace))
    assert code == 0, err
    assert [s["task"] for s in json.loads(out)["plan"]] == ["summarization"]


def test_resume_with_a_truncated_plan_file_keeps_the_thread_waiting(capsys, workspace,
                                                                     tmp_path):
    plan = _write(tmp_path, "plan.json", json.dumps([SUMMARY, TRANSLATION]))
    _run(capsys, "run", "summarise then translate", "--dry-run", "--plan", str(plan),
         "--latency-scale", "0.01", "--approval", "plan", "--thread", "cut",
         "--workspace", str(workspace))
    cut = _write(tmp_path, "edited.json", json.dumps([SUMMARY])[:-3])
    code, _, err = _run(capsys, "resume", "--thread", "cut", "--plan", str(cut),
                        "--workspace", str(workspace))
    assert code == 2 and f"the plan file {cut} holds no plan: it is not valid JSON" in err
    # the thread still waits, with its plan: answering again works
    code, out, err = _run(capsys, "resume", "--thread", "cut", "--approve", "--json",
                          "--workspace", str(workspace))
    assert code == 0, err
    assert {r["status"] for r in json.loads(out)["results"].values()} == {"done"}


def test_an_approval_edit_is_a_plan_object_not_text(compiled, workspace):
    context = Context(backend="dry-run", plan=[SUMMARY], dry_run_latency_scale=0.01,
                      workspace=str(workspace), approval="plan")
    config = {"configurable": {"thread_id": "edit"}}
    compiled.invoke({"request": "summarise x"}, config, context=context)
    compiled.invoke(Command(resume={"action": "edit", "plan": json.dumps([SUMMARY])}),
                    config, context=context)
    [problem] = compiled.get_state(config).interrupts[0].value["problems"]
    assert problem.startswith("the edited plan is not a plan: ")
    assert "text" in problem and "reply" not in problem
    # {"subtasks": [...]} is a plan object too
    out = compiled.invoke(Command(resume={"action": "edit", "plan": {"subtasks": [SUMMARY]}}),
                          config, context=context)
    assert out["status"] == "completed" and out["results"][0].status == "done"


def test_strict_reading_directly():
    from hugginggpt.nodes.planning.validation import PlanParseError, plan_from_json, plan_object

    assert plan_from_json(json.dumps([SUMMARY]), "it") == [SUMMARY]
    assert plan_from_json(json.dumps({"subtasks": [SUMMARY]}), "it") == [SUMMARY]
    with pytest.raises(PlanParseError, match="it is not valid JSON: Expecting value at line "
                                             "1, column 1"):
        plan_from_json("```json\n[]\n```", "it")  # fences are for LLM replies
    with pytest.raises(PlanParseError, match="it is not valid JSON"):
        plan_from_json("", "it")
    for not_a_plan in ("[]x", '{"task": "summarization"}', "3"):
        with pytest.raises(PlanParseError):
            plan_from_json(not_a_plan, "it")
    with pytest.raises(PlanParseError, match="'subtasks' holds text"):
        plan_object({"subtasks": "summarize"}, "the plan")


def test_a_fixed_plan_in_the_settings_is_read_strictly(compiled, workspace):
    def run(plan, thread):
        context = Context(backend="dry-run", plan=plan, dry_run_latency_scale=0.01,
                          workspace=str(workspace))
        return compiled.invoke({"request": "summarise x"},
                               {"configurable": {"thread_id": thread}}, context=context)

    out = run({"subtasks": [SUMMARY]}, "object")  # as a server's client may send it
    assert out["status"] == "completed" and out["results"][0].status == "done"
    with pytest.raises(SettingsError) as refused:  # text is not a plan: refused as it enters
        run(json.dumps([SUMMARY]), "text")
    assert "plan = " in str(refused.value) and "expected a list" in str(refused.value)
