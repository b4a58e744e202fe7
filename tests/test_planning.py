"""Planning through the real ChatOpenAI client against a local scripted server:
valid DAGs, malformed replies repaired or cleanly aborted, never an exception."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run

PARALLEL_PLAN = {"subtasks": [
    {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a red bicycle"}},
    {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
    {"id": 2, "task": "object-detection", "dep": [0], "args": {"image": "<GENERATED>-0"}},
    {"id": 3, "task": "translation", "dep": [1], "args": {"text": "<GENERATED>-1", "tgt_lang": "fr"}},
    {"id": 4, "task": "summarization", "dep": [], "args": {"text": "A long story about bikes."}},
]}
VALID = {"subtasks": [
    {"id": 0, "task": "summarization", "dep": [-1], "args": {"text": "Some long text."}},
    {"id": 1, "task": "translation", "dep": [0], "args": {"text": "<GENERATED>-0", "tgt_lang": "de"}},
]}


def test_valid_dag_with_parallel_branches_runs_end_to_end(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": PARALLEL_PLAN})
    llm_server.script("responder", {"content": "Your bicycle picture, captioned in French."})
    out = run(compiled, make_context(backend="dry-run"), "draw a bike, caption it in French")

    assert out["status"] == "completed"
    assert [s.task for s in out["plan"]] == [s["task"] for s in PARALLEL_PLAN["subtasks"]]
    assert {r.status for r in out["results"].values()} == {"done"}
    assert out["response"] == "Your bicycle picture, captioned in French."
    assert len(llm_server.calls("planner")) == 1
    # the request went through the tool-calling path with the plan schema
    assert llm_server.calls("planner")[0]["tools"][0]["function"]["name"] == "PlanReply"
    # the responder saw references and text, not bytes
    digest = llm_server.calls("responder")[0]["messages"][-1]["content"]
    # (where the caller finds it: an absolute path in-process, issue 25)
    assert re.search(r"image file /\S+/artifacts/", digest) and "PNG" not in digest
    # branches 1 and 2 both consumed the image of subtask 0 and ran after it
    image = out["results"][0].outputs["image"]
    assert image["kind"] == "image" and image["path"].endswith(".png")


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"content": "I think you should caption the image first."}, "no JSON"),
        ({"content": "Sure! Here is the plan: " + json.dumps(VALID) + " Hope it helps."}, None),
        ({"content": "```json\n" + json.dumps(VALID["subtasks"]) + "\n```"}, None),
        ({"tool_args": {"subtasks": [{"id": 0, "task": "paint-a-picture", "dep": [],
                                      "args": {"text": "x"}}]}}, "unknown task type"),
        ({"tool_args": {"subtasks": [
            {"id": 0, "task": "summarization", "dep": [1], "args": {"text": "<GENERATED>-1"}},
            {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
        ]}}, "cycle"),
        ({"tool_args": {"subtasks": [
            {"id": 0, "task": "summarization", "dep": [7], "args": {"text": "<GENERATED>-7"}},
        ]}}, "does not exist"),
        ({"tool_args": {"subtasks": [
            {"id": 0, "task": "summarization", "dep": [], "args": {"text": "x"}},
            {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
        ]}}, "needs image"),
        ({"tool_args": {"subtasks": [
            {"id": i, "task": "summarization", "dep": [], "args": {"text": "x"}}
            for i in range(12)
        ]}}, "at most 10"),
        ({"tool_args": '{"subtasks": [{"id": 0, "task": '}, "no JSON"),
    ],
    ids=["prose", "json-in-prose", "code-fence", "unknown-task", "cycle", "missing-dep",
         "wrong-arg-kind", "too-many", "truncated-tool-call"],
)
def test_malformed_plans_are_repaired(compiled, make_context, llm_server, reply, problem):
    llm_server.script("planner", reply, {"tool_args": VALID})
    out = run(compiled, make_context(backend="dry-run"))

    assert out["status"] == "completed"
    assert [s.task for s in out["plan"]] == ["summarization", "translation"]
    planner_calls = llm_server.calls("planner")
    if problem is None:  # parsed from prose or fence on the first try
        assert len(planner_calls) == 1
    else:  # the second request carried the problems back to the LLM
        assert len(planner_calls) == 2
        repair = planner_calls[1]["messages"][-1]["content"]
        assert "rejected" in repair and problem in repair


def test_plan_that_stays_invalid_aborts_cleanly(compiled, make_context, llm_server):
    bad = {"tool_args": {"subtasks": [{"id": 0, "task": "teleportation", "dep": [], "args": {}}]}}
    llm_server.script("planner", bad, bad, bad)
    out = run(compiled, make_context(max_plan_retries=2))

    assert out["status"] == "aborted"
    assert len(llm_server.calls("planner")) == 3
    assert "no valid plan in 3 attempts" in out["abort_reason"]
    assert "teleportation" in out["abort_reason"]
    assert out["response"].startswith("The run was aborted")
    assert out["results"] == {}


def test_empty_plan_answers_directly(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": []}})
    llm_server.script("responder", {"content": "Hello! How can I help?"})
    out = run(compiled, make_context(), "hello there")
    assert out["status"] == "completed"
    assert out["plan"] == [] and out["results"] == {}
    assert out["response"] == "Hello! How can I help?"
    assert "No expert subtasks" in llm_server.calls("responder")[0]["messages"][-1]["content"]


def test_json_mode_endpoint_without_tool_calling(compiled, make_context, llm_server):
    llm_server.script("planner", {"content": json.dumps(VALID)})
    out = run(compiled, make_context(backend="dry-run", structured_output="json_mode"))
    assert out["status"] == "completed"
    assert llm_server.calls("planner")[0]["response_format"] == {"type": "json_object"}


def test_unreachable_planner_aborts_with_advice(compiled, make_context):
    # planner="llm": with "auto" the offline planner stands in (tests/test_planner_fallback.py)
    out = run(compiled, make_context(llm_base_url="http://127.0.0.1:9/v1", llm_timeout_s=2,
                                     planner="llm"))
    assert out["status"] == "aborted"
    assert "planner failed" in out["abort_reason"]
    assert "llm_base_url=" in out["abort_reason"]  # said for the caller: the graph in Python


def test_planner_http_500_aborts(compiled, make_context, llm_server):
    llm_server.script("planner", {"status": 500})
    out = run(compiled, make_context(planner="llm"))
    assert out["status"] == "aborted"
    assert "answered HTTP 500" in out["abort_reason"]


def test_no_llm_configured_aborts_with_instructions(compiled, workspace):
    from hugginggpt.graph.context import Context

    out = run(compiled, Context(workspace=str(workspace)), "Do it to clip.mp4")
    assert out["status"] == "aborted"  # nothing the offline planner can do with a video
    assert "No LLM is configured" in out["abort_reason"]
    assert "OPENAI_API_KEY" in out["abort_reason"]
    assert 'backend="dry-run" and plan="PLAN.json"' in out["abort_reason"]  # said for Python


def test_second_request_on_a_thread_starts_clean(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": PARALLEL_PLAN}, {"tool_args": VALID})
    context = make_context(backend="dry-run")
    first = run(compiled, context, "first", thread="multi")
    second = run(compiled, context, "second", thread="multi")
    assert len(first["results"]) == 5
    assert sorted(second["results"]) == [0, 1]
    assert second["results"][1].task == "translation"
    # the second planning request saw the first turn as history
    assert "first" in llm_server.calls("planner")[1]["messages"][1]["content"]


def test_hugging_face_endpoint_through_langchain_huggingface(
    compiled, make_context, llm_server, monkeypatch
):
    """``hf:URL`` goes through ChatHuggingFace and huggingface_hub's client."""
    # HF_HUB_OFFLINE blocks even calls to a local endpoint; huggingface_hub reads it on import
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    llm_server.script("planner", {"tool_args": VALID})
    llm_server.script("responder", {"content": "Summarised and translated."})
    endpoint = llm_server.url.removesuffix("/v1")
    out = run(compiled, make_context(llm=f"hf:{endpoint}", llm_base_url=None, backend="dry-run"))
    assert out["status"] == "completed", out["abort_reason"]
    assert out["response"] == "Summarised and translated."
    assert out["planner"] == f"llm: hf:{endpoint}"
    assert llm_server.calls("planner")[0]["tools"][0]["function"]["name"] == "PlanReply"


def test_planner_that_hangs_is_cut_off_by_the_llm_timeout(compiled, make_context, llm_server):
    llm_server.script("planner", {"delay": 5, "tool_args": VALID})
    out = run(compiled, make_context(llm_timeout_s=0.5, planner="llm"))
    assert out["status"] == "aborted"
    assert "did not answer within 0.5 s" in out["abort_reason"]


def test_every_llm_call_is_accounted(compiled, make_context, llm_server):
    bad = {"tool_args": {"subtasks": [{"id": 0, "task": "teleportation", "dep": [], "args": {}}]}}
    llm_server.script("planner", bad, {"tool_args": VALID})
    llm_server.script("responder", {"status": 500})
    out = run(compiled, make_context(backend="dry-run"))
    calls = out["llm_calls"]
    assert [(c.role, c.ok) for c in calls] == [
        ("planner", True), ("planner", True), ("responder", False)]
    assert all(c.prompt_tokens == 10 and c.completion_tokens == 5 for c in calls[:2])
    assert calls[0].llm == f"scripted-model @ {llm_server.url}"
    assert "InternalServerError" in calls[2].error or "500" in calls[2].error
    assert out["responder"] == "template (responder LLM failed)"

    from hugginggpt.tools.llm.records import usage_totals

    totals = usage_totals(calls)
    assert totals | {"latency_s": 0} == {"calls": 3, "by_role": {"planner": 2, "responder": 1},
                                         "by_endpoint": {calls[0].llm: 3},
                                         "failed": 1, "prompt_tokens": 20,
                                         "completion_tokens": 10, "cost": 0.0,
                                         "latency_s": 0}
