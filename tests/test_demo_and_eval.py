"""``hugginggpt demo`` (offline, checked outputs) and ``hugginggpt eval`` (the harness
through the CLI, on the shipped labelled set and on TaskBench-format input)."""

from __future__ import annotations

import json
from pathlib import Path

from hugginggpt.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_offline_and_verifies_every_output(capsys, workspace):
    code = main(["demo", "--workspace", str(workspace)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("check: ") == 5 and "CHECK FAILED" not in out
    assert "5 of 5 demo requests verified" in out
    assert "OCR read back 3 lines; sentiment POSITIVE" in out
    assert (workspace / "demo-inputs" / "notice.png").is_file()


def test_eval_reports_taskbench_metrics_as_text_and_json(capsys, tmp_path):
    dataset = tmp_path / "mini.jsonl"
    dataset.write_text("\n".join(json.dumps(row) for row in [
        {"id": "ours-1", "request": 'Translate "good evening" into German',
         "plan": [{"id": 0, "task": "translation", "dep": [],
                   "args": {"text": "good evening", "tgt_lang": "de"}}]},
        {"id": "taskbench-1", "user_request": "Caption photo.jpg, then read the caption aloud.",
         "task_nodes": [{"task": "Image-to-Text", "arguments": ["photo.jpg"]},
                        {"task": "Text-to-Speech", "arguments": ["<node-0>"]}],
         "task_links": [{"source": "Image-to-Text", "target": "Text-to-Speech"}]},
    ]))
    report_file = tmp_path / "report.json"
    code = main(["eval", str(dataset), "--output", str(report_file)])
    text = capsys.readouterr().out
    assert code == 0
    assert "node" in text and "edge" in text
    report = json.loads(report_file.read_text())
    assert report["planner"] == "offline" and len(report["records"]) == 2


def test_eval_of_the_shipped_labelled_set_meets_the_readme_figures(capsys):
    code = main(["eval", str(ROOT / "evals" / "labelled.jsonl"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    overall = report["overall"]
    assert len(report["records"]) >= 70
    # the regression floor: the README's figures, with a small margin
    assert overall["node"]["f1"] >= 0.75
    assert overall["invalid_rate"] <= 0.15


def test_eval_with_the_llm_planner_through_a_server(capsys, tmp_path, llm_server):
    dataset = tmp_path / "two.jsonl"
    gold = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "a long text"}}]
    dataset.write_text("\n".join(json.dumps({"id": f"s{i}", "request": f"Summarize: text {i}",
                                             "plan": gold}) for i in range(2)))
    llm_server.script("planner", {"tool_args": {"subtasks": gold}},
                      {"content": "I would rather not plan this."})
    code = main(["eval", str(dataset), "--planner", "llm", "--llm", "scripted",
                 "--llm-base-url", llm_server.url, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["planner"] == "llm"
    assert [r["valid"] for r in report["records"]] == [True, False]
    assert report["overall"]["node"]["recall"] == 0.5  # the refusal counts as an empty plan
    assert "PlanParseError" in report["records"][1]["error"]
