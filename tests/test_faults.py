"""Fault injection. Tools: every fault a simulated expert can inject (tools/faults.py),
alone and combined, through ``invoke`` and ``ainvoke``, ends in an explained outcome (the
run completed, partial or failed as its results say; each subtask done, or failed/skipped
with its reason), never an exception
that escapes and never a thread or task left behind. LLM endpoints: faults of the
scripted server (HTTP errors, a reply slower than the timeout, empty or malformed plans)
end the run completed or aborted with the failure told in ``abort_reason``/``response``.
The LLM side is exercised only through the public interface (Context's LLM fields and
the server's ``script``)."""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from hugginggpt import build_graph
from hugginggpt.graph.checkpoint import serializer
from hugginggpt.nodes.responding.advice import said
from hugginggpt.tools.experts import get_task_type, is_artifact_ref
from hugginggpt.tools.experts.dry_run import _png
from hugginggpt.tools.experts.faults import FAULT_KINDS, FaultSpec
from hugginggpt.tools.threads import TOOL_POOL
from tests.conftest import run


def _sub(i: int, task: str, dep: list[int] | None = None, **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [], "args": args}


PLAN = [
    _sub(0, "summarization", text="A long report about experts and faults."),
    _sub(1, "text-to-speech", [0], text="<GENERATED>-0"),
    _sub(2, "object-detection", image="photo.png"),
    _sub(3, "feature-extraction", text="an embedding, please"),
    _sub(4, "sentence-similarity", text="a cat", text2="a kitten"),
    _sub(5, "text-classification", [0], text="<GENERATED>-0"),
]
"""Every output kind a simulated expert returns: text, audio, image and labels, vector,
number, labels; two dependents of subtask 0."""

EXPLANATIONS = {
    "transient": r"TransientToolError: injected transient fault",
    "permanent": r"ToolExecutionError: injected permanent fault",
    "crash": r"RuntimeError: raised with no message: the tool gave no reason, which is a "
             r"bug in the tool or in the model's code",
    "hang": r"ToolTimeoutError: no result within 0.2s; the call was abandoned",
    "block": r"ToolTimeoutError: no result within 0.2s; the call was abandoned",
    "empty": r"ToolOutputError: [a-z-]+ (returned no output|output '\w+': expected .*got nothing)",
    "malformed": r"ToolOutputError: [a-z-]+ output '\w+': ",
    "wrong_type": r"ToolOutputError: [a-z-]+ output '\w+': expected ",
    "missing_file": r"ToolOutputError: [a-z-]+ output '\w+': the \w+ artifact it names is "
                    r"unusable: artifact '0+' is missing",
}
"""What the error of a subtask says when every call of it got the fault."""


@pytest.fixture
def photo(workspace: Path) -> None:
    (workspace / "photo.png").write_bytes(_png())


def _context(make_context: Any, faults: dict[str, Any] | None, **overrides: Any) -> Any:
    settings = {"plan": PLAN, "backend": "dry-run", "offline": True, "subtask_timeout_s": 0.2,
                "subtask_retries": 1, "max_models_per_subtask": 2, "dry_run_faults": faults}
    return make_context(**(settings | overrides))


def _invoke(compiled: Any, context: Any, path: str, thread: str = "t") -> dict[str, Any]:
    if path == "invoke":
        return run(compiled, context, thread=thread)
    return asyncio.run(compiled.ainvoke({"request": "do it"},
                                        {"configurable": {"thread_id": thread}},
                                        context=context))


def assert_output_kinds(result: Any, workspace: Path) -> None:
    """A done result's outputs are what its task type declares, checked here on their own
    (not by the executor's validation): text, labels, a number, or a reference to a
    non-empty file of the right kind inside the workspace."""
    task_type = get_task_type(result.task)
    assert task_type is not None
    assert set(result.outputs) == {o.name for o in task_type.outputs}, result.outputs
    for output in task_type.outputs:
        value = result.outputs[output.name]
        if is_artifact_ref(value):
            assert value["kind"] == output.kind, (output, value)
            path = (workspace / value["path"]).resolve()
            assert path.is_relative_to(workspace.resolve()) and path.stat().st_size > 0
        elif output.kind == "text":
            assert isinstance(value, str), value
        elif output.kind == "number":
            assert isinstance(value, float) and math.isfinite(value), value
        elif output.kind == "labels":
            assert isinstance(value, list), value
            assert all(isinstance(item, dict) and isinstance(item.get("label"), str)
                       for item in value), value
        else:
            raise AssertionError(f"{output.name}: {value!r} is not {output.kind}")


def _told(error: str) -> str:
    """What the answer says of a subtask's error (issue 14: in words): a skipped one, the
    step it waited for; a failed one, its message without the exception type and the
    models tried, from its start (the fix is a field, said apart: issue 25)."""
    if found := re.match(r"skipped: dependency (\d+) \([^)]*\) (\w+)", error):
        return f"was skipped because step {int(found.group(1)) + 1} {found.group(2)}"
    core = re.sub(r"\s*\[tried: [^\]]*\]\s*$", "", error.removeprefix("not run: "))
    core = re.sub(r"^[A-Z]\w*(?:Error|Exception|Timeout): ", "", core)
    return " ".join(core.split())[:200]


def assert_explained(out: dict[str, Any], workspace: Path,
                     plan: list[dict[str, Any]] = PLAN) -> None:
    """The run ended with the status its results give (was: always "completed"; issue
    12), every subtask has a result, every failure a reason, and every success the
    outputs its task type declares."""
    assert sorted(out["results"]) == [s["id"] for s in plan]
    done = sum(r.status == "done" for r in out["results"].values())
    expected = "completed" if done == len(plan) else "partial" if done else "failed"
    assert out["status"] == expected, out.get("abort_reason")
    for result in out["results"].values():
        assert result.status in ("done", "failed", "skipped")
        if result.status != "done":
            assert result.error and len(result.error) > 20, result
            assert _told(result.error) in out["response"]  # the answer tells it
        else:
            assert result.error is None
            assert_output_kinds(result, workspace)


# ------------------------------------------------------------------------- each fault alone


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_every_call_faulty_ends_explained(compiled, make_context, photo, workspace, kind,
                                          path):
    faults = {"rates": {kind: 1.0}, "hang_s": 1.0}
    out = _invoke(compiled, _context(make_context, faults), path)
    # hangs are cut at the subtask timeout (0.2 s), never waited out: every attempt ended
    # before the injected hang would have (a bound on the attempts, not on the machine)
    attempts = [a for r in out["results"].values() for a in r.attempt_log]
    assert attempts and all(a.latency_s < faults["hang_s"] for a in attempts), attempts

    assert_explained(out, workspace)
    results = out["results"]
    for i in (0, 2, 3, 4):
        result = results[i]
        assert result.status == "failed"
        assert re.match(EXPLANATIONS[kind], result.error), result.error
        assert "[tried: " in result.error  # which models, and how each failed
        transient = kind in ("transient", "hang", "block")
        assert result.attempts == (4 if transient else 2)  # retried only when transient
        assert len({a.model for a in result.attempt_log}) == 2  # then the fallback model
        assert not any(a.ok for a in result.attempt_log)
        assert all(a.error and a.error_type for a in result.attempt_log)
    for i in (1, 5):  # never run on the output that did not come
        assert results[i].status == "skipped"
        assert results[i].error.startswith("skipped: dependency 0 (summarization) failed")
        assert results[i].attempts == 0


def test_scripted_faults_recover_by_retry_and_fallback(compiled, make_context, photo,
                                                      workspace):
    faults = {"script": {"0": ["transient", "ok"], "2": ["wrong_type"], "3": ["hang"],
                         "4": ["missing_file", "malformed"]}, "hang_s": 1.0}
    out = run(compiled, _context(make_context, faults, subtask_retries=2,
                                 max_models_per_subtask=3))
    assert_explained(out, workspace)
    results = out["results"]
    assert all(r.status == "done" for r in results.values())
    # subtask 0: a transient error, retried on the same model
    assert [(a.ok, a.error_type) for a in results[0].attempt_log] == [
        (False, "TransientToolError"), (True, None)]
    assert results[0].model == out["selections"][0].model
    # subtask 2: a wrongly typed output is not retried, the fallback model produced it
    assert [(a.ok, a.error_type) for a in results[2].attempt_log] == [
        (False, "ToolOutputError"), (True, None)]
    assert results[2].model == out["selections"][2].candidates[1].model
    assert results[2].outputs["image"]["kind"] == "image"
    # subtask 3: a hang is a timeout, retried (transient)
    assert [(a.ok, a.error_type) for a in results[3].attempt_log] == [
        (False, "ToolTimeoutError"), (True, None)]
    # subtask 4: a bad output from each of two models, the third candidate produced it
    assert [a.error_type for a in results[4].attempt_log] == [
        "ToolOutputError", "ToolOutputError", None]
    assert len({a.model for a in results[4].attempt_log}) == 3


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
def test_hangs_end_at_the_run_time_limit(compiled, make_context, photo, workspace, path):
    faults = {"rates": {"hang": 0.5, "block": 0.5}, "hang_s": 3.0}
    started = time.monotonic()
    out = _invoke(compiled, _context(make_context, faults, subtask_timeout_s=30,
                                     max_run_s=0.5), path)
    assert time.monotonic() - started < 3
    assert_explained(out, workspace)
    for i in (0, 2, 3, 4):
        assert out["results"][i].status == "failed"
        assert "the run's time limit was reached while" in out["results"][i].error
        assert "max_run_s=0.5 s" in out["results"][i].error


def test_an_invalid_fault_spec_is_refused_as_it_enters(
    compiled, make_context, photo, workspace
):
    from hugginggpt.graph.context import SettingsError

    with pytest.raises(SettingsError) as refused:  # as it enters (issue 12), before any run
        _context(make_context, {"rates": {"explode": 1.0}})
    assert "unknown fault kinds ['explode']" in str(refused.value)
    with pytest.raises(ValueError, match="at most 1"):
        FaultSpec.parse({"rates": {"hang": 0.7, "crash": 0.7}})


# ------------------------------------------------------------------ faults combined, at random


def _threads_outside_the_pool() -> int:
    return sum(not t.name.startswith("tool") for t in threading.enumerate())


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
def test_random_faults_combined_over_many_runs(make_context, photo, workspace, path):
    rates = dict.fromkeys(FAULT_KINDS, 0.07)  # 63% of calls faulty
    faults = {"rates": rates, "seed": 11, "hang_s": 0.4}
    context = _context(make_context, faults, retry_backoff_s=0.001)
    _invoke(build_graph(checkpointer=InMemorySaver(serde=serializer())), context, path, "warm")
    before = _threads_outside_the_pool()
    outcomes = []
    for i in range(16):
        graph = build_graph(checkpointer=InMemorySaver(serde=serializer()))
        out = _invoke(graph, context, path, thread=f"run-{i}")
        assert_explained(out, workspace)
        outcomes.append(tuple(r.status for r in out["results"].values()))
    statuses = {status for outcome in outcomes for status in outcome}
    assert statuses == {"done", "failed", "skipped"}  # the mix really was mixed
    # threads: the pool is bounded, and nothing else piles up
    assert threading.active_count() <= before + TOOL_POOL._max_workers
    assert _threads_outside_the_pool() <= before + 1
    # with a seed, a run's faults depend only on (seed, thread, subtask, call): replayable
    graph = build_graph(checkpointer=InMemorySaver(serde=serializer()))
    again = _invoke(graph, context, path, thread="run-3")
    assert tuple(r.status for r in again["results"].values()) == outcomes[3]


def test_no_task_is_left_pending_on_the_event_loop(make_context, photo, workspace):
    faults = {"rates": {"hang": 0.4, "block": 0.2, "transient": 0.2}, "seed": 5,
              "hang_s": 0.6}
    context = _context(make_context, faults)

    async def many() -> set[asyncio.Task[Any]]:
        for i in range(6):
            graph = build_graph(checkpointer=InMemorySaver(serde=serializer()))
            out = await graph.ainvoke({"request": "x"}, {"configurable": {"thread_id": str(i)}},
                                      context=context)
            assert_explained(out, workspace)
        return asyncio.all_tasks() - {asyncio.current_task()}

    assert asyncio.run(many()) == set()


# ------------------------------------------------------------------------- LLM endpoint faults


def _plan_reply(*subtasks: dict[str, Any]) -> dict[str, Any]:
    return {"tool_args": {"subtasks": list(subtasks)}}


ONE_STEP = _sub(0, "summarization", text="A long text to shorten.")


def _llm_context(make_context: Any, **overrides: Any) -> Any:
    # planner="llm": with "auto" a failing planner LLM falls back to the offline planner
    return make_context(**({"backend": "dry-run", "max_plan_retries": 1, "planner": "llm"}
                           | overrides))


@pytest.mark.parametrize("status", [500, 503, 429])
def test_planner_http_error_aborts_with_the_status(compiled, make_context, llm_server, status):
    llm_server.script("planner", {"status": status})
    out = run(compiled, _llm_context(make_context))
    assert out["status"] == "aborted"
    assert str(status) in out["abort_reason"] and "planner" in out["abort_reason"]
    assert out["abort_reason"] in out["response"]
    assert out["results"] == {}


def test_planner_rate_limit_is_retried_by_the_client(compiled, make_context, llm_server):
    llm_server.script("planner", {"status": 429}, _plan_reply(ONE_STEP))
    out = run(compiled, _llm_context(make_context, llm_max_retries=1))
    assert out["status"] == "completed"
    assert out["results"][0].status == "done"
    assert len(llm_server.calls("planner")) == 2


def test_planner_slower_than_the_timeout_aborts(compiled, make_context, llm_server):
    llm_server.script("planner", {"delay": 2.0, **_plan_reply(ONE_STEP)})
    started = time.monotonic()
    out = run(compiled, _llm_context(make_context, llm_timeout_s=0.5))
    assert time.monotonic() - started < 2.0  # it did not wait for the reply
    assert out["status"] == "aborted"
    assert "planner" in out["abort_reason"]
    assert re.search(r"time", out["abort_reason"], re.I), out["abort_reason"]


@pytest.mark.parametrize("reply", [
    {"content": ""},
    {"content": "Sure! Here is the plan: {subtasks: [summarise it]"},
    {"tool_args": "{\"subtasks\": [{\"id\": 0, \"task\": "},
    {"tool_args": {"steps": "summarise, then translate"}},
    {"tool_args": {"subtasks": [{"id": "zero", "task": 5, "args": "text"}]}},
    {"tool_args": {"subtasks": [_sub(0, "painting", text="a cat")]}},
], ids=["empty", "malformed-json", "truncated-json", "wrong-schema", "wrong-types",
        "unknown-task"])
def test_unusable_plans_abort_with_the_problems(compiled, make_context, llm_server, reply):
    llm_server.script("planner", reply, reply)
    out = run(compiled, _llm_context(make_context))
    assert out["status"] == "aborted"
    assert "planner" in out["abort_reason"] and len(out["abort_reason"]) > 40
    assert out["results"] == {}
    assert len(llm_server.calls("planner")) == 2  # asked again with the problems, once


def test_unusable_plan_then_a_good_one_completes(compiled, make_context, llm_server):
    llm_server.script("planner", {"content": "no idea"}, _plan_reply(ONE_STEP))
    out = run(compiled, _llm_context(make_context))
    assert out["status"] == "completed" and out["results"][0].status == "done"


@pytest.mark.parametrize("fault", [{"status": 500}, {"delay": 2.0, "content": "late"}],
                         ids=["http-500", "slow"])
def test_responder_fault_still_answers_with_the_results(compiled, make_context, llm_server,
                                                        fault):
    llm_server.script("planner", _plan_reply(ONE_STEP))
    llm_server.script("responder", fault)
    out = run(compiled, _llm_context(make_context, llm_timeout_s=0.5))
    assert out["status"] == "completed"
    assert out["results"][0].status == "done"  # the computed result is kept
    assert "responder" in out["response"].lower()
    assert "summarization" in out["response"]  # the results are in the answer
    if "status" in fault:
        assert "500" in out["response"]


def test_selector_fault_falls_back_to_the_ranking(compiled, make_context, llm_server,
                                                  catalog_file):
    close = catalog_file(("summarization", "test/sum-a", 1000),
                         ("summarization", "test/sum-b", 990))
    llm_server.script("planner", _plan_reply(ONE_STEP))
    llm_server.script("selector", {"status": 500})
    out = run(compiled, _llm_context(make_context, catalog=close))
    assert out["status"] == "completed"
    assert out["results"][0].status == "done"
    assert out["selections"][0].model == "test/sum-a"  # the top-ranked
    assert "500" in out["selections"][0].reason


def test_a_timeout_raised_by_the_tool_is_not_taken_for_the_subtask_timeout(
    compiled, make_context, test_tools, catalog_file
):
    from hugginggpt.tools.experts import register_tool

    def summarize(text: str) -> str:
        raise TimeoutError("read timed out talking to the model server")

    test_tools.append(register_tool(summarize, "summarization", backend="test",
                                    models=["test/remote"]))
    catalog = catalog_file(("summarization", "test/remote", 10))
    out = run(compiled, make_context(plan=[ONE_STEP], backend="test", catalog=catalog,
                                     offline=True, subtask_timeout_s=60, subtask_retries=1))
    result = out["results"][0]
    assert result.status == "failed"
    assert result.error.startswith("TimeoutError: read timed out talking to the model server")
    assert "no result within" not in result.error
    assert result.attempts == 2  # a timeout may pass: retried


# ------------------------------------------ what each caller reads of a failure names no flag

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")


def _closed_url() -> str:
    """An OpenAI-compatible endpoint that refuses connections: a port nothing listens on."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


NO_LLM = {"llm": None, "llm_base_url": None}
LLM = {"plan": None, "offline": False}
"""A run planned by the scripted LLM (the fault runs plan nothing and call no LLM)."""

ENDINGS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    **{f"fault-{kind}": ("another --backend",
                         {"dry_run_faults": {"rates": {kind: 1.0}, "hang_s": 1.0}}, {})
       for kind in FAULT_KINDS},
    "run-time-limit": ("--max-run-time", {
        "dry_run_faults": {"rates": {"hang": 1.0}, "hang_s": 3.0}, "subtask_timeout_s": 30,
        "max_run_s": 0.3}, {}),
    "missing-file": ("--file", {"plan": [_sub(0, "image-to-text", image="not-there.png")]}, {}),
    "no-model": ("no model can run", {"backend": "llm", **NO_LLM, "plan": [ONE_STEP]}, {}),
    "too-many-subtasks": ("--max-subtasks", {"max_subtasks": 1}, {}),
    "planner-refused": ("--llm-base-url", {**LLM, "planner": "llm",
                                           "llm_base_url": _closed_url()}, {}),
    "planner-refused-fallback": ("this plan was made offline", {
        **LLM, "planner": "auto", "llm_base_url": _closed_url()}, {}),
    "no-llm": ("--llm MODEL", {**LLM, "planner": "llm", **NO_LLM}, {}),
    "no-llm-no-offline-plan": ("--file", {**LLM, "planner": "auto", **NO_LLM},
                               {"request": "describe the picture"}),
    "no-credentials": ("export OPENAI_API_KEY=sk-...", {
        **LLM, "planner": "llm", "llm": "gpt-4o-mini", "llm_base_url": None}, {}),
    "unusable-plans": ("--planner-llm", {**LLM, "planner": "llm", "max_plan_retries": 1},
                       {"planner": [{"tool_args": {"subtasks": [_sub(0, "painting")]}}] * 2}),
    "planner-http-500": ("500", {**LLM, "planner": "llm"}, {"planner": [{"status": 500}]}),
    "planner-slow": ("planner", {**LLM, "planner": "llm", "llm_timeout_s": 0.5},
                     {"planner": [{"delay": 2.0, **_plan_reply(ONE_STEP)}]}),
    "llm-budget": ("max_llm_calls", {**LLM, "planner": "llm", "max_llm_calls": 0}, {}),
    "responder-http-500": ("500", {**LLM, "plan": [ONE_STEP]},
                           {"responder": [{"status": 500}]}),
}
"""The ways a run ends with a failure (each fault of a simulated expert, the limits, a
missing input, no model, the planner LLM refused, unconfigured, without its key, unusable,
down, slow or over budget, the responder down): what the CLI reads of it (a flag when a
setting fixes it), the run's settings and the scripted LLM replies (and the request)."""
ANSWERED = {"responder-http-500", "planner-refused-fallback"}
"""The endings whose run completes, saying what failed on the way."""


def _read_by(out: dict[str, Any], caller: Any) -> list[str]:
    """What a caller reads of a run's end: the answer, the abort's reason, why the plan
    was made offline, and each failure's reason and fix said for it."""
    texts = [out.get("response") or "", out.get("abort_reason") or "",
             out.get("planner_fallback") or ""]
    for result in (out.get("results") or {}).values():
        if result.failure is not None:
            texts += [result.error or "", result.failure.reason]
            texts += [said(result.failure.fix, caller)] if result.failure.fix else []
    for selection in (out.get("selections") or {}).values():
        texts += [selection.reason] + ([said(selection.fix, caller)] if selection.fix else [])
    return texts


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_no_caller_but_the_cli_reads_a_flag_in_how_a_run_ends(
        compiled, make_context, llm_server, photo, workspace, ending):
    """Every failure a run can end with, said for each caller: a Python, served or UI
    caller never reads a flag of the command line; the CLI reads what it read before (the
    flag that fixes it, when a setting does: the fix is there, said each caller's way)."""
    expected, overrides, script = ENDINGS[ending]
    request = script.get("request", "Summarize: the cat sat on the mat all day long.")
    for caller in ("cli", "python", "served", "ui"):
        for role, replies in script.items():
            if role != "request":
                llm_server.script(role, *replies)
        context = _context(make_context, None, caller=caller, **overrides)
        out = run(compiled, context, request=request, thread=f"{ending}-{caller}")
        assert out["status"] != "completed" or ending in ANSWERED, out["status"]
        read = "\n".join(_read_by(out, caller))
        if caller == "cli":
            assert expected in read, read
        else:
            assert not FLAG.search(read), (caller, FLAG.findall(read), read)
