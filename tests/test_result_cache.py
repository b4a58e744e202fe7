"""The result cache: a subtask already run on the same inputs (files by content) is
served from ``<workspace>/cache.sqlite`` across runs, threads and processes; failures,
nondeterministic tools and ``--no-cache`` runs are not. Real graphs, real tools
registered on a ``test`` backend that count their calls, a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hugginggpt import build_graph
from hugginggpt.graph.context import Context
from hugginggpt.nodes.execution.cache import CACHE_FILE, CacheSettings, ResultCache
from hugginggpt.tools.experts import register_tool
from hugginggpt.tools.experts.registry import ToolContext, find_tools
from hugginggpt.trace import render, thread_runs
from tests.conftest import run


def _sub(i: int, task: str, dep: list[int], **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [-1], "args": args}


@pytest.fixture
def tools(test_tools, catalog_file) -> dict[str, Any]:
    """Counting tools on a ``test`` backend: a summarizer (its behaviour settable), an
    image classifier reading its file, a seeded painter writing a PNG artifact, an
    unseeded one (on a ``raw`` backend) and a rewriter that declares itself
    nondeterministic."""
    calls: list[tuple[str, Any]] = []
    behaviour: dict[str, Any] = {"fail": False}

    def summarize(text: str) -> str:
        calls.append(("summarize", text))
        if behaviour["fail"]:
            raise ValueError("this model cannot read that text")
        return f"summary: {text[:30]}"

    def classify(image: Path) -> list[dict[str, Any]]:
        calls.append(("classify", image.read_bytes()))
        return [{"label": f"{len(image.read_bytes())} bytes", "score": 0.9}]

    def paint(text: str, ctx: ToolContext) -> dict[str, Any]:
        calls.append(("paint", text))
        return ctx.artifacts.put_bytes(f"picture of {text}".encode(), "image", ".png")

    def sample(text: str) -> str:
        calls.append(("sample", text))
        return f"sampled: {text}"

    test_tools.append(register_tool(summarize, "summarization", backend="test",
                                    models=["test/sum"]))
    test_tools.append(register_tool(classify, "image-classification", backend="test",
                                    models=["test/cls"]))
    test_tools.append(register_tool(paint, "text-to-image", backend="test",
                                    models=["test/seeded"], deterministic=True))
    test_tools.append(register_tool(paint, "text-to-image", backend="raw",
                                    models=["test/unseeded"]))
    test_tools.append(register_tool(sample, "text2text-generation", backend="test",
                                    models=["test/sampler"], deterministic=False))
    catalog = catalog_file(("summarization", "test/sum", 10),
                           ("image-classification", "test/cls", 10),
                           ("text-to-image", "test/seeded", 100),
                           ("text-to-image", "test/unseeded", 10),
                           ("text2text-generation", "test/sampler", 10))
    return {"calls": calls, "behaviour": behaviour, "catalog": catalog}


@pytest.fixture
def context(workspace: Path, tools: dict[str, Any]):
    def make(plan: list[dict[str, Any]], **overrides: Any) -> Context:
        settings: dict[str, Any] = {
            "workspace": str(workspace), "backend": "test", "catalog": tools["catalog"],
            "plan": plan, "offline": True, "retry_backoff_s": 0.01, "subtask_retries": 0,
        }
        return Context(**(settings | overrides))
    return make


def _cache(workspace: Path, **settings: Any) -> ResultCache:
    return ResultCache(CacheSettings(**({"path": str(workspace / CACHE_FILE), "ttl_s": 3600.0,
                                         "max_entries": 100} | settings)))


def _kinds(calls: list[tuple[str, Any]]) -> list[str]:
    return [name for name, _ in calls]


def test_a_repeated_request_is_served_from_the_cache_on_another_thread(
    compiled, context, tools, workspace
):
    plan = [_sub(0, "summarization", [], text="a long story about a cat"),
            _sub(1, "summarization", [0], text="<GENERATED>-0"),
            _sub(2, "summarization", [], text="another text")]
    first = run(compiled, context(plan), thread="one")
    assert _kinds(tools["calls"]) == ["summarize"] * 3
    assert not any(r.cached for r in first["results"].values())
    assert _cache(workspace).count() == 3

    second = run(compiled, context(plan), thread="two")
    assert len(tools["calls"]) == 3  # no tool was called again
    results = second["results"]
    assert all(r.status == "done" and r.cached for r in results.values())
    assert results[1].outputs == first["results"][1].outputs
    assert all(r.attempt_log[-1].cached for r in results.values())
    assert second["response"].count("(from the cache)") == 3

    runs = asyncio.run(thread_runs(compiled, {"configurable": {"thread_id": "two"}}))
    shown = render("two", runs)
    assert shown.count("ok from the cache (no call)") == 3
    assert all(e["cached"] for e in runs[0]["events"] if e["type"] == "tool")


def test_a_changed_argument_or_input_file_misses_and_a_renamed_file_hits(
    compiled, context, tools, workspace
):
    photo = workspace / "photo.png"
    photo.write_bytes(b"first photo")
    run(compiled, context([_sub(0, "image-classification", [], image="photo.png")]),
        thread="a")
    assert len(tools["calls"]) == 1

    (workspace / "copy.png").write_bytes(b"first photo")  # the same bytes, another name
    out = run(compiled, context([_sub(0, "image-classification", [], image="copy.png")]),
              thread="b")
    assert out["results"][0].cached and len(tools["calls"]) == 1

    photo.write_bytes(b"a changed photo")  # the same path, other bytes
    out = run(compiled, context([_sub(0, "image-classification", [], image="photo.png")]),
              thread="c")
    assert not out["results"][0].cached and len(tools["calls"]) == 2
    assert out["results"][0].outputs["labels"][0]["label"] == "15 bytes"

    run(compiled, context([_sub(0, "summarization", [], text="one text")]), thread="d")
    out = run(compiled, context([_sub(0, "summarization", [], text="one text!")]), thread="e")
    assert not out["results"][0].cached
    assert _kinds(tools["calls"])[-2:] == ["summarize", "summarize"]


def test_no_cache_runs_everything_and_stores_nothing(compiled, context, tools, workspace):
    plan = [_sub(0, "summarization", [], text="some text")]
    run(compiled, context(plan, cache=False), thread="a")
    out = run(compiled, context(plan, cache=False), thread="b")
    assert len(tools["calls"]) == 2 and not out["results"][0].cached
    assert not (workspace / CACHE_FILE).exists()

    run(compiled, context(plan), thread="c")  # stores
    out = run(compiled, context(plan, cache=False), thread="d")  # but does not read
    assert len(tools["calls"]) == 4 and not out["results"][0].cached


def test_the_cli_flag_and_the_environment_turn_the_cache_off(monkeypatch):
    from hugginggpt.cli import _parser
    from hugginggpt.cli.run import context_from

    parser = _parser()
    assert context_from(parser.parse_args(["run", "x", "--no-cache"])).cache is False
    assert context_from(parser.parse_args(["run", "x"])).cache is True
    monkeypatch.setenv("HUGGINGGPT_CACHE", "0")
    assert Context().cache is False
    monkeypatch.setenv("HUGGINGGPT_CACHE_TTL", "-1")
    with pytest.raises(Exception, match="cache_ttl_s"):
        Context()


def test_an_expired_entry_is_not_served(compiled, context, tools, workspace):
    plan = [_sub(0, "summarization", [], text="some text")]
    run(compiled, context(plan), thread="a")
    with _cache(workspace)._db() as conn:  # the entry was stored an hour ago
        conn.execute("UPDATE results SET stored_at = stored_at - 3600")
    out = run(compiled, context(plan, cache_ttl_s=1800.0), thread="b")
    assert not out["results"][0].cached and len(tools["calls"]) == 2
    out = run(compiled, context(plan, cache_ttl_s=1800.0), thread="c")  # stored afresh
    assert out["results"][0].cached and len(tools["calls"]) == 2


def test_the_size_bound_evicts_the_least_recently_used(compiled, context, tools, workspace):
    for word in ("one", "two", "three"):
        run(compiled, context([_sub(0, "summarization", [], text=word)],
                              cache_max_entries=2), thread=word)
    assert _cache(workspace).count() == 2
    out = run(compiled, context([_sub(0, "summarization", [], text="three")],
                                cache_max_entries=2), thread="again-3")
    assert out["results"][0].cached and len(tools["calls"]) == 3
    out = run(compiled, context([_sub(0, "summarization", [], text="one")],
                                cache_max_entries=2), thread="again-1")
    assert not out["results"][0].cached and len(tools["calls"]) == 4  # evicted


def test_a_failure_is_not_cached(compiled, context, tools, workspace):
    plan = [_sub(0, "summarization", [], text="some text")]
    tools["behaviour"]["fail"] = True
    out = run(compiled, context(plan), thread="a")
    assert out["results"][0].status == "failed"
    assert _cache(workspace).count() == 0
    tools["behaviour"]["fail"] = False
    out = run(compiled, context(plan), thread="b")
    assert out["results"][0].status == "done" and not out["results"][0].cached
    assert len(tools["calls"]) == 2


def test_nondeterministic_tools_are_not_cached_and_a_seeded_one_is(
    compiled, context, tools, workspace
):
    unseeded = find_tools("text-to-image", "test/unseeded", ["raw"])[0]
    assert not unseeded.is_deterministic("text-to-image")  # its task type's default
    painting = [_sub(0, "text-to-image", [], text="a red boat")]
    rewriting = [_sub(0, "text2text-generation", [], text="rewrite me")]
    for thread in ("a", "b"):
        out = run(compiled, context(painting, backend="raw"), thread=f"paint-{thread}")
        assert out["results"][0].model == "test/unseeded" and not out["results"][0].cached
        out = run(compiled, context(rewriting), thread=f"rewrite-{thread}")
        assert out["results"][0].status == "done" and not out["results"][0].cached
    assert _kinds(tools["calls"]) == ["paint", "sample", "paint", "sample"]
    assert _cache(workspace).count() == 0

    run(compiled, context(painting), thread="c")  # the seeded painter, on "test"
    out = run(compiled, context(painting), thread="d")
    assert out["results"][0].model == "test/seeded" and out["results"][0].cached
    assert _kinds(tools["calls"])[4:] == ["paint"]


def test_a_hit_copies_its_artifact_into_the_new_thread_and_a_gone_one_misses(
    compiled, context, tools, workspace
):
    plan = [_sub(0, "text-to-image", [], text="a red boat"),
            _sub(1, "image-classification", [0], image="<GENERATED>-0")]
    first = run(compiled, context(plan), thread="first")
    ref = first["results"][0].outputs["image"]
    assert ref["path"].startswith("artifacts/first/")

    second = run(compiled, context(plan), thread="second")
    assert all(r.cached for r in second["results"].values())
    copied = second["results"][0].outputs["image"]
    assert copied["path"].startswith("artifacts/second/")
    assert copied["artifact_id"] == ref["artifact_id"]
    assert (workspace / copied["path"]).read_bytes() == b"picture of a red boat"
    assert _kinds(tools["calls"]) == ["paint", "classify"]

    for thread in ("first", "second"):  # every copy is gone: the entry cannot be served
        (workspace / "artifacts" / thread / Path(ref["path"]).name).unlink()
    third = run(compiled, context(plan), thread="third")
    assert not third["results"][0].cached
    assert (workspace / third["results"][0].outputs["image"]["path"]).is_file()
    assert third["results"][1].cached  # the same image bytes: the classification hits
    assert _kinds(tools["calls"]) == ["paint", "classify", "paint"]


def test_a_corrupt_cache_file_is_warned_about_and_the_run_goes_on(
    compiled, context, tools, workspace, caplog
):
    (workspace / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    plan = [_sub(0, "summarization", [], text="some text")]
    with caplog.at_level(logging.WARNING, logger="hugginggpt.nodes.execution.cache"):
        out = run(compiled, context(plan), thread="a")
        out2 = run(compiled, context(plan), thread="b")
    assert out["results"][0].status == out2["results"][0].status == "done"
    assert len(tools["calls"]) == 2
    assert "running without it" in caplog.text
    assert (workspace / CACHE_FILE).read_bytes().startswith(b"this is not")  # kept as it was


def test_a_dry_run_with_faults_is_not_cached(workspace):
    compiled = build_graph()
    plan = [_sub(0, "summarization", [], text="some text")]
    base = {"workspace": str(workspace), "backend": "dry-run", "plan": plan, "offline": True,
            "dry_run_latency_scale": 0.0}
    run(compiled, Context(**base), thread="a")
    out = run(compiled, Context(**base), thread="b")
    assert out["results"][0].cached  # the plain simulation is deterministic
    faulty = base | {"dry_run_faults": {"rates": {"transient": 0.0}, "seed": 1}}
    out = run(compiled, Context(**faulty), thread="c")
    assert out["results"][0].status == "done" and not out["results"][0].cached


def _cli(workspace: Path, plan_file: Path, thread: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "hugginggpt", "run", "summarise the text", "--plan",
         str(plan_file), "--dry-run", "--latency-scale", "0.01", "--workspace",
         str(workspace), "--thread", thread, "--json"],
        capture_output=True, text=True, timeout=300, check=False, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_two_processes_on_one_workspace_share_the_cache(workspace, tmp_path):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps([_sub(0, "summarization", [], text="shared text"),
                                     _sub(1, "translation", [0], text="<GENERATED>-0",
                                          tgt_lang="fr")]))
    first = _cli(workspace, plan_file, "p1")
    second = _cli(workspace, plan_file, "p2")
    assert not any(r["cached"] for r in first["results"].values())
    assert all(r["cached"] for r in second["results"].values())
    assert "(from the cache)" in second["response"]


def test_a_replay_runs_the_experts_again_instead_of_reading_the_cache(
    compiled, context, tools, workspace
):
    from hugginggpt.replay import replay_setup

    plan = [_sub(0, "summarization", [], text="some text")]
    run(compiled, context(plan), thread="recorded")
    values = compiled.get_state({"configurable": {"thread_id": "recorded"}}).values
    graph_input, replay_context, _ = replay_setup(dict(values))
    assert replay_context.cache is False
    out = compiled.invoke(graph_input, {"configurable": {"thread_id": "replayed"}},
                          context=replay_context)
    assert out["results"][0].status == "done" and not out["results"][0].cached
    assert len(tools["calls"]) == 2


def test_a_backend_setting_that_may_change_outputs_is_part_of_the_key(tmp_path):
    from hugginggpt.nodes.execution.cache import cache_key

    args = {"text": "hello"}
    base = cache_key("summarization", "m", "hf-inference", "t", args,
                     {"endpoints": {}, "timeout_s": 10})
    assert base == cache_key("summarization", "m", "hf-inference", "t", args,
                             {"endpoints": {}, "timeout_s": 99, "bill_to": "org"})
    assert base != cache_key("summarization", "m", "hf-inference", "t", args,
                             {"endpoints": {"m": "http://127.0.0.1:1/"}, "timeout_s": 10})
    assert base != cache_key("summarization", "m2", "hf-inference", "t", args,
                             {"endpoints": {}, "timeout_s": 10})
    first, second = tmp_path / "a.bin", tmp_path / "b.bin"
    first.write_bytes(b"same")
    second.write_bytes(b"same")
    assert cache_key("x", "m", "b", "t", {"image": first}) == cache_key(
        "x", "m", "b", "t", {"image": second})


@pytest.mark.parametrize("setting, value", [("cache", False), ("cache_ttl_s", 1.0),
                                            ("cache_max_entries", 1)])
def test_a_served_run_s_caller_cannot_set_the_cache(setting, value):
    from hugginggpt.graph.callers import ServedContext
    from hugginggpt.graph.context import SettingsError

    with pytest.raises(SettingsError, match=f"{setting}.*deployment sets it"):
        ServedContext(**{setting: value})
