"""Execution that starts while the plan streams (issue 16, item 3), through the real
ChatOpenAI client against the local scripted server: subtasks start before the reply
ends, in dependency order; a bad subtask goes through repair without re-running what
finished; ``approval=plan`` is unchanged; ``risky`` holds a risky subtask; the async
path and a resumed run keep finished subtasks."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.types import Command

from hugginggpt.graph.context import Context
from hugginggpt.nodes.planning.incremental import SubtaskScanner
from hugginggpt.tools.experts import register_tool
from tests.conftest import run
from tests.llm_server import ScriptedLLMServer


def _sub(i: int, task: str, dep: list[int], **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep, "args": args}


def _plan(*subtasks: dict[str, Any], tokens: int = 60) -> dict[str, Any]:
    return {"tool_args": {"subtasks": list(subtasks)}, "tokens": tokens}


class Crash(BaseException):
    """Stops the run the way a kill would: not a tool failure (those are data)."""


class Probe:
    """Test tools that note when each call started and ended, by its input text."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.crash_on: set[str] = set()
        self._lock = threading.Lock()

    def summarize(self, text: str) -> str:
        call = {"text": text, "start": time.monotonic()}
        with self._lock:
            self.calls.append(call)
        if text in self.crash_on:
            self.crash_on.discard(text)
            raise Crash(text)
        call["end"] = time.monotonic()
        return f"summary of {text}"

    def translate(self, text: str, tgt_lang: str = "") -> str:
        return self.summarize(f"[{tgt_lang}] {text}")

    def count(self, text: str) -> int:
        return sum(c["text"] == text for c in self.calls)

    def call(self, text: str) -> dict[str, Any]:
        return next(c for c in self.calls if c["text"] == text)


@pytest.fixture
def probe(test_tools, catalog_file) -> Iterator[tuple[Probe, str]]:
    tools = Probe()
    test_tools.append(register_tool(tools.summarize, "summarization", backend="probe",
                                    models=["probe/sum"]))
    test_tools.append(register_tool(tools.translate, "translation", backend="probe",
                                    models=["probe/remote"], risk="network"))
    yield tools, catalog_file(("summarization", "probe/sum", 10),
                              ("translation", "probe/remote", 10))


@pytest.fixture
def slow_llm() -> Iterator[ScriptedLLMServer]:
    """Streams at 50 tokens/s: a 60-token plan takes about 1.2 s to arrive."""
    server = ScriptedLLMServer(tokens_per_s=50).start()
    yield server
    server.stop()


def _context(workspace: Any, server: ScriptedLLMServer, catalog: str, **overrides: Any) -> Context:
    settings: dict[str, Any] = {
        "llm": "scripted-model", "llm_base_url": server.url, "llm_max_retries": 0,
        "llm_timeout_s": 10.0, "workspace": str(workspace), "retry_backoff_s": 0.01,
        "backend": "probe", "catalog": catalog, "cache": False, "few_shot": 0,
    }
    return Context(**(settings | overrides))


LONG = 150
"""Tokens of a reply whose timing a test checks: 3 s of streaming leaves a loaded
machine time to start the first subtask before the end."""

THREE = (_sub(0, "summarization", [], text="alpha"),
         _sub(1, "summarization", [], text="beta"),
         _sub(2, "summarization", [0], text="<GENERATED>-0"))


def _planner_stream(server: ScriptedLLMServer, n: int = 0) -> dict[str, Any]:
    return [s for s in server.streams if s["role"] == "planner"][n]


def test_subtasks_start_before_the_reply_ends_in_dependency_order(workspace, slow_llm, probe):
    tools, catalog = probe
    slow_llm.script("planner", _plan(*THREE, tokens=LONG))
    out = run(_compiled(), _context(workspace, slow_llm, catalog), "summarise")

    assert out["status"] == "completed"
    stream = _planner_stream(slow_llm)
    # the first subtask ran while the server was still sending the plan
    assert tools.call("alpha")["start"] < stream["last"]
    assert tools.call("alpha")["end"] < stream["last"]
    # the dependent started only after its dependency ended
    assert tools.call("summary of alpha")["start"] >= tools.call("alpha")["end"]
    assert {r.status for r in out["results"].values()} == {"done"}
    assert all(r.streamed for r in out["results"].values())
    assert out["results"][2].outputs["text"] == "summary of summary of alpha"
    assert [tools.count(t) for t in ("alpha", "beta", "summary of alpha")] == [1, 1, 1]
    # the planner call is recorded once, beside the responder's
    assert [c.role for c in out["llm_calls"]] == ["planner", "responder"]


def test_without_stream_execution_the_plan_comes_first(workspace, slow_llm, probe):
    tools, catalog = probe
    slow_llm.script("planner", _plan(*THREE))
    context = _context(workspace, slow_llm, catalog, stream_execution=False)
    out = run(_compiled(), context, "summarise")

    assert out["status"] == "completed"
    assert tools.call("alpha")["start"] > _planner_stream(slow_llm)["last"]
    assert not any(r.streamed for r in out["results"].values())


def test_an_invalid_last_subtask_is_repaired_without_rerunning_what_finished(
    workspace, slow_llm, probe
):
    tools, catalog = probe
    bad = _sub(2, "paint-a-picture", [0], text="<GENERATED>-0")
    slow_llm.script("planner", _plan(THREE[0], THREE[1], bad, tokens=LONG), _plan(*THREE))
    out = run(_compiled(), _context(workspace, slow_llm, catalog), "summarise")

    assert out["status"] == "completed"
    assert len(slow_llm.calls("planner")) == 2
    repair = slow_llm.calls("planner")[1]["messages"][-1]["content"]
    assert "unknown task type" in repair
    # the first two ran while the rejected plan streamed, and not again after the repair
    assert [tools.count(t) for t in ("alpha", "beta", "summary of alpha")] == [1, 1, 1]
    assert tools.call("alpha")["start"] < _planner_stream(slow_llm, 0)["last"]
    assert all(r.status == "done" and r.streamed for r in out["results"].values())


def test_a_renumbered_repair_keeps_results_by_what_the_subtask_is(workspace, slow_llm, probe):
    tools, catalog = probe
    slow_llm.script(
        "planner",
        _plan(_sub(0, "summarization", [], text="alpha"), _sub(1, "nope", [], text="x")),
        _plan(_sub(5, "summarization", [], text="alpha"),
              _sub(6, "summarization", [5], text="<GENERATED>-5")))
    out = run(_compiled(), _context(workspace, slow_llm, catalog), "summarise")

    assert out["status"] == "completed"
    assert tools.count("alpha") == 1
    assert out["results"][5].outputs["text"] == "summary of alpha"
    assert out["results"][6].outputs["text"] == "summary of summary of alpha"


def test_no_valid_plan_after_retries_aborts_cleanly_reporting_what_ran(
    workspace, slow_llm, probe
):
    tools, catalog = probe
    slow_llm.script("planner", _plan(THREE[0], _sub(1, "paint-a-picture", [], text="x")))
    context = _context(workspace, slow_llm, catalog, max_plan_retries=0)
    out = run(_compiled(), context, "summarise")

    assert out["status"] == "aborted"
    assert "unknown task type" in out["abort_reason"]
    assert "While the plan streamed, these subtasks ran: #0 summarization: done" in (
        out["abort_reason"])
    assert out["response"].startswith("The run was aborted")
    assert "#0 summarization: done" in out["response"]
    assert out["results"][0].status == "done" and out["results"][0].streamed
    assert tools.count("alpha") == 1


def test_plan_approval_shows_the_whole_plan_before_anything_runs(workspace, slow_llm, probe):
    tools, catalog = probe
    slow_llm.script("planner", _plan(*THREE))
    compiled = _compiled()
    context = _context(workspace, slow_llm, catalog, approval="plan")
    config = {"configurable": {"thread_id": "ask"}}
    compiled.invoke({"request": "summarise"}, config, context=context)

    assert compiled.get_state(config).values["status"] == "waiting"
    assert tools.calls == []
    out = compiled.invoke(Command(resume="approve"), config, context=context)
    assert out["status"] == "completed"
    assert not any(r.streamed for r in out["results"].values())
    assert tools.call("alpha")["start"] > _planner_stream(slow_llm)["last"]


def test_risky_approval_holds_the_risky_subtask_and_runs_the_rest(workspace, slow_llm, probe):
    tools, catalog = probe
    slow_llm.script("planner", _plan(
        _sub(0, "summarization", [], text="alpha"),
        _sub(1, "translation", [0], text="<GENERATED>-0", tgt_lang="fr"),
        _sub(2, "summarization", [1], text="<GENERATED>-1"),
        _sub(3, "summarization", [], text="beta")))
    compiled = _compiled()
    context = _context(workspace, slow_llm, catalog, approval="risky")
    config = {"configurable": {"thread_id": "risky"}}
    compiled.invoke({"request": "summarise and translate"}, config, context=context)

    state = compiled.get_state(config)
    assert state.values["status"] == "waiting"
    assert [r["id"] for r in state.interrupts[0].value["risky"]] == [1]
    # the read-only subtasks ran while the plan streamed; the risky one and its
    # dependent wait for the answer
    assert [tools.count(t) for t in ("alpha", "beta")] == [1, 1]
    assert tools.count("[fr] summary of alpha") == 0
    out = compiled.invoke(Command(resume="approve"), config, context=context)

    assert out["status"] == "completed"
    assert [tools.count(t) for t in ("alpha", "beta", "[fr] summary of alpha")] == [1, 1, 1]
    assert out["results"][2].outputs["text"] == "summary of summary of [fr] summary of alpha"
    assert [out["results"][i].streamed for i in range(4)] == [True, False, False, True]


def test_the_async_path_streams_too(workspace, slow_llm, probe):
    tools, catalog = probe
    slow_llm.script("planner", _plan(*THREE, tokens=LONG))
    out = asyncio.run(_compiled().ainvoke(
        {"request": "summarise"}, {"configurable": {"thread_id": "a"}},
        context=_context(workspace, slow_llm, catalog)))

    assert out["status"] == "completed"
    assert tools.call("alpha")["start"] < _planner_stream(slow_llm)["last"]
    assert tools.call("summary of alpha")["start"] >= tools.call("alpha")["end"]
    assert all(r.streamed for r in out["results"].values())


def test_a_run_stopped_mid_stream_resumes_without_rerunning_finished_subtasks(
    workspace, slow_llm, probe
):
    tools, _ = probe
    out = _crash_then_resume(workspace, slow_llm, probe, THREE)
    assert out["status"] == "completed"
    assert [tools.count(t) for t in ("alpha", "beta")] == [1, 1]
    assert tools.count("summary of alpha") == 2  # stopped once, run again
    assert out["results"][2].outputs["text"] == "summary of summary of alpha"


def test_a_resumed_stage_given_another_plan_does_not_take_the_wrong_results(
    workspace, slow_llm, probe
):
    tools, _ = probe
    other = (_sub(0, "summarization", [], text="gamma"),
             _sub(1, "summarization", [], text="beta"),
             _sub(2, "summarization", [0], text="<GENERATED>-0"))
    out = _crash_then_resume(workspace, slow_llm, probe, other)
    assert out["status"] == "completed"
    assert out["results"][0].outputs["text"] == "summary of gamma"
    assert out["results"][2].outputs["text"] == "summary of summary of gamma"
    assert tools.count("gamma") == 1 and tools.count("beta") == 1


def _crash_then_resume(workspace, slow_llm, probe, resumed_plan) -> dict[str, Any]:
    """Run THREE on a thread until the subtask on "summary of alpha" crashes the
    process (the planner's reply has been read), then resume it, the planner answering
    ``resumed_plan`` this time; the resumed run's output."""
    tools, catalog = probe
    tools.crash_on = {"summary of alpha"}
    slow_llm.script("planner", _plan(*THREE), _plan(*resumed_plan))
    compiled = _compiled()
    context = _context(workspace, slow_llm, catalog)
    config = {"configurable": {"thread_id": "crash"}}
    with pytest.raises(Crash):
        compiled.invoke({"request": "summarise"}, config, context=context)
    return compiled.invoke(None, config, context=context)


def _compiled() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    from hugginggpt import build_graph
    from hugginggpt.graph.checkpoint import serializer

    return build_graph(checkpointer=InMemorySaver(serde=serializer()))


@pytest.mark.parametrize("reply", [
    '{"subtasks": [{"id": 0, "args": {"text": "a } ] \\" {"}}, {"id": 1}]}',
    'Here it is:\n```json\n[{"id": 0, "args": {"text": "a } ] \\" {"}}, {"id": 1}]\n```',
])
def test_the_scanner_yields_each_subtask_once_as_soon_as_it_is_complete(reply):
    scanner = SubtaskScanner()
    seen = [(end, item) for end in range(len(reply) + 1) for item in scanner.feed(reply[:end])]
    first_end = reply.index("}}") + 2
    assert seen == [(first_end, {"id": 0, "args": {"text": 'a } ] " {'}}),
                    (reply.index("{\"id\": 1}") + 9, {"id": 1})]


def test_a_streamed_run_with_selector_calls_replays_the_same(
    capsys, workspace, slow_llm, tmp_path, monkeypatch
):
    """The selector asked on close calls while the plan streams: its calls are recorded
    (and their tokens kept out of the plan's), and ``replay`` gives the same run."""
    import json

    from hugginggpt.cli import main

    catalog = tmp_path / "close.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        {"id": m, "task": t, "downloads": 1000, "likes": 10, "expected_latency_s": 0.01}
        for t, m in (("translation", "t/one"), ("translation", "t/two"),
                     ("summarization", "s/one"), ("summarization", "s/two"))]}))
    monkeypatch.setenv("HUGGINGGPT_CATALOG", str(catalog))
    plan = (_sub(0, "translation", [], text="hello", tgt_lang="fr"),
            _sub(1, "translation", [], text="good night", tgt_lang="de"),
            _sub(2, "summarization", [0], text="<GENERATED>-0"))
    slow_llm.script("planner", _plan(*plan))
    slow_llm.script("selector", *({"tool_args": {"model": m, "reason": "fits"}}
                                  for m in ("t/two", "t/one", "s/two")))
    argv = ["--workspace", str(workspace), "--json"]
    code = main(["run", "translate and summarise", "--llm", "scripted", "--llm-base-url",
                 slow_llm.url, "--dry-run", "--latency-scale", "0.01", "--thread", "rec",
                 *argv])
    recorded = json.loads(capsys.readouterr().out)
    assert code == 0 and recorded["status"] == "completed"
    assert [r["streamed"] for r in recorded["results"].values()] == [True, True, True]
    assert {k: s["model"] for k, s in recorded["selections"].items()} == {
        "0": "t/two", "1": "t/one", "2": "s/two"}
    assert [c["role"] for c in recorded["llm_calls"]] == [
        "planner", "selector", "selector", "selector", "responder"]
    slow_llm.stop()  # from here on, any LLM call would fail

    code = main(["replay", "--thread", "rec", *argv])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["same"] is True and report["differences"] == []
    assert report["unused_recorded_calls"] == 0


def test_the_setting_comes_from_the_flag_the_environment_or_the_caller(monkeypatch):
    from hugginggpt.cli import _parser
    from hugginggpt.cli.run import context_from

    assert Context().stream_execution is True
    monkeypatch.setenv("HUGGINGGPT_STREAM_EXECUTION", "0")
    assert Context().stream_execution is False
    monkeypatch.delenv("HUGGINGGPT_STREAM_EXECUTION")
    args = _parser().parse_args(["run", "hi", "--no-stream-execution"])
    assert context_from(args).stream_execution is False
    from hugginggpt.graph.callers import ServedContext

    assert ServedContext(stream_execution=False).stream_execution is False


def test_an_endpoint_dying_mid_stream_hands_over_without_running_a_subtask_twice(
    workspace, probe, tmp_path, monkeypatch
):
    """The first endpoint's reply breaks off after the first subtask started; the next
    endpoint's reply is read from its start, and its identical subtask takes the result
    of the one already running."""
    import itertools

    from hugginggpt.tools.llm.router import ROUTER

    monkeypatch.setattr(ROUTER, "tie_break", itertools.count().__next__)  # config order
    tools, catalog = probe
    dying, live = (ScriptedLLMServer(tokens_per_s=50).start() for _ in range(2))
    try:
        dying.die_mid_stream = True
        dying.script("planner", _plan(*THREE), _plan(*THREE))
        live.script("planner", _plan(*THREE))
        config = tmp_path / "llms.toml"
        config.write_text("".join(
            f'[[endpoints]]\nname = "{name}"\nmodel = "m"\nbase_url = "{server.url}"\n\n'
            for name, server in (("dying", dying), ("live", live))))
        context = _context(workspace, live, catalog, llm_config=str(config))
        out = run(_compiled(), context, "summarise")
    finally:
        dying.stop()
        live.stop()

    assert out["status"] == "completed"
    planner = [c for c in out["llm_calls"] if c.role == "planner"]
    assert [(c.endpoint, c.ok) for c in planner][-1] == ("live", True)
    assert not planner[0].ok
    assert [tools.count(t) for t in ("alpha", "beta", "summary of alpha")] == [1, 1, 1]
    assert tools.call("alpha")["start"] < _planner_stream(live)["first"]
    assert all(r.status == "done" and r.streamed for r in out["results"].values())
