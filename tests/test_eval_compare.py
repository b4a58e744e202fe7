"""``hugginggpt eval DATA --llm A --llm B``: planner LLMs compared side by side, through
the CLI and real HTTP to a local OpenAI-compatible server that answers per model: one
model replies the gold plans, the other garbage (repaired once into a wrong plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.evaluation import read_samples
from hugginggpt.evaluation.compare import percentile
from tests.llm_server import Reply, ScriptedLLMServer, role_of

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "evals" / "labelled.jsonl"
LIMIT = 6
"""Three small-talk samples (gold: no subtask) and three single-task ones."""
WRONG_PLAN = {"subtasks": [{"id": 0, "task": "text-to-image", "dep": [],
                            "args": {"text": "a cat"}}]}


def _per_model(server: ScriptedLLMServer) -> None:
    """stub-good (and the priced endpoint `good`) replies each sample's gold plan;
    stub-bad replies garbage, and a wrong but valid plan when asked to repair the first
    sample's."""
    gold = {s.request: s for s in read_samples(DATASET, limit=LIMIT)}
    first = next(iter(gold))

    def answer(body: dict[str, Any]) -> Reply | None:
        said = "\n".join(str(m.get("content")) for m in body["messages"]
                         if m.get("role") == "user")
        request = next((r for r in gold if r in said), None)
        if request is None:
            return None
        if "good" in body["model"]:
            return {"tool_args": {"subtasks": [
                {"id": n.id, "task": n.task, "dep": list(n.dep), "args": dict(n.args)}
                for n in gold[request].gold]}}
        if "previous plan was rejected" in said and request == first:
            return {"tool_args": WRONG_PLAN}
        return {"content": "Sure! Here is my plan: do the thing, then the other thing."}

    server.answer = answer


def _rows(text: str) -> dict[str, list[str]]:
    """The comparison table's rows by model, each its cells."""
    rows = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 11 and cells[0].isdigit():
            rows[cells[1]] = cells
    return rows


def test_two_models_compared_the_good_one_ranks_first(capsys, tmp_path, llm_server):
    _per_model(llm_server)
    report_file = tmp_path / "ci" / "compare.json"
    code = main(["eval", str(DATASET), "--llm", "stub-bad", "--llm", "stub-good",
                 "--llm-base-url", llm_server.url, "--limit", str(LIMIT),
                 "--output", str(report_file)])
    text = capsys.readouterr().out
    assert code == 0, text
    rows = _rows(text)
    assert list(rows) == ["stub-good", "stub-bad"]  # best first, whatever the order given
    good, bad = rows["stub-good"], rows["stub-bad"]
    assert good[:6] == ["1", "stub-good", "1.000", "-", "0", "0"]  # node F1, edge F1 (none)
    assert bad[0] == "2" and float(bad[2]) < 1.0
    # two repairs for each sample but the first, repaired once into a valid (wrong) plan
    assert int(bad[4]) == LIMIT - 1 and int(bad[5]) == 2 * (LIMIT - 1) + 1
    assert good[-1] == bad[-1] == "-"  # no prices configured: no cost estimate
    calls = 3 * (LIMIT - 1) + 2
    assert int(good[8]) == LIMIT * 10 and int(bad[8]) == calls * 10  # the stub's usage
    assert int(good[9]) == LIMIT * 5 and int(bad[9]) == calls * 5

    report = json.loads(report_file.read_text())
    assert report["ranking"] == ["stub-good", "stub-bad"]
    models = {m["llm"]: m for m in report["models"]}
    assert models["stub-good"]["figures"]["node_f1"] == 1.0
    assert models["stub-bad"]["figures"]["invalid"] == LIMIT - 1
    records = models["stub-bad"]["report"]["records"]
    assert len(records) == LIMIT and records[0]["valid"] and records[0]["repairs"] == 1
    assert records[1]["repairs"] == 2 and records[1]["llm_calls"] == 3
    assert records[0]["predicted"] == ["text-to-image"]  # repaired into the wrong plan
    assert "PlanParseError" in records[1]["error"]
    assert all(r["repairs"] == 0 and r["valid"] for r in models["stub-good"]["report"]["records"])
    requests = [r for r in llm_server.requests if r["model"] == "stub-bad"]
    assert len(requests) == calls + 1  # and the first sample once, untimed, to warm up


def test_endpoints_of_a_config_compared_with_their_prices(capsys, tmp_path, llm_server):
    _per_model(llm_server)
    config = tmp_path / "llms.toml"
    config.write_text(f"""
[[endpoints]]
name = "good"
model = "stub-good"
base_url = "{llm_server.url}"
cost_per_1m_input = 1000.0
cost_per_1m_output = 2000.0

[[endpoints]]
name = "bad"
model = "stub-bad"
base_url = "{llm_server.url}"
""")
    code = main(["eval", str(DATASET), "--llm-config", str(config), "--llm", "good",
                 "--llm", "bad", "--limit", "3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    figures = {m["llm"]: m["figures"] for m in report["models"]}
    # 3 calls of 10 prompt and 5 completion tokens at 1000 and 2000 a million
    assert figures["good"]["cost"] == pytest.approx(3 * (10 * 1000 + 5 * 2000) / 1e6)
    assert figures["bad"]["cost"] is None  # no prices: unknown, not free


def test_a_config_endpoint_that_is_not_there_is_named(capsys, tmp_path):
    config = tmp_path / "llms.toml"
    config.write_text('[[endpoints]]\nname = "a"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n')
    code = main(["eval", str(DATASET), "--llm-config", str(config), "--llm", "a",
                 "--llm", "b", "--limit", "1"])
    assert code != 0
    assert "has no endpoint named 'b'; its endpoints: a" in capsys.readouterr().err


def test_a_model_without_its_key_is_a_usage_error_before_any_request(capsys):
    code = main(["eval", str(DATASET), "--llm", "gpt-a", "--llm", "gpt-b", "--limit", "1"])
    err = capsys.readouterr().err
    assert code != 0
    assert "gpt-a: " in err and "OPENAI_API_KEY" in err


def test_several_llms_with_the_offline_planner_is_a_usage_error(capsys):
    code = main(["eval", str(DATASET), "--planner", "offline", "--llm", "a", "--llm", "b"])
    assert code != 0
    assert "--planner offline does not apply" in capsys.readouterr().err


def test_one_llm_keeps_the_single_model_report(capsys, tmp_path, llm_server):
    _per_model(llm_server)
    code = main(["eval", str(DATASET), "--planner", "llm", "--llm", "stub-good",
                 "--llm-base-url", llm_server.url, "--limit", "4", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["planner"] == "llm"
    assert "models" not in report and len(report["records"]) == 4
    assert report["overall"]["node"]["f1"] == 1.0


def test_percentile_interpolates():
    assert percentile([], 95) is None
    assert percentile([2.0], 95) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)


ANSWERS = [
    {"id": "t-1", "split": "tune", "language": "en", "category": "small-talk",
     "request": "what is the capital of france?", "files": [],
     "expect": {"all": ["paris"]}, "forbid": ["lyon"]},
    {"id": "t-2", "split": "held-out", "language": "en", "category": "small-talk",
     "request": "thank you so much, that really helped", "files": [],
     "expect": {"all": ["welcome|glad"]}, "forbid": []},
]
REPLIES = {"stub-good": {"capital": "The capital of France is Paris.",
                         "thank": "You're welcome, glad it helped!"},
           "stub-bad": {"capital": "The capital of France is Lyon.",
                        "thank": "Lyon is lovely in spring."}}


def test_answers_compared_right_honest_wrong_per_model(capsys, tmp_path, llm_server):
    dataset = tmp_path / "answers.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in ANSWERS))

    def answer(body: dict[str, Any]) -> Reply | None:
        said = " ".join(str(m.get("content")) for m in body["messages"])
        if role_of(body) == "planner":
            return {"tool_args": {"subtasks": []}}
        if role_of(body) == "responder":
            replies = REPLIES[body["model"]]
            return {"content": replies["capital" if "capital" in said else "thank"]}
        return None

    llm_server.answer = answer
    code = main(["eval", "--answers", str(dataset), "--llm", "stub-bad", "--llm", "stub-good",
                 "--llm-base-url", llm_server.url, "--output", str(tmp_path / "a.json")])
    text = capsys.readouterr().out
    assert code == 0, text
    rows = [line.split() for line in text.splitlines() if line[:2].strip().isdigit()]
    assert [row[:5] for row in rows] == [["1", "stub-good", "2", "0", "0"],
                                         ["2", "stub-bad", "0", "0", "2"]]
    assert rows[0][-1] == "-"  # no prices
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["ranking"] == ["stub-good", "stub-bad"]
    bad = next(m for m in report["models"] if m["llm"] == "stub-bad")
    assert [s["label"] for s in bad["report"]["samples"]] == ["wrong", "wrong"]
    assert all(s["llm_calls"] >= 2 for s in bad["report"]["samples"])  # planner, responder
    assert {r["model"] for r in llm_server.requests} == {"stub-good", "stub-bad"}
