"""Per-run limits on what a run consumes: subtasks per plan, wall time of the execution,
bytes downloaded by all URL inputs, local models held at once. Each is reached through a
real graph run; the error names the limit, its value and how to raise it; what finished
is kept and the run still responds ("aborted" only when nothing can go on: a plan over
the subtask limit)."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import weakref
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.graph.state import SubtaskResult
from hugginggpt.nodes.responding.advice import said
from hugginggpt.tools.experts import (
    ArtifactStore,
    LimitExceededError,
    TransientToolError,
    register_tool,
)
from hugginggpt.tools.experts.local import models
from hugginggpt.tools.fetch import DownloadBudget, FetchLimits, fetch_url
from tests import tiny_models
from tests.conftest import run


def _sub(i: int, task: str, dep: list[int] | None = None, **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [], "args": args}


def _limit_named(text: str | None, setting: str, value: str, env: str, flag: str) -> None:
    assert text is not None
    assert f"limit {setting}={value}" in text, text
    assert env in text and flag in text, text


def _limit_failed(result: SubtaskResult, setting: str, value: str, env: str,
                  flag: str) -> None:
    """The result names the limit; its fix, a field, raises it (said for the CLI here)."""
    assert result.error is not None and f"limit {setting}={value}" in result.error
    assert result.failure is not None and result.failure.fix is not None
    _limit_named(f"limit {setting}={value}; {said(result.failure.fix, 'cli')}", setting,
                 value, env, flag)


# ---------------------------------------------------------------------- subtasks per plan


def test_plan_over_max_subtasks_aborts_and_says_how_to_raise_it(compiled, make_context):
    plan = [_sub(i, "summarization", text=f"text {i}") for i in range(3)]
    out = run(compiled, make_context(plan=plan, backend="dry-run", offline=True,
                                     max_subtasks=2, caller="cli"))  # said for the CLI
    assert out["status"] == "aborted"
    assert "the plan has 3 subtasks but at most 2 are allowed" in out["abort_reason"]
    _limit_named(out["abort_reason"], "max_subtasks", "2", "HUGGINGGPT_MAX_SUBTASKS",
                 "--max-subtasks")
    assert "max_subtasks=2" in out["response"]
    assert out["results"] == {}  # nothing ran


@pytest.mark.parametrize("streamed", [False, True])
def test_planner_that_keeps_planning_too_many_subtasks_ends_aborted(
    compiled, make_context, llm_server, streamed
):
    too_long = {"tool_args": {"subtasks": [_sub(i, "summarization", text="x") for i in range(4)]}}
    llm_server.script("planner", too_long, too_long)
    out = run(compiled, make_context(backend="dry-run", max_subtasks=3, max_plan_retries=1,
                                     stream_execution=streamed, caller="cli"))
    assert out["status"] == "aborted"
    _limit_named(out["abort_reason"], "max_subtasks", "3", "HUGGINGGPT_MAX_SUBTASKS",
                 "--max-subtasks")
    if not streamed:
        assert out["results"] == {}
    else:  # the first 3 ran while the plan streamed (never more than the limit): reported
        assert sorted(out["results"]) == [0, 1, 2]
        assert all(r.streamed and r.status == "done" for r in out["results"].values())
        assert "While the plan streamed, these subtasks ran" in out["abort_reason"]


def test_max_subtasks_comes_from_the_environment(monkeypatch):
    from hugginggpt.graph.context import Context

    monkeypatch.setenv("HUGGINGGPT_MAX_SUBTASKS", "4")
    monkeypatch.setenv("HUGGINGGPT_MAX_RUN_S", "12.5")
    monkeypatch.setenv("HUGGINGGPT_MAX_DOWNLOAD_TOTAL_MB", "7")
    monkeypatch.setenv("HUGGINGGPT_MAX_LOADED_MODELS", "2")
    context = Context()
    assert (context.max_subtasks, context.max_run_s, context.max_download_total_mb,
            context.max_loaded_models) == (4, 12.5, 7.0, 2)
    assert Context(max_run_s=3).max_run_s == 3  # a run's value wins


# ---------------------------------------------------------------------- wall time of a run


@pytest.fixture
def timed_tools(test_tools, catalog_file):
    """A quick summariser, a blocking rewriter (a thread that cannot be interrupted), an
    async generator that sleeps, a quick classifier; all on the 'test' backend."""
    release = threading.Event()

    def summarize(text: str) -> str:
        return f"summary of {text}"

    def rewrite(text: str) -> str:
        release.wait(30)
        return "rewritten"

    async def generate(text: str) -> str:
        await asyncio.sleep(30)
        return "generated"

    def classify(text: str) -> list[dict[str, Any]]:
        return [{"label": "OK", "score": 1.0}]

    for fn, task, model in ((summarize, "summarization", "test/quick"),
                            (rewrite, "text2text-generation", "test/blocking"),
                            (generate, "text-generation", "test/sleepy"),
                            (classify, "text-classification", "test/label")):
        test_tools.append(register_tool(fn, task, backend="test", models=[model]))
    catalog = catalog_file(("summarization", "test/quick", 10),
                           ("text2text-generation", "test/blocking", 10),
                           ("text-generation", "test/sleepy", 10),
                           ("text-classification", "test/label", 10))
    yield catalog
    release.set()


TIMED_PLAN = [
    _sub(0, "summarization", text="a long text"),
    _sub(1, "text2text-generation", [0], text="<GENERATED>-0"),
    _sub(2, "text-classification", [1], text="<GENERATED>-1"),
    _sub(3, "text-generation", text="once upon a time"),
]


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
def test_run_time_limit_abandons_unfinished_subtasks_and_still_responds(
    compiled, make_context, timed_tools, path
):
    context = make_context(plan=TIMED_PLAN, backend="test", catalog=timed_tools, offline=True,
                           max_run_s=1.0, subtask_timeout_s=60, subtask_retries=0)
    started = time.monotonic()
    if path == "invoke":
        out = run(compiled, context)
    else:
        out = asyncio.run(compiled.ainvoke({"request": "do it"},
                                           {"configurable": {"thread_id": "t"}},
                                           context=context))
    elapsed = time.monotonic() - started

    assert elapsed < 8, elapsed  # not the 30 s the experts would take
    assert out["status"] == "partial"  # was "completed" (issue 12)
    results = out["results"]
    assert results[0].status == "done"  # what finished is kept
    assert results[0].outputs["text"] == "summary of a long text"
    for i, model in ((1, "test/blocking"), (3, "test/sleepy")):
        assert results[i].status == "failed"
        assert f"the run's time limit was reached while {model} ran" in results[i].error
        assert "LimitExceededError" in results[i].error
        _limit_failed(results[i], "max_run_s", "1 s", "HUGGINGGPT_MAX_RUN_S",
                      "--max-run-time")
    assert results[2].status == "skipped" and "dependency 1" in results[2].error
    assert "max_run_s=1 s" in results[2].error
    assert "max_run_s=1 s" in out["response"]  # the answer says why


def test_run_time_limit_stops_retries_that_could_not_finish(
    compiled, make_context, test_tools, catalog_file
):
    calls: list[str] = []

    def flaky(text: str) -> str:
        calls.append(text)
        raise TransientToolError("503 model loading")

    test_tools.append(register_tool(flaky, "summarization", backend="test",
                                    models=["test/flaky"]))
    catalog = catalog_file(("summarization", "test/flaky", 10))
    started = time.monotonic()
    out = run(compiled, make_context(plan=[_sub(0, "summarization", text="x")], backend="test",
                                     catalog=catalog, offline=True, max_run_s=1.5,
                                     subtask_retries=3, retry_backoff_s=30))
    assert time.monotonic() - started < 5  # no 30 s backoff waited out
    result = out["results"][0]
    assert result.status == "failed" and calls == ["x"]
    assert "before retry 1 of test/flaky could start" in result.error
    _limit_failed(result, "max_run_s", "1.5 s", "HUGGINGGPT_MAX_RUN_S", "--max-run-time")
    assert "test/flaky (TransientToolError)" in result.error  # the attempt is still told


# ------------------------------------------------------------------- bytes downloaded


BODY = 40_000
"""Bytes of each picture the files server serves."""


@pytest.fixture
def pictures_server():
    """Pictures a.png, b.png, c.png of BODY bytes each, and stream.png (60 kB) sent with
    no Content-Length."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            name = self.path.strip("/")
            if name not in ("a.png", "b.png", "c.png", "stream.png"):
                self.send_error(404)
                return
            size = 60_000 if name == "stream.png" else BODY
            body = (b"\x89PNG\r\n\x1a\n" + name.encode() * size)[:size]  # sniffed as PNG
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            if name != "stream.png":
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_run_download_total_is_bounded_across_subtasks(
    compiled, make_context, test_tools, pictures_server
):
    def caption(image: Path) -> str:
        return f"{image.stat().st_size} bytes"

    test_tools.append(register_tool(caption, "image-to-text", backend="test",
                                    models=["test/captioner"]))
    plan = [_sub(i, "image-to-text", image=f"{pictures_server}/{name}.png")
            for i, name in enumerate("abc")]
    # 0.1 MB is 104,857 bytes: two pictures of 40,000 fit, the third does not
    out = run(compiled, make_context(plan=plan, backend="test", offline=True,
                                     allow_private_urls=True, max_download_total_mb=0.1))

    assert out["status"] == "partial"  # was "completed" (issue 12)
    statuses = sorted(r.status for r in out["results"].values())
    assert statuses == ["done", "done", "failed"]
    done = [r for r in out["results"].values() if r.status == "done"]
    assert all(r.outputs["text"] == f"{BODY} bytes" for r in done)
    failed = next(r for r in out["results"].values() if r.status == "failed")
    assert failed.error.startswith("LimitExceededError: http://127.0.0.1")
    assert "was not downloaded (40000 bytes" in failed.error
    _limit_failed(failed, "max_download_total_mb", "0.1 MB",
                  "HUGGINGGPT_MAX_DOWNLOAD_TOTAL_MB", "--max-download-total-mb")

    # with room for all three, all three are downloaded
    roomy = run(compiled, make_context(plan=plan, backend="test", offline=True,
                                       allow_private_urls=True, max_download_total_mb=1),
                thread="roomy")
    assert [r.status for r in roomy["results"].values()] == ["done"] * 3


def test_download_without_a_declared_size_is_counted_as_it_arrives(pictures_server, tmp_path):
    store = ArtifactStore(tmp_path, "t")
    budget = DownloadBudget(50_000)
    with pytest.raises(LimitExceededError, match="was stopped after") as caught:
        fetch_url(f"{pictures_server}/stream.png", "image", store,
                  FetchLimits(allow_private=True), budget)
    assert caught.value.setting == "max_download_total_mb"
    assert 50_000 < budget.used <= 60_000  # what was read counts
    assert not list((tmp_path / "artifacts" / "t").glob("*"))  # nothing half-written kept
    # a declared size is reserved up front and given back when not all of it is read
    budget = DownloadBudget(100_000)
    fetch_url(f"{pictures_server}/a.png", "image", store, FetchLimits(allow_private=True),
              budget)
    assert budget.used == BODY


# --------------------------------------------------------------- models loaded at once


@pytest.fixture(scope="module")
def three_tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tiny-limits")
    names = ("text-classification", "token-classification", "feature-extraction")
    return {name: str(tiny_models.build(name, root)) for name in names}


@pytest.fixture
def live_models(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    """Counts, at every load, the models still alive in the process (after a garbage
    collection), the one being loaded included: what memory really holds."""
    alive: list[weakref.ref[Any]] = []
    counts: list[int] = []
    real = models._load_uncached
    limit = request.node.callspec.params["limit"]

    def counting_load(task: str, model_id: str) -> Any:
        # a model given back to the cache may still be on the stack of the thread that
        # used it for a moment (on a busy machine, long enough to be counted); a model
        # that stays alive, as one the cache kept would, is counted after 2 s
        deadline = time.monotonic() + 2.0
        while True:
            gc.collect()
            living = sum(ref() is not None for ref in alive)
            if living < limit or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        counts.append(living + 1)
        value = real(task, model_id)
        alive.append(weakref.ref(value))
        return value

    monkeypatch.setattr(models, "_load_uncached", counting_load)
    models.clear_loaded()
    yield counts
    models.clear_loaded()
    models.set_max_loaded(models.DEFAULT_MAX_LOADED)


@pytest.mark.parametrize("limit", [1, 2])
def test_models_loaded_at_once_stay_within_the_run_limit(
    compiled, make_context, three_tiny, live_models, tmp_path, limit
):
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        {"id": path, "task": task, "downloads": 10, "expected_latency_s": 0.1}
        for task, path in three_tiny.items()
    ]}))
    plan = [_sub(0, "text-classification", text="what a great movie"),
            _sub(1, "token-classification", text="the man walks in paris"),
            _sub(2, "feature-extraction", text="the cat sat on the mat"),
            _sub(3, "text-classification", [2], text="a second text"),
            _sub(4, "token-classification", [2], text="a second text")]
    out = run(compiled, make_context(plan=plan, backend="local", catalog=str(catalog),
                                     offline=True, max_loaded_models=limit))

    assert [r.status for r in out["results"].values()] == ["done"] * 5, \
        [r.error for r in out["results"].values()]
    assert len(live_models) >= 3  # every model was loaded at least once
    assert max(live_models) <= limit, live_models
    assert models.peak_loaded() <= limit
    assert len(models.loaded_models()) <= limit


def test_model_limit_below_one_is_a_clear_error(make_context, monkeypatch):
    """Refused as the setting enters (issue 12: not as a failure of each subtask)."""
    from hugginggpt.graph.context import SettingsError

    with pytest.raises(SettingsError) as refused:
        make_context(backend="local", max_loaded_models=0)
    assert "max_loaded_models = 0" in str(refused.value) and "at least 1" in str(refused.value)
    monkeypatch.setenv("HUGGINGGPT_MAX_LOADED_MODELS", "0")
    with pytest.raises(SettingsError) as refused:
        make_context(backend="local")
    assert "HUGGINGGPT_MAX_LOADED_MODELS" in str(refused.value)


def test_limits_from_the_command_line(capsys, workspace):
    from hugginggpt.cli import main

    example = Path(__file__).resolve().parents[1] / "examples" / "caption-translate-speak.json"
    code = main(["run", "draw, caption, translate, speak", "--dry-run", "--plan", str(example),
                 "--latency-scale", "1", "--max-run-time", "0.3", "--max-loaded-models", "2",
                 "--max-download-total-mb", "5", "--json", "--thread", "lim-1",
                 "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    # nothing finished within 0.3 s: failed, with its own exit code (was 0, "completed";
    # issue 12)
    assert (code, doc["status"]) == (4, "failed"), err
    unfinished = [r for r in doc["results"].values() if r["status"] != "done"]
    assert unfinished and all("max_run_s=0.3 s" in r["error"] for r in unfinished)
    saved = json.loads((workspace / "threads" / "lim-1.json").read_text())["context"]
    assert (saved["max_run_s"], saved["max_loaded_models"], saved["max_download_total_mb"]) \
        == (0.3, 2, 5.0)  # resume uses the same limits
