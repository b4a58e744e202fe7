"""Execution: dataflow, failures that stay local, timeouts, retries, fallbacks, and the
real MiniLM tools. Plans come through the scripted LLM server, as in production."""

from __future__ import annotations

import threading
import time

import pytest

from hugginggpt.nodes.responding.advice import said
from hugginggpt.tools.experts import TransientToolError, register_tool
from tests.conftest import run


def _plan(*subtasks: dict) -> dict:
    return {"tool_args": {"subtasks": list(subtasks)}}


def _sub(i: int, task: str, dep: list[int], **args: str) -> dict:
    return {"id": i, "task": task, "dep": dep, "args": args}


@pytest.fixture
def text_tools(test_tools, catalog_file):
    """Two summarization models on a 'test' backend; behaviour set per test."""
    behaviour: dict[str, object] = {}
    calls: list[tuple[str, str]] = []

    def make(model: str):
        def summarize(text: str) -> str:
            calls.append((model, text))
            action = behaviour.get(model, "ok")
            if callable(action):
                return action(text)
            if action == "raise":
                raise ValueError(f"{model} cannot read this text")
            return f"summary by {model}: {text[:20]}"
        return summarize

    for model in ("test/sum-a", "test/sum-b"):
        test_tools.append(register_tool(make(model), "summarization", backend="test",
                                        models=[model]))
    catalog = catalog_file(("summarization", "test/sum-a", 1000),
                           ("summarization", "test/sum-b", 10))
    return behaviour, calls, catalog


def test_failing_subtask_skips_dependents_and_spares_siblings(
    compiled, make_context, llm_server, text_tools
):
    behaviour, calls, catalog = text_tools
    llm_server.script("planner", _plan(
        _sub(0, "summarization", [], text="POISON"),
        _sub(1, "summarization", [0], text="<GENERATED>-0"),
        _sub(2, "summarization", [1], text="<GENERATED>-1"),
        _sub(3, "summarization", [], text="fine text"),
    ))

    def per_text(text: str) -> str:
        if text == "POISON":
            raise ValueError("bad input")
        return f"ok: {text}"

    behaviour["test/sum-a"] = behaviour["test/sum-b"] = per_text
    out = run(compiled, make_context(backend="test", catalog=catalog))

    results = out["results"]
    assert results[0].status == "failed"
    assert "ValueError: bad input" in results[0].error
    assert "test/sum-a" in results[0].error and "test/sum-b" in results[0].error
    assert results[1].status == "skipped" and "dependency 0" in results[1].error
    assert results[2].status == "skipped" and "dependency 1" in results[2].error
    assert results[3].status == "done" and results[3].outputs["text"] == "ok: fine text"
    assert out["status"] == "partial"  # was "completed": a script could not tell (issue 12)
    # the dependents never ran on an unresolved placeholder
    assert all("GENERATED" not in text for _, text in calls)


def test_hanging_subtask_is_stopped_by_its_timeout(
    compiled, make_context, llm_server, text_tools
):
    behaviour, _, catalog = text_tools
    release = threading.Event()
    behaviour["test/sum-a"] = behaviour["test/sum-b"] = lambda text: (
        release.wait(30) if text == "hang" else None) or f"ok: {text}"
    llm_server.script("planner", _plan(
        _sub(0, "summarization", [], text="hang"),
        _sub(1, "summarization", [], text="quick"),
    ))
    started = time.monotonic()
    try:
        out = run(compiled, make_context(backend="test", catalog=catalog,
                                         subtask_timeout_s=0.3, subtask_retries=0))
    finally:
        release.set()
    elapsed = time.monotonic() - started

    assert out["results"][0].status == "failed"
    assert "ToolTimeoutError" in out["results"][0].error
    assert out["results"][0].attempts == 2  # one per candidate model, no retries
    assert out["results"][1].status == "done"
    assert elapsed < 10


def test_transient_error_is_retried_then_succeeds(
    compiled, make_context, llm_server, text_tools
):
    behaviour, calls, catalog = text_tools
    failures = iter([TransientToolError("503 model loading"), ConnectionError("reset")])

    def flaky(text: str) -> str:
        if (exc := next(failures, None)) is not None:
            raise exc
        return "finally"

    behaviour["test/sum-a"] = flaky
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    out = run(compiled, make_context(backend="test", catalog=catalog, subtask_retries=2))

    result = out["results"][0]
    assert result.status == "done" and result.outputs["text"] == "finally"
    assert result.model == "test/sum-a"
    assert result.attempts == 3
    assert [a.error_type for a in result.attempt_log] == [
        "TransientToolError", "ConnectionError", None]
    assert [m for m, _ in calls] == ["test/sum-a"] * 3


def test_falls_back_to_the_second_candidate_model(
    compiled, make_context, llm_server, text_tools
):
    behaviour, calls, catalog = text_tools
    behaviour["test/sum-a"] = "raise"
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    out = run(compiled, make_context(backend="test", catalog=catalog))

    result = out["results"][0]
    assert result.status == "done"
    assert out["selections"][0].model == "test/sum-a"  # selected first ...
    assert result.model == "test/sum-b"  # ... but the fallback produced the output
    assert result.outputs["text"].startswith("summary by test/sum-b")
    # a permanent error is not retried on the same model
    assert [m for m, _ in calls] == ["test/sum-a", "test/sum-b"]
    assert "fallback model test/sum-b" in llm_server.calls("responder")[0]["messages"][-1]["content"]


def test_selector_llm_is_asked_only_when_candidates_are_close(
    compiled, make_context, llm_server, text_tools, catalog_file
):
    _, _, _ = text_tools
    close = catalog_file(("summarization", "test/sum-a", 1000),
                         ("summarization", "test/sum-b", 990))
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    llm_server.script("selector", {"tool_args": {
        "model": "test/sum-b", "reason": "it handles short texts better"}})
    out = run(compiled, make_context(backend="test", catalog=close))
    assert out["selections"][0].model == "test/sum-b"
    assert "it handles short texts better" in out["selections"][0].reason
    assert out["results"][0].model == "test/sum-b"
    assert len(llm_server.calls("selector")) == 1


def test_selector_llm_is_not_asked_for_a_clear_winner(
    compiled, make_context, llm_server, text_tools
):
    _, _, catalog = text_tools  # 1000 vs 10 downloads: not close
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    out = run(compiled, make_context(backend="test", catalog=catalog))
    assert out["selections"][0].model == "test/sum-a"
    assert "top-ranked" in out["selections"][0].reason
    assert llm_server.calls("selector") == []


def test_no_model_for_a_task_fails_it_with_the_reason(compiled, make_context, llm_server):
    llm_server.script("planner", _plan(_sub(0, "text-to-video", [], text="hi")))
    out = run(compiled, make_context(backend="lite"))
    assert out["selections"][0].model is None
    assert "no model can run text-to-video" in out["selections"][0].reason
    # was: no result and "completed" (issue 12): every planned subtask has a result
    assert out["results"][0].status == "failed"
    assert out["results"][0].error == out["selections"][0].reason
    assert out["results"][0].attempts == 0  # no tool ran
    assert out["status"] == "failed"
    digest = llm_server.calls("responder")[0]["messages"][-1]["content"]
    assert "status: failed: no model can run text-to-video" in digest


def test_missing_input_file_fails_with_a_clear_error(compiled, make_context, llm_server):
    llm_server.script("planner", _plan(
        _sub(0, "image-to-text", [], image="holiday.jpg"),
        _sub(1, "summarization", [], text="independent"),
    ))
    out = run(compiled, make_context(backend="dry-run"))
    assert out["results"][0].status == "failed"
    failure = out["results"][0].failure
    assert "holiday.jpg" in out["results"][0].error
    assert failure is not None and failure.fix is not None  # attach it: said per caller
    assert said(failure.fix, "cli") == "attach it with --file, or copy it into the workspace"
    assert out["results"][1].status == "done"


def test_attached_file_outside_workspace_is_resolved(
    compiled, make_context, llm_server, tmp_path, test_tools
):
    seen = []

    def caption(image) -> str:  # noqa: ANN001 - receives a resolved Path
        seen.append(image)
        return "a photo"

    test_tools.append(register_tool(caption, "image-to-text", backend="test",
                                    models=["test/captioner"]))
    photo = tmp_path / "elsewhere" / "photo.png"
    photo.parent.mkdir()
    photo.write_bytes(b"\x89PNG fake")
    llm_server.script("planner", _plan(_sub(0, "image-to-text", [], image="photo.png")))
    out = run(compiled, make_context(backend="test"), files=[str(photo)])
    assert out["results"][0].status == "done"
    assert seen == [photo]


def test_minilm_similarity_and_embedding_run_for_real(compiled, make_context, llm_server):
    llm_server.script("planner", _plan(
        _sub(0, "sentence-similarity", [], text="A cat sits on the mat.",
             text2="A kitten is lying on the rug."),
        _sub(1, "sentence-similarity", [], text="A cat sits on the mat.",
             text2="Interest rates rose again this quarter."),
        _sub(2, "feature-extraction", [], text="HuggingGPT chains experts."),
    ))
    out = run(compiled, make_context(backend="lite"))
    results = out["results"]
    assert {r.backend for r in results.values()} == {"lite"}
    related, unrelated = results[0].outputs["score"], results[1].outputs["score"]
    assert related > 0.4 > unrelated
    ref = results[2].outputs["embedding"]
    assert ref["kind"] == "vector" and ref["dims"] == 384
    from pathlib import Path

    from hugginggpt.tools.experts import ArtifactStore

    vector = ArtifactStore(Path(make_context().workspace), "t").read_json(ref)
    assert abs(sum(v * v for v in vector) - 1.0) < 1e-3  # normalised embedding


def test_minilm_loads_once_per_process():
    from hugginggpt.tools.experts import lite

    first = lite.text_encoder()
    lite.tools.sentence_similarity("a", "b")
    assert lite.text_encoder() is first


def test_labels_feed_a_text_argument_as_text(compiled, make_context, llm_server, test_tools):
    heard: list[str] = []

    def speak(text: str) -> str:
        heard.append(text)
        return "spoken"

    def classify(text: str) -> list[dict]:
        return [{"label": "POSITIVE", "score": 0.91}, {"label": "NEGATIVE", "score": 0.09}]

    test_tools.append(register_tool(classify, "text-classification", backend="test",
                                    models=["test/classifier"]))
    test_tools.append(register_tool(speak, "text-generation", backend="test",
                                    models=["test/speaker"]))
    llm_server.script("planner", _plan(
        _sub(0, "text-classification", [], text="I love it"),
        _sub(1, "text-generation", [0], text="<GENERATED>-0"),
    ))
    out = run(compiled, make_context(backend="test"))
    assert out["results"][1].status == "done"
    assert heard == ["POSITIVE (0.91), NEGATIVE (0.09)"]
