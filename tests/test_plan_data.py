"""The plan data: the example bank (nodes/planning/plan_bank.jsonl) and the two labelled
evaluation sets (evals/labelled.jsonl, and evals/own_words.jsonl: requests in users' own
words, several languages).

Every plan must pass the validator, be faithful to its request (files, quoted texts,
labels and prompts are copied from it verbatim, every dependency is used, every file the
request names is bound), and each file must cover every task type and every plan shape.
An evaluation set must not overlap the bank, or an offline planner that retrieves from the
bank would be scored on its own examples: not in its requests, not in its literal values,
and not in what the planner retrieves by, the request's shape (quoted texts and file names
masked) as MiniLM embeds it. The own-words set is new to the labelled set in the same
three ways, so that it measures something the first set does not.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.nodes.planning.bank import load_bank
from hugginggpt.nodes.planning.reading import FILE_RE, unquote_files
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.experts.lite.languages import language_of
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from hugginggpt.tools.kinds import generated_refs, kind_of_literal

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "nodes" / "planning" / "plan_bank.jsonl"
LABELLED = ROOT / "evals" / "labelled.jsonl"
OWN_WORDS = ROOT / "evals" / "own_words.jsonl"
FILES = {"bank": BANK, "eval": LABELLED, "own": OWN_WORDS}
NEW_TO = [("eval", "bank"), ("own", "bank"), ("own", "eval")]
"""(evaluation set, what it must be new to): each set is new to the bank; the own-words
set is also new to the first labelled set."""

MAX_SUBTASKS = 10
NEAR_COPY = 0.80
"""An eval request whose shape is this close (cosine) to a bank example's is a near-copy:
the planner would retrieve that example and mostly be scored on reproducing it."""
_LANG_RE = re.compile(r"^[a-z]{2}$")
_REF_RE = re.compile(r"<GENERATED>-([0-9]+)")

COMBINED_REFERENCES = {"own-066", "own-067", "own-068"}
"""The samples where one argument combines two outputs with text ("write one paragraph
combining <GENERATED>-0 and <GENERATED>-1"), so that the set measures that form."""


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


def _refs(value: str) -> set[int]:
    """The subtasks a value refers to: ``<GENERATED>-k`` as the whole value or, in the
    combined form, inside a longer one."""
    return {int(k) for k in _REF_RE.findall(value)}


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


def _combines_outputs(plan: list[dict[str, Any]]) -> bool:
    """Whether an argument embeds a reference in a longer value."""
    return any(_refs(v) and _REF_RE.fullmatch(v.strip()) is None
               for st in plan for v in st["args"].values())


def _named_files(request: str) -> set[str]:
    """The file names and URLs a request names (as the planner reads them)."""
    return {m.group(0).rstrip(".") for m in FILE_RE.finditer(unquote_files(request))
            if kind_of_literal(m.group(0).rstrip(".")) != "text"}


def _instruction_language(request: str) -> str | None:
    """The language of a request by the project's detector, file names left out."""
    return language_of(FILE_RE.sub(" ", request))


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


def test_the_combined_references_are_the_listed_samples() -> None:
    """Exactly the samples in COMBINED_REFERENCES use the combined form in the own-words
    set (the bank has examples of it too)."""
    combined = {row["id"] for prefix, row in ENTRIES
                if prefix == "own" and _combines_outputs(row["plan"])}
    assert combined == COMBINED_REFERENCES


@pytest.mark.parametrize("entry", ENTRIES, ids=_entry_id)
def test_plan_is_faithful_to_request(entry: tuple[str, dict[str, Any]]) -> None:
    """Files, quoted texts, prompts and questions are copied verbatim from the request;
    labels are named in it (a classifier's are two or more: it chooses among them; a
    detector may look for one thing); languages are ISO 639-1 codes."""
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
            assert all(labels)
            if [o.kind for o in get_task_type(st["task"]).outputs] == ["labels"]:
                assert len(labels) >= 2, "a classifier chooses among two labels or more"
            assert ", ".join(labels) == st["args"]["labels"], "labels as 'a, b, c'"
            for label in labels:
                assert label.lower() in request.lower(), f"label {label!r} not in request"
        if st["task"] == "question-answering":
            question, context = st["args"]["question"], st["args"]["text"]
            if not (_refs(question) or _refs(context)):  # the roles, not swapped
                assert question not in context and len(question) < len(context), st["id"]


@pytest.mark.parametrize("entry", ENTRIES, ids=_entry_id)
def test_every_named_file_is_bound(entry: tuple[str, dict[str, Any]]) -> None:
    """A file the request names is an argument of some subtask ("a.png and b.png": two
    subtasks), and the plan names no file the request does not."""
    bound = {v for _, _, v in _literals(entry[1]["plan"]) if kind_of_literal(v) != "text"}
    assert bound == _named_files(entry[1]["request"])


def _task_counts(rows: list[dict[str, Any]]) -> Counter[str]:
    """In how many entries each task type appears."""
    return Counter(task for row in rows for task in {st["task"] for st in row["plan"]})


@pytest.mark.parametrize(("prefix", "min_entries", "min_per_task"),
                         [("bank", 170, 4), ("eval", 70, 2), ("own", 90, 1)])
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


@pytest.mark.parametrize(("prefix", "reference"), NEW_TO, ids=[f"{a}-vs-{b}" for a, b in NEW_TO])
def test_evaluation_set_does_not_overlap(prefix: str, reference: str) -> None:
    reference_requests = {_normalise(row["request"]) for row in DATA[reference]}
    shared = [row["id"] for row in DATA[prefix]
              if _normalise(row["request"]) in reference_requests]
    assert shared == []
    # no near-duplicates either: each set uses its own files and texts
    reference_values = {v.lower() for row in DATA[reference] for _, _, v in _literals(row["plan"])}
    reused = sorted({v for row in DATA[prefix] for _, _, v in _literals(row["plan"])
                     if v.lower() in reference_values})
    assert reused == []


def nearness(prefix: str, reference: str) -> list[tuple[float, str, str]]:
    """(shape cosine, sample id, nearest reference id) for every sample of ``prefix``,
    measured exactly as the planner retrieves: the bank's own ``nearest``, which embeds
    :func:`request_shape` with the bundled MiniLM (the LLM planner's few-shot examples
    come from the same call); the labelled set is read as a bank for the same measure."""
    bank = load_bank(FILES[reference])
    found = []
    for row in DATA[prefix]:
        ((example, similarity),) = bank.nearest(row["request"], k=1)
        found.append((similarity, row["id"], example.id))
    return found


@pytest.mark.parametrize(("prefix", "reference"), NEW_TO, ids=[f"{a}-vs-{b}" for a, b in NEW_TO])
def test_evaluation_set_is_new_to_the_planner(prefix: str, reference: str) -> None:
    near = sorted(((round(s, 3), i, e) for s, i, e in nearness(prefix, reference)
                   if s >= NEAR_COPY), reverse=True)
    assert near == [], (f"{len(near)} {prefix} requests have a shape cosine >= {NEAR_COPY} "
                        f"to a {reference} example (similarity, sample, nearest): {near}")


def _tasks(row: dict[str, Any]) -> set[str]:
    return {st["task"] for st in row["plan"]}


def _files_by_kind(row: dict[str, Any]) -> Counter[str]:
    return Counter(kind_of_literal(v) for v in
                   {v for _, _, v in _literals(row["plan"]) if kind_of_literal(v) != "text"})


_EMOTION_RE = re.compile(r"emotion|émotion|emoción|gefühl|情绪|feeling|mood", re.IGNORECASE)
_LANGUAGE_ID_RE = re.compile(
    r"(?:what|which) language|quelle langue|qué idioma|welche sprache|什么语言|哪种语言",
    re.IGNORECASE)
_LONG_TEXT = (1500, 6000)
"""A long pasted text, in UTF-8 bytes."""


def test_own_words_cover_what_users_ask() -> None:
    """The own-words set has several samples of each kind of request that it exists to
    measure (issue 14's "What it must show")."""
    rows = DATA["own"]
    two_files = Counter("+".join(sorted(_files_by_kind(row).elements())) for row in rows
                        if sum(_files_by_kind(row).values()) == 2)
    assert two_files["image+image"] >= 3 and two_files["audio+audio"] >= 3, two_files
    assert two_files["audio+image"] >= 2, two_files

    classified = [row for row in rows if "text-classification" in _tasks(row)]
    emotion = [row["id"] for row in classified if _EMOTION_RE.search(row["request"])]
    language = [row["id"] for row in classified if _LANGUAGE_ID_RE.search(row["request"])]
    sentiment = [row["id"] for row in classified
                 if row["id"] not in emotion and row["id"] not in language]
    assert len(sentiment) >= 3 and len(emotion) >= 3 and len(language) >= 3
    # "which language is this?" is identified, not translated
    asks_language = [row for row in rows if _LANGUAGE_ID_RE.search(row["request"])]
    assert asks_language and all("translation" not in _tasks(row) for row in asks_language)

    given_text_qa = [row["id"] for row in rows for st in row["plan"]
                     if st["task"] == "question-answering"
                     and not (_refs(st["args"]["question"]) or _refs(st["args"]["text"]))]
    assert len(given_text_qa) >= 4
    assert sum("token-classification" in _tasks(row) for row in rows) >= 4
    assert sum("zero-shot-classification" in _tasks(row) for row in rows) >= 4

    small_talk = [row for row in rows if not row["plan"]]
    assert len(small_talk) >= 5
    assert sum(_instruction_language(row["request"]) not in (None, "en")
               for row in small_talk) >= 3, "small talk in other languages too"

    long_texts = [row["id"] for row in rows
                  if any(_LONG_TEXT[0] <= len(v.encode()) <= _LONG_TEXT[1]
                         for _, _, v in _literals(row["plan"]) if kind_of_literal(v) == "text")]
    assert len(long_texts) >= 4
    assert all(len(row["request"].encode()) <= 2 * _LONG_TEXT[1] for row in rows)

    assert len(COMBINED_REFERENCES) >= 2


@pytest.mark.parametrize("language", ["fr", "es", "de", "zh"])
def test_own_words_has_requests_in_other_languages(language: str) -> None:
    """At least five requests in each language, as the project's language detector reads
    the request, over at least four task types."""
    rows = [row for row in DATA["own"] if _instruction_language(row["request"]) == language]
    assert len(rows) >= 5, [row["id"] for row in rows]
    assert len(set().union(*(_tasks(row) for row in rows))) >= 4


def test_own_words_source_languages() -> None:
    """``src_lang`` is given when the text to translate is literal in the request (its
    language is then known, and the detector agrees where it can tell), and omitted when
    the text is another step's output."""
    for row in DATA["own"]:
        for st in row["plan"]:
            if st["task"] != "translation":
                continue
            text = st["args"]["text"]
            if _refs(text):
                assert "src_lang" not in st["args"], row["id"]
            else:
                assert "src_lang" in st["args"], row["id"]
                detected = language_of(text)
                assert detected in (None, st["args"]["src_lang"]), (row["id"], detected)
                assert st["args"]["src_lang"] != st["args"].get("tgt_lang"), row["id"]
