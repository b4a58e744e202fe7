"""The plan data: the example bank (nodes/planning/plan_bank.jsonl) and the labelled evaluation set
(evals/labelled.jsonl).

Every plan must pass the validator, be faithful to its request (files, quoted texts,
labels and prompts are copied from it verbatim, every dependency is used), and each file
must cover every task type and every plan shape. The labelled set must not overlap the
bank, or an offline planner that retrieves from the bank would be scored on its own
examples: not in its requests, not in its literal values, and not in what the planner
retrieves by, the request's shape (quoted texts and file names masked) as MiniLM embeds it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.nodes.planning.bank import load_bank
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from hugginggpt.tools.kinds import generated_refs, kind_of_literal

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "nodes" / "planning" / "plan_bank.jsonl"
LABELLED = ROOT / "evals" / "labelled.jsonl"
FILES = {"bank": BANK, "eval": LABELLED}

MAX_SUBTASKS = 10
NEAR_COPY = 0.80
"""An eval request whose shape is this close (cosine) to a bank example's is a near-copy:
the planner would retrieve that example and mostly be scored on reproducing it."""
_LANG_RE = re.compile(r"^[a-z]{2}$")


def _load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            row["_line"] = number
            rows.append(row)
    return rows


DATA = {prefix: _load(path) for prefix, path in FILES.items()}
ENTRIES = [(prefix, row) for prefix, rows in DATA.items() for row in rows]


def _entry_id(entry: tuple[str, dict[str, Any]]) -> str:
    return entry[1].get("id", f"{entry[0]}:{entry[1]['_line']}")


def _normalise(request: str) -> str:
    return " ".join(request.lower().split())


def shape(plan: list[dict[str, Any]]) -> str:
    """empty, single, chain (one connected path: every subtask has at most one dependency
    and at most one dependent) or dag (anything else, including independent subtasks)."""
    if not plan:
        return "empty"
    if len(plan) == 1:
        return "single"
    dependents = Counter(d for st in plan for d in st["dep"])
    edges = sum(len(st["dep"]) for st in plan)
    path_like = all(len(st["dep"]) <= 1 and dependents[st["id"]] <= 1 for st in plan)
    return "chain" if path_like and edges == len(plan) - 1 else "dag"


def _literals(plan: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:
    """(subtask, argument name, value) for every literal data argument (a text that
    combines outputs is the planner's own wording, not copied from the request)."""
    found = []
    for st in plan:
        task_type = get_task_type(st["task"])
        assert task_type is not None
        for name, value in st["args"].items():
            arg = task_type.arg(name)
            if arg is not None and arg.is_data and not generated_refs(value):
                found.append((st, name, value))
    return found


@pytest.mark.parametrize("prefix", sorted(FILES))
def test_ids_and_keys(prefix: str) -> None:
    rows = DATA[prefix]
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for number, row in enumerate(rows, 1):
        assert set(row) == {"id", "request", "plan", "_line"}, row["id"]
        assert row["id"] == f"{prefix}-{number:03d}"
        assert row["request"].strip() == row["request"] and row["request"], row["id"]
    requests = Counter(_normalise(row["request"]) for row in rows)
    assert [r for r, n in requests.items() if n > 1] == []


@pytest.mark.parametrize("entry", ENTRIES, ids=_entry_id)
def test_plan_is_valid(entry: tuple[str, dict[str, Any]]) -> None:
    plan = entry[1]["plan"]
    _, problems = validate_plan(plan, max_subtasks=MAX_SUBTASKS)
    assert problems == []
    for position, st in enumerate(plan):
        assert set(st) == {"id", "task", "dep", "args"}
        assert st["id"] == position, "ids count from 0 in order"
        assert get_task_type(st["task"]).name == st["task"], "canonical task names only"
        assert st["dep"] == sorted(set(st["dep"]))
        refs = {ref for v in st["args"].values() for ref in generated_refs(v)}
        assert refs == set(st["dep"]), f"subtask {st['id']}: every dependency is used"


@pytest.mark.parametrize("entry", ENTRIES, ids=_entry_id)
def test_plan_is_faithful_to_request(entry: tuple[str, dict[str, Any]]) -> None:
    """Files, quoted texts, prompts and questions are copied verbatim from the request;
    labels are named in it; languages are ISO 639-1 codes."""
    request = entry[1]["request"]
    for st, name, value in _literals(entry[1]["plan"]):
        assert value == value.strip() and value, f"subtask {st['id']}: {name}={value!r}"
        if kind_of_literal(value) == "text":
            assert value in request, f"subtask {st['id']}: text {name}={value!r} not in request"
        else:  # a whole file name or URL, not the tail of a longer one
            named = re.search(rf"(?<![\w./-]){re.escape(value)}(?![\w/-])", request)
            assert named, f"subtask {st['id']}: file {name}={value!r} not named in request"
    for st in entry[1]["plan"]:
        for name in ("tgt_lang", "src_lang"):
            if name in st["args"]:
                assert _LANG_RE.match(st["args"][name]), st["args"][name]
        if "labels" in st["args"]:
            labels = [label.strip() for label in st["args"]["labels"].split(",")]
            assert len(labels) >= 2 and all(labels)
            assert ", ".join(labels) == st["args"]["labels"], "labels as 'a, b, c'"
            for label in labels:
                assert label.lower() in request.lower(), f"label {label!r} not in request"


def _task_counts(rows: list[dict[str, Any]]) -> Counter[str]:
    """In how many entries each task type appears."""
    return Counter(task for row in rows for task in {st["task"] for st in row["plan"]})


@pytest.mark.parametrize(("prefix", "min_entries", "min_per_task"),
                         [("bank", 170, 4), ("eval", 70, 2)])
def test_size_and_task_coverage(prefix: str, min_entries: int, min_per_task: int) -> None:
    rows = DATA[prefix]
    assert len(rows) >= min_entries
    counts = _task_counts(rows)
    short = {t.name: counts[t.name] for t in task_types() if counts[t.name] < min_per_task}
    assert short == {}
    assert set(counts) <= {t.name for t in task_types()}


@pytest.mark.parametrize("prefix", sorted(FILES))
def test_every_shape_is_present(prefix: str) -> None:
    shapes = Counter(shape(row["plan"]) for row in DATA[prefix])
    assert {"empty", "single", "chain", "dag"} <= set(shapes)
    planned = len(DATA[prefix]) - shapes["empty"]
    # a mix close to 40% singles, 35% chains, 25% DAGs of the non-empty plans
    assert 0.3 <= shapes["single"] / planned <= 0.5, shapes
    assert 0.25 <= shapes["chain"] / planned <= 0.45, shapes
    assert 0.15 <= shapes["dag"] / planned <= 0.35, shapes


def test_shape() -> None:
    def plan(*deps: list[int]) -> list[dict[str, Any]]:
        return [{"id": i, "dep": d} for i, d in enumerate(deps)]

    assert shape([]) == "empty"
    assert shape(plan([])) == "single"
    assert shape(plan([], [0], [1])) == "chain"
    assert shape(plan([], [0], [0])) == "dag"  # fan-out
    assert shape(plan([], [], [0, 1])) == "dag"  # join
    assert shape(plan([], [])) == "dag"  # independent subtasks


def test_labelled_set_does_not_overlap_the_bank() -> None:
    bank_requests = {_normalise(row["request"]) for row in DATA["bank"]}
    shared = [row["id"] for row in DATA["eval"] if _normalise(row["request"]) in bank_requests]
    assert shared == []
    # no near-duplicates either: the labelled set uses its own files and texts
    bank_values = {v.lower() for row in DATA["bank"] for _, _, v in _literals(row["plan"])}
    reused = sorted({v for row in DATA["eval"] for _, _, v in _literals(row["plan"])
                     if v.lower() in bank_values})
    assert reused == []


def test_labelled_set_is_new_to_the_planner() -> None:
    """Measured exactly as the planner retrieves: the shipped bank's own ``nearest``, which
    embeds :func:`request_shape` with the bundled MiniLM (the LLM planner's few-shot
    examples come from the same call)."""
    bank = load_bank(BANK)
    near = []
    for row in DATA["eval"]:
        ((example, similarity),) = bank.nearest(row["request"], k=1)
        if similarity >= NEAR_COPY:
            near.append((round(similarity, 3), row["id"], example.id))
    near.sort(reverse=True)
    assert near == [], (f"{len(near)} eval requests have a shape cosine >= {NEAR_COPY} to a "
                        f"bank example (similarity, eval, bank): {near}")
