"""``hugginggpt demo`` (offline, checked outputs) and ``hugginggpt eval`` (the harness
through the CLI, on the shipped labelled set and on TaskBench-format input)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hugginggpt.cli import main
from hugginggpt.nodes.planning.bank import load_bank

ROOT = Path(__file__).resolve().parents[1]
TABLE = "The offline planner on `evals/{name}.jsonl`"
"""The sentence that introduces the documentation's table of a labelled set's figures."""
SHOWN_IN = ("docs/guides/evaluation.md",)
"""The pages that show those tables."""
TARGETS = {"labelled": (0.696, 0.429), "own_words": (0.85, 0.70)}
"""The least node F1 and edge F1 the offline planner must reach on each set: on the
regression set, what the planner scored before it read requests (it must not fall); on
the own-words set, issue 14's targets."""


def test_demo_runs_offline_and_verifies_every_output(capsys, workspace):
    code = main(["demo", "--workspace", str(workspace)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("check: ") == 6 and "CHECK FAILED" not in out
    assert "6 of 6 demo requests verified" in out
    assert "OCR read back 3 lines; sentiment POSITIVE" in out
    assert "heard back 'the weather is nice today' (5 of 5 words)" in out
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
    report_file = tmp_path / "not-yet" / "report.json"  # as `make eval` on a fresh checkout
    code = main(["eval", str(dataset), "--output", str(report_file)])
    text = capsys.readouterr().out
    assert code == 0
    assert "node" in text and "edge" in text
    report = json.loads(report_file.read_text())
    assert report["planner"] == "offline" and len(report["records"]) == 2
    # each sample's nearest bank example, found as the planner finds it
    bank = load_bank()
    for record, request in zip(report["records"], ['Translate "good evening" into German',
                                                   "Caption photo.jpg, then read the caption "
                                                   "aloud."], strict=True):
        ((example, similarity),) = bank.nearest(request, k=1)
        assert record["nearest"] == {"example": example.id, "similarity": similarity}
    assert sum(g["samples"] for g in report["by_nearness"].values()) == 2
    assert "Nearest bank example" in text and "\nnearest " in text


def test_eval_report_that_cannot_be_written_is_a_clear_error(capsys, tmp_path):
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"id": "s", "request": 'Translate "good evening" into German',
                                   "plan": [{"id": 0, "task": "translation", "dep": [],
                                             "args": {"text": "good evening"}}]}))
    (tmp_path / "a-file").write_text("")
    code = main(["eval", str(dataset), "--output", str(tmp_path / "a-file" / "report.json")])
    captured = capsys.readouterr()
    assert code == 2
    assert "cannot write the report to" in captured.err and "Traceback" not in captured.err


def _shown_rows(name: str, page: str = SHOWN_IN[0]) -> dict[str, list[str]]:
    """The documentation's table of a labelled set (or another page's copy): group -> [n,
    invalid, node F1, edge F1, arg-name F1, arg-value F1], as written."""
    text = (ROOT / page).read_text(encoding="utf-8")
    table = text[text.index(TABLE.format(name=name)):].split("\n\n")[1]
    rows = {}
    for line in table.splitlines()[2:]:  # after the header and the --- line
        group, *cells = (cell.strip() for cell in line.strip().strip("|").split("|"))
        rows[group] = cells
    return rows


def _printed_rows(text: str) -> dict[str, list[str]]:
    """The same columns from the text report that `hugginggpt eval` prints."""
    rows = {}
    for line in text.splitlines():
        label, cells = line[:16].strip(), line[16:].split()
        if len(cells) == 10 and re.fullmatch(r"\d+", cells[0]):
            n, invalid, _, _, node, _, _, edge, name, value = cells
            rows[label] = [n, invalid, node, edge, name, value]
    return rows


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_eval_of_the_shipped_sets_meets_the_documented_figures(capsys, tmp_path, name):
    """The documentation's table is what `make eval` prints, row
    for row, figure for figure, and the figures meet their targets."""
    report_file = tmp_path / "report.json"
    code = main(["eval", str(ROOT / "evals" / f"{name}.jsonl"), "--output", str(report_file)])
    text = capsys.readouterr().out
    report = json.loads(report_file.read_text())
    assert code == 0
    assert len(report["records"]) >= 70
    assert report["overall"]["invalid_rate"] <= 0.15
    node, edge = TARGETS[name]
    assert report["overall"]["node"]["f1"] >= node and report["overall"]["edge"]["f1"] >= edge
    shown, printed = _shown_rows(name), _printed_rows(text)
    assert {"overall", "shape single", "shape chain", "shape dag"} <= set(shown)
    assert set(report["by_nearness"]) == {"<0.6", "0.6-0.7", "0.7-0.8"}  # no near-copy
    assert {f"nearest {band}" for band in report["by_nearness"]} <= set(shown)
    nearness = next(line for line in text.splitlines() if line.startswith("Nearest bank"))
    for page in SHOWN_IN:
        shown = _shown_rows(name, page)
        assert {group: printed.get(group) for group in shown} == shown, page
        page_text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        assert nearness.partition(": ")[2] in page_text, page


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
    # the planner was shown the bank's nearest examples: the split by nearness is there too
    ((example, similarity),) = load_bank().nearest("Summarize: text 0", k=1)
    assert report["records"][0]["nearest"] == {"example": example.id, "similarity": similarity}
    assert sum(g["samples"] for g in report["by_nearness"].values()) == 2
