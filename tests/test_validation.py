"""The plan validator and parser, directly: every rule, with the wording the LLM sees."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hugginggpt.nodes.planning.validation import PlanParseError, parse_plan_text, validate_plan
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from hugginggpt.tools.kinds import generated_ref, kind_of_literal
from tests.test_properties import valid_plans

TASKBENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "taskbench-huggingface"


def problems(*items: dict, max_subtasks: int = 10) -> list[str]:
    return validate_plan(list(items), max_subtasks=max_subtasks)[1]


def test_valid_chain_is_normalised():
    subtasks, errs = validate_plan([
        {"id": 0, "task": "ASR", "dep": [-1], "args": {"audio": "talk.wav"}},
        {"id": 1, "task": "Summarization", "dep": 0, "args": {"text": "<GENERATED>-0"}},
    ], max_subtasks=5)
    assert errs == []
    assert [s.task for s in subtasks] == ["automatic-speech-recognition", "summarization"]
    assert subtasks[0].dep == [] and subtasks[1].dep == [0]


@pytest.mark.parametrize(("items", "expected"), [
    ([{"id": 0, "task": "summarization", "args": {"text": "a"}},
      {"id": 0, "task": "summarization", "args": {"text": "b"}}], "used twice"),
    ([{"id": 0, "task": "summarization", "dep": [1], "args": {"text": "<GENERATED>-1"}},
      {"id": 1, "task": "summarization", "args": {"text": "b"}}], "comes after it"),
    ([{"id": 0, "task": "summarization", "dep": [0], "args": {"text": "a"}}], "cycle: 0 -> 0"),
    ([{"id": 0, "task": "summarization", "args": {"text": "<GENERATED>-3"}}],
     "not in its dep list"),
    ([{"id": 0, "task": "summarization", "args": {"text": "a"}},
      {"id": 1, "task": "translation", "dep": [0],
       "args": {"text": "x", "tgt_lang": "<GENERATED>-0"}}], "is a parameter"),
    ([{"id": 0, "task": "text-to-image", "args": {"text": "a"}},
      {"id": 1, "task": "image-classification", "dep": [0],
       "args": {"image": "see <GENERATED>-0"}}], "must be the whole value"),
    ([{"id": 0, "task": "summarization", "args": {"txt": "a"}}], "unknown argument 'txt'"),
    ([{"id": 0, "task": "summarization", "args": {}}], "missing required argument 'text'"),
    ([{"id": 0, "task": "text-to-speech", "args": {"text": "voice.wav"}}],
     "needs text, but 'voice.wav' is an audio file"),
    ([{"id": -2, "task": "summarization", "args": {"text": "a"}}], "greater than or equal"),
    (["summarize it"], "is not an object"),
    ([{"id": 0, "task": "summarization", "args": {"text": "a"}}] * 3, "at most 2"),
])
def test_each_rule_reports_a_problem(items, expected):
    found = problems(*items, max_subtasks=2)
    assert any(expected in p for p in found), found


def test_kind_of_literal():
    assert kind_of_literal("photo.JPG") == "image"
    assert kind_of_literal("https://example.com/a/b.wav?x=1") == "audio"
    assert kind_of_literal("a sentence that ends with cat.png") == "text"
    assert kind_of_literal("report.txt") == "text"


@pytest.mark.parametrize("text", [
    '[{"id": 0, "task": "summarization", "dep": [], "args": {"text": "a"}}]',
    'Plan:\n```json\n{"subtasks": [{"id": 0, "task": "summarization", "args": {"text": "a"}}]}\n```',
    'Here you go {"tasks": [{"id": 0, "task": "summarization", "args": {"text": "a"}}]} bye',
    '{"id": 0, "task": "summarization", "args": {"text": "a"}}',
])
def test_parser_finds_plans_in_prose_and_fences(text):
    assert parse_plan_text(text)[0]["task"] == "summarization"


@pytest.mark.parametrize("text", ["", "no json here", '{"answer": 42}', "[1, 2"])
def test_parser_rejects_non_plans(text):
    with pytest.raises(PlanParseError):
        parse_plan_text(text)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12,
)
_subtask = st.fixed_dictionaries({
    "id": st.integers(-1, 6) | st.text(max_size=3),
    "task": st.sampled_from([t.name for t in task_types()] + ["nope", ""]) | _json,
    "dep": st.lists(st.integers(-1, 6), max_size=3) | _json,
    "args": st.dictionaries(
        st.sampled_from(["text", "text2", "image", "audio", "tgt_lang", "labels", "x"]),
        st.sampled_from(["<GENERATED>-0", "<GENERATED>-2", "a.png", "b.wav", "hi"]) | _json,
        max_size=3),
})


def test_validator_never_raises_and_valid_plans_are_sound():
    """Random items (mostly invalid) and generated valid DAGs: the validator never raises,
    and what it accepts is sound. The soundness branch is counted, so it cannot go
    unexercised (on random items alone it ran on no plan at all)."""
    sound: list[int] = []

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_subtask | _json, max_size=8) | valid_plans(max_size=6))
    def check(items):
        subtasks, errs = validate_plan(items, max_subtasks=6)
        if errs:
            return
        seen: set[int] = set()
        for s in subtasks:
            assert get_task_type(s.task) is not None
            assert set(s.dep) <= seen  # dependencies precede: a DAG in list order
            refs = {generated_ref(v) for v in s.args.values()} - {None}
            assert refs <= set(s.dep)  # an output is used only by a declared dependent
            seen.add(s.id)
        if subtasks:
            sound.append(len(subtasks))

    check()
    assert len(sound) >= 50, f"soundness checked on only {len(sound)} non-empty plans"
    assert max(sound) >= 3  # chains and DAGs, not only single steps


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parser_raises_only_plan_parse_errors(text):
    with contextlib.suppress(PlanParseError):  # the documented outcome for text without a plan
        parse_plan_text(text)


def _taskbench_tools() -> list[dict]:
    path = TASKBENCH / "tool_desc.json"
    if not path.is_file():
        pytest.skip(f"TaskBench data not found at {path} (it lives in ../shared)")
    return json.loads(path.read_text())["nodes"]


# Where this project deliberately differs from TaskBench, and why.
TASKBENCH_DEVIATIONS = {
    # TaskBench, like HuggingGPT, passes a table as a picture of it; a table is a CSV here.
    "tabular-classification": "table",
}


def test_task_types_agree_with_taskbench_on_input_kinds():
    checked = 0
    for node in _taskbench_tools():
        slug = node["id"].lower().replace(" ", "-")
        ours = get_task_type(slug)
        assert ours is not None, f"TaskBench tool {node['id']!r} has no task type here"
        data_inputs = sorted(str(a.kind) for a in ours.args if a.is_data and a.required)
        if slug in TASKBENCH_DEVIATIONS:
            assert data_inputs == [TASKBENCH_DEVIATIONS[slug]]
        elif ours.name == slug:  # an alias (image-editing) may take an optional argument
            assert data_inputs == sorted(node["input-type"]), node["id"]
        checked += 1
    assert checked == 23
