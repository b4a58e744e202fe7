"""Several outputs in one argument: a text argument that combines ``<GENERATED>-k``
references with text ("one paragraph from <GENERATED>-0 and <GENERATED>-1").

The helpers in :mod:`hugginggpt.tools.kinds`; the validator accepting the form and naming
the wrong reference when it is not; argument resolution filling each reference in place
(labels, numbers, text held as an artifact, the length bound); whole runs through the
real graph: a plan file on the CLI with lite engines and the ``llm`` backend (the
scripted server records the prompt the combining step sent), a fixed plan whose
dependency fails (the combining step is skipped), an approval's edit, and the LLM
planner proposing such a plan; and the evaluation metrics scoring the edges and values of combined references.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from hugginggpt.cli import main
from hugginggpt.evaluation.datasets import PlanNode, parse_sample
from hugginggpt.evaluation.metrics import score_plan
from hugginggpt.graph.state import Subtask
from hugginggpt.nodes.execution.arguments import fill_text, resolve_args
from hugginggpt.nodes.execution.jobs import Job
from hugginggpt.nodes.planning.validation import MAX_ARG_CHARS, validate_plan
from hugginggpt.nodes.select import signature
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.kinds import as_text, fill_refs, generated, generated_ref, generated_refs
from tests.conftest import run

REVIEW = "I absolutely loved this little cafe: the coffee was wonderful and the staff kind."
ARTICLE = (
    "The city council met on Tuesday to discuss the new tram line. The line will connect "
    "the harbour with the university and the main station. Construction starts in spring "
    "and should take three years. The council expects forty thousand riders a day. Local "
    "shops worry about the noise during the works, and the council promised quiet hours. "
    "The mayor called the tram the most important project of the decade."
)
COMBINE = "Write one paragraph from this summary: <GENERATED>-1 and this mood: <GENERATED>-0."


def _sub(i: int, task: str, dep: list[int] | None = None, **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [], "args": args}


def _combined_plan(text: str = COMBINE) -> list[dict[str, Any]]:
    return [_sub(0, "text-classification", text=REVIEW),
            _sub(1, "summarization", text=ARTICLE),
            _sub(2, "text-generation", [0, 1], text=text)]


# ------------------------------------------------------------------------ the helpers

def test_generated_refs_lists_every_reference_once_in_order():
    assert generated_refs("from <GENERATED>-2, <GENERATED>-0 and <GENERATED>-2 again") == [2, 0]
    assert generated_refs(" <GENERATED>-7 ") == [7] and generated_ref(" <GENERATED>-7 ") == 7
    assert generated_refs("no reference, <GENERATED>- or <GENERATED>-\uff10") == []
    assert generated_ref("see <GENERATED>-1") is None  # not a whole value
    assert generated(3) == "<GENERATED>-3" and generated_refs(generated(3)) == [3]


def test_fill_refs_fills_in_place_and_never_twice():
    """An output that itself says ``<GENERATED>-1`` is inserted as text, not expanded."""
    texts = {0: "a dog says <GENERATED>-1", 1: "frisbee (0.88)"}
    filled = fill_refs("A: <GENERATED>-0. B: <GENERATED>-1. A again: <GENERATED>-0", texts.get)
    assert filled == ("A: a dog says <GENERATED>-1. B: frisbee (0.88). "
                      "A again: a dog says <GENERATED>-1")


# ---------------------------------------------------------------------- the validator

def problems(*items: dict[str, Any]) -> list[str]:
    return validate_plan(list(items), max_subtasks=10)[1]


def test_the_validator_accepts_outputs_combined_in_text_and_question_arguments():
    plan = [_sub(0, "image-to-text", image="harbour.jpg"),
            _sub(1, "object-detection", image="harbour.jpg"),
            _sub(2, "sentence-similarity", [1], text="x", text2="y"),
            _sub(3, "text-generation", [0, 1, 2],
                 text="Caption: <GENERATED>-0; objects: <GENERATED>-1; score <GENERATED>-2"),
            _sub(4, "question-answering", [0, 3],
                 question="Does '<GENERATED>-0' fit the story?", text="<GENERATED>-3")]
    assert problems(*plan) == []


@pytest.mark.parametrize(("plan", "expected"), [
    # an embedded reference that is not a dependency: the message names it
    ([_sub(0, "summarization", text="a"), _sub(1, "summarization", text="b"),
      _sub(2, "text-generation", [0], text="from <GENERATED>-0 and <GENERATED>-1")],
     ["subtask 2 (text-generation): argument 'text' embeds <GENERATED>-1 but 1 is not in "
      "its dep list [0]"]),
    # a reference to a later subtask
    ([_sub(0, "text-generation", [1], text="from <GENERATED>-1 and more"),
      _sub(1, "summarization", text="b")],
     ["subtask 0 depends on subtask 1, which comes after it"]),
    # a reference to a subtask that produces only an image, inside a text
    ([_sub(0, "summarization", text="a"), _sub(1, "text-to-image", text="a cat"),
      _sub(2, "text-generation", [0, 1], text="from <GENERATED>-0 and <GENERATED>-1")],
     ["subtask 2 (text-generation): argument 'text' embeds <GENERATED>-1, but subtask 1 "
      "(text-to-image) produces image, which has no text form to fill in"]),
    # an embedded reference in an image argument
    ([_sub(0, "text-to-image", text="a cat"),
      _sub(1, "image-classification", [0], image="the image <GENERATED>-0")],
     ['subtask 1 (image-classification): argument \'image\' needs image and embeds '
      '<GENERATED>-0 in other text; a reference to an image must be the whole value '
      '("<GENERATED>-0")']),
    # and in a parameter
    ([_sub(0, "summarization", text="a"),
      _sub(1, "zero-shot-classification", [0], text="b", labels="cat, <GENERATED>-0")],
     ["subtask 1 (zero-shot-classification): argument 'labels' is a parameter and cannot "
      "contain <GENERATED>-0"]),
])
def test_the_validator_names_the_wrong_embedded_reference(plan, expected):
    found = problems(*plan)
    for words in expected:
        assert any(words in p for p in found), found
    assert len(found) == len(expected), found  # the right references are not blamed


def test_selection_counts_a_combined_argument_as_a_reference():
    one = Subtask(id=2, task="text-generation", dep=[0, 1], args={"text": COMBINE})
    other = Subtask(id=5, task="text-generation", dep=[3], args={"text": "<GENERATED>-3"})
    literal = Subtask(id=6, task="text-generation", args={"text": "Once upon a time"})
    assert signature(one) == signature(other) == ("text-generation", (("text", "ref"),))
    assert signature(literal) != signature(one)


# ------------------------------------------------------------------ argument resolution

def _job(workspace: Path, **overrides: Any) -> Job:
    fields: dict[str, Any] = dict(
        id=3, task="text-generation", dep=[0, 1, 2], args={}, candidates=[],
        no_model_reason="", files=[], workspace=str(workspace), thread_id="t",
        board="", timeout_s=5.0, retries=0, backoff_s=0.0, latency_scale=0.0, max_models=1)
    return Job(**(fields | overrides))


def _done(task: str, outputs: dict[str, Any]) -> dict[str, Any]:
    return {"task": task, "status": "done", "outputs": outputs}


def test_each_reference_is_filled_in_with_the_text_form_of_its_output(workspace):
    store = ArtifactStore(workspace, "t")
    long_text = store.put_bytes(b"a caption held as a file", "text", ".txt")
    deps = {0: _done("image-to-text", {"text": long_text}),
            1: _done("object-detection", {
                "image": store.put_bytes(b"png", "image", ".png"),
                "objects": [{"label": "dog", "score": 0.971}, {"label": "frisbee",
                                                                "score": 0.8845}]}),
            2: _done("sentence-similarity", {"score": 0.49271})}
    job = _job(workspace, args={"text": "Caption: <GENERATED>-0. Objects: <GENERATED>-1. "
                                        "Similarity <GENERATED>-2, caption <GENERATED>-0."})
    resolved = resolve_args(job, deps, store)
    assert resolved == {"text": "Caption: a caption held as a file. Objects: dog (0.97), "
                                "frisbee (0.88). Similarity 0.493, caption a caption held "
                                "as a file."}
    # the form as_text gives a whole-value reference to a text argument, not another one
    assert as_text(deps[1]["outputs"]["objects"]) in resolved["text"]


def test_the_filled_in_text_is_held_to_the_argument_limit(workspace):
    store = ArtifactStore(workspace, "t")
    deps = {0: _done("summarization", {"text": "x" * 60}), 1: _done("summarization",
                                                                      {"text": "y" * 50})}
    value = "<GENERATED>-0 and <GENERATED>-1"
    assert len(fill_text("text", value, deps, store, max_chars=115)) == 115
    with pytest.raises(ArgumentError) as info:
        fill_text("text", value, deps, store, max_chars=114)
    assert str(info.value) == (
        "argument 'text' is 115 characters long once its references are filled in "
        "(<GENERATED>-0: 60, <GENERATED>-1: 50), over the limit of 114: summarise the long "
        "outputs first")
    # a reference repeated counts each time it is filled in, and is refused before the
    # text is built (8000 copies of 100000 characters would take 800 MB)
    many = " ".join(["<GENERATED>-0"] * 8000)
    big = {0: _done("summarization", {"text": "w" * MAX_ARG_CHARS})}
    tracemalloc.start()
    try:
        with pytest.raises(ArgumentError, match=f"is {8000 * MAX_ARG_CHARS + 7999} characters"):
            fill_text("text", many, big, store)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak
    huge = {0: _done("summarization", {"text": "z" * MAX_ARG_CHARS})}
    with pytest.raises(ArgumentError, match="over the limit of 100000"):
        resolve_args(_job(workspace, dep=[0], args={"text": "Say: <GENERATED>-0"}), huge, store)


def test_a_reference_without_a_text_output_is_refused_in_words(workspace):
    store = ArtifactStore(workspace, "t")
    deps = {0: _done("text-to-image", {"image": store.put_bytes(b"png", "image", ".png")})}
    with pytest.raises(ArgumentError, match="subtask 0 produced no output with a text form"):
        resolve_args(_job(workspace, dep=[0], args={"text": "see <GENERATED>-0"}), deps, store)
    with pytest.raises(ArgumentError, match="subtask 4, which is not among this subtask's"):
        resolve_args(_job(workspace, dep=[0], args={"text": "see <GENERATED>-4"}), deps, store)
    with pytest.raises(ArgumentError, match="only a text argument can"):
        resolve_args(_job(workspace, task="image-classification", dep=[0],
                          args={"image": "see <GENERATED>-0"}), deps, store)


# ------------------------------------------------------------------ through the graph

def test_a_plan_file_combining_two_outputs_runs_and_fills_both_in_place(
        capsys, workspace, tmp_path, llm_server):
    """Sentiment and summary on lite engines; the combining step on the ``llm`` backend,
    whose prompt (recorded by the scripted server) carries both outputs where they stood."""
    llm_server.script("expert", {"content": "A cheerful paragraph about trams and coffee."})
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"subtasks": _combined_plan()}), encoding="utf-8")
    code = main(["run", "mood and summary, then one paragraph", "--plan", str(plan_file),
                 "--backend", "lite,llm", "--llm", "scripted-model", "--llm-base-url",
                 llm_server.url, "--workspace", str(workspace), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "completed", doc["results"]
    results = doc["results"]
    assert [results[k]["backend"] for k in ("0", "1", "2")] == ["lite", "lite", "llm"]
    mood = as_text(results["0"]["outputs"]["labels"])
    summary = results["1"]["outputs"]["text"]
    assert mood.startswith("POSITIVE (") and summary.startswith("The city council met")
    (asked,) = llm_server.calls("expert")
    prompt = asked["messages"][-1]["content"]
    assert f"Write one paragraph from this summary: {summary} and this mood: {mood}." in prompt
    assert "<GENERATED>" not in prompt
    assert results["2"]["outputs"]["text"] == "A cheerful paragraph about trams and coffee."


def test_a_failed_dependency_skips_the_combining_step(compiled, make_context):
    faults = {"script": {"1": ["permanent"]}}
    out = run(compiled, make_context(plan=_combined_plan(), backend="dry-run", offline=True,
                                     dry_run_faults=faults, subtask_retries=0,
                                     max_models_per_subtask=1))
    results = out["results"]
    assert results[0].status == "done" and results[1].status == "failed"
    assert results[2].status == "skipped" and results[2].attempts == 0
    assert results[2].error.startswith("skipped: dependency 1 (summarization) failed")
    assert out["status"] == "partial"


def test_the_llm_planner_may_propose_a_combining_plan(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": _combined_plan(
        "Mood <GENERATED>-0, summary <GENERATED>-1: one paragraph please")}})
    llm_server.script("expert", {"content": "One paragraph."})
    out = run(compiled, make_context(backend="lite,llm", few_shot=0),
              f'How does "{REVIEW}" feel, what does "{ARTICLE}" say, and one paragraph of both')
    assert out["planner"] != "fixed plan" and len(llm_server.calls("planner")) == 1
    assert [(s.id, s.dep) for s in out["plan"]] == [(0, []), (1, []), (2, [0, 1])]
    assert out["status"] == "completed", out["results"]
    prompt = llm_server.calls("expert")[0]["messages"][-1]["content"]
    mood, summary = as_text(out["results"][0].outputs["labels"]), out["results"][1].outputs["text"]
    assert f"Mood {mood}, summary {summary}: one paragraph please" in prompt


def test_an_approval_edit_may_combine_outputs_and_is_shown_back_when_wrong(compiled,
                                                                           make_context):
    context = make_context(plan=_combined_plan()[:2], backend="dry-run", offline=True,
                           approval="plan")
    config = {"configurable": {"thread_id": "edit"}}
    compiled.invoke({"request": "mood, summary, then both"}, config, context=context)
    wrong = [*_combined_plan()[:2], _sub(2, "text-generation", [0], text=COMBINE)]
    compiled.invoke(Command(resume={"action": "edit", "plan": wrong, "who": "ana"}), config,
                    context=context)
    (pending,) = compiled.get_state(config).interrupts
    assert pending.value["problems"] == [
        "subtask 2 (text-generation): argument 'text' embeds <GENERATED>-1 but 1 is not in "
        "its dep list [0]"]
    out = compiled.invoke(Command(resume={"action": "edit", "plan": _combined_plan(),
                                          "who": "ana"}), config, context=context)
    assert out["status"] == "completed"
    assert [s.dep for s in out["plan"]] == [[], [], [0, 1]]


# --------------------------------------------------------------------------- evaluation

def _nodes(plan: list[dict[str, Any]]) -> list[PlanNode]:
    return [PlanNode.from_subtask(Subtask.model_validate(item)) for item in plan]


def test_the_metrics_count_the_edges_and_values_of_combined_references():
    gold = _nodes(_combined_plan())
    renumbered = _nodes([_sub(0, "summarization", text=ARTICLE),
                         _sub(1, "text-classification", text=REVIEW),
                         _sub(2, "text-generation", [0, 1], text=COMBINE.replace(
                             "-1", "-9").replace("-0", "-1").replace("-9", "-0"))])
    score = score_plan(gold, renumbered)
    assert (score.edge.tp, score.edge.fp, score.edge.fn) == (2, 0, 0)
    assert (score.arg_value.tp, score.arg_value.fp, score.arg_value.fn) == (3, 0, 0)
    # one of the two combined outputs left out: an edge and the value are missed
    half = _nodes([*_combined_plan()[:2], _sub(2, "text-generation", [1],
                                               text="from <GENERATED>-1")])
    score = score_plan(gold, half)
    assert (score.edge.tp, score.edge.fn) == (1, 1)
    assert (score.arg_value.tp, score.arg_value.fn) == (2, 1)


def test_a_taskbench_argument_naming_two_nodes_gives_two_edges():
    sample = parse_sample({"id": "tb", "user_request": "caption, detect, combine",
                           "task_nodes": [
                               {"task": "Image-to-Text", "arguments": ["a.jpg"]},
                               {"task": "Object Detection", "arguments": ["a.jpg"]},
                               {"task": "Text Generation",
                                "arguments": ["from <node-0> and <node-1>"]}],
                           "task_links": []})
    assert sample.gold[2].dep == (0, 1)
    assert sample.gold[2].args == ((None, "from <GENERATED>-0 and <GENERATED>-1"),)
    assert score_plan(sample.gold, sample.gold).edge.tp == 2
