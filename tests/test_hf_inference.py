"""The hf-inference backend against a local stub endpoint, through the whole graph.

Plans come from the scripted LLM server; every model id is mapped to a path on the stub
(:mod:`tests.hf_stub`), which plays a dedicated Inference Endpoint. huggingface_hub's
offline mode blocks even loopback calls, so these tests lift it.
"""

from __future__ import annotations

import base64
import io
import socket
import time
import wave
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from hugginggpt.tools.experts import (
    ArtifactStore,
    ToolContext,
    ToolExecutionError,
    TransientToolError,
    find_tools,
    hf_inference,
)
from hugginggpt.tools.experts.hf_inference import tools as hf_tools
from hugginggpt.tools.experts.hub import clear_serving
from tests.conftest import run
from tests.hf_stub import HFStubServer, Reply
from tests.mini_hub import MiniHub

MODELS = {
    "text-classification": "acme/sentiment",
    "summarization": "acme/summarizer",
    "text-to-image": "acme/painter",
}


def _plan(*subtasks: dict) -> dict:
    return {"tool_args": {"subtasks": list(subtasks)}}


def _sub(i: int, task: str, dep: list[int], **args: str) -> dict:
    return {"id": i, "task": task, "dep": dep, "args": args}


def _slug(model: str) -> str:
    return model.replace("/", "--")


def _png(color: tuple[int, int, int] = (200, 30, 60), size: tuple[int, int] = (8, 6)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def _wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 80)
    return buffer.getvalue()


@pytest.fixture(autouse=True)
def no_stored_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No token from the environment or from a developer's saved login."""
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(tmp_path / "no-token"))


@pytest.fixture(autouse=True)
def default_config() -> Iterator[None]:
    hf_inference.configure()
    yield
    hf_inference.configure()


@pytest.fixture
def hf_online(monkeypatch: pytest.MonkeyPatch) -> None:
    # HF_HUB_OFFLINE blocks even calls to a local endpoint; huggingface_hub reads it on import
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)


@pytest.fixture
def stub(hf_online: None) -> Iterator[HFStubServer]:
    server = HFStubServer().start()
    yield server
    server.stop()


@pytest.fixture
def endpoints(stub: HFStubServer) -> Callable[..., None]:
    """Map model ids to stub endpoints named after them."""

    def point(*models: str, timeout_s: float = 5.0) -> None:
        hf_inference.configure({m: stub.url_for(_slug(m)) for m in models}, timeout_s=timeout_s)

    return point


def test_a_hosted_classifiers_close_call_is_uncertain_and_what_follows_too(
    compiled, make_context, llm_server, catalog_file, stub, endpoints
):
    endpoints(MODELS["text-classification"], MODELS["summarization"])
    stub.script(_slug(MODELS["text-classification"]),
                Reply(json=[[{"label": "POSITIVE", "score": 0.55},
                             {"label": "NEGATIVE", "score": 0.45}]]))
    stub.script(_slug(MODELS["summarization"]), Reply(json=[{"summary_text": "Positive."}]))
    llm_server.script("planner", _plan(
        _sub(0, "text-classification", [], text="The fox was fine, I suppose."),
        _sub(1, "summarization", [0], text="<GENERATED>-0")))
    llm_server.script("responder", {"content": "Hard to say."})
    catalog = catalog_file(("text-classification", MODELS["text-classification"], 100),
                           ("summarization", MODELS["summarization"], 100))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))

    classified, summarised = out["results"][0], out["results"][1]
    assert classified.status == summarised.status == "done"
    assert classified.confidence is not None and classified.confidence.score == 0.55
    assert "its top two labels are close (0.55 and 0.45)" in (
        classified.confidence.uncertain or "")
    assert summarised.confidence is not None and summarised.confidence.inherited == [0]
    [digest] = [m["content"] for m in llm_server.calls("responder")[0]["messages"]
                if m["role"] == "user"]
    assert "uncertain: the model was unsure" in digest


def test_classify_summarize_and_paint_through_the_graph(
    compiled, make_context, llm_server, catalog_file, stub, endpoints, workspace
):
    endpoints(*MODELS.values())
    png = _png()
    stub.script(_slug(MODELS["text-classification"]),
                Reply(json=[[{"label": "POSITIVE", "score": 0.98},  # one list per input
                             {"label": "NEGATIVE", "score": 0.02}]]))
    stub.script(_slug(MODELS["summarization"]), Reply(json=[{"summary_text": "A red fox."}]))
    stub.script(_slug(MODELS["text-to-image"]), Reply(body=png, content_type="image/png"))
    llm_server.script("planner", _plan(
        _sub(0, "text-classification", [], text="I love this fox."),
        _sub(1, "summarization", [], text="A long story about a red fox in the snow."),
        _sub(2, "text-to-image", [1], text="<GENERATED>-1"),
    ))
    catalog = catalog_file(*((task, model, 100) for task, model in MODELS.items()))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))

    results = out["results"]
    assert {r.status for r in results.values()} == {"done"}, [r.error for r in results.values()]
    assert {r.backend for r in results.values()} == {"hf-inference"}
    assert results[0].model == "acme/sentiment"
    assert results[0].outputs["labels"] == [{"label": "POSITIVE", "score": 0.98},
                                            {"label": "NEGATIVE", "score": 0.02}]
    assert results[1].outputs["text"] == "A red fox."
    ref = results[2].outputs["image"]
    assert ref["kind"] == "image" and ref["path"].endswith(".png")
    saved = ArtifactStore(workspace, "t").resolve(ref)
    with Image.open(saved) as image:
        assert image.format == "PNG" and image.size == (8, 6)
        assert image.convert("RGB").getpixel((3, 3)) == (200, 30, 60)

    # the request bodies have the shape of the Inference API: {"inputs": ..., "parameters": ...}
    [classify] = stub.requests(_slug(MODELS["text-classification"]))
    assert classify.method == "POST" and classify.path == "/acme--sentiment"
    assert classify.json == {"inputs": "I love this fox.", "parameters": {}}
    [summarize] = stub.requests(_slug(MODELS["summarization"]))
    assert summarize.json["inputs"] == "A long story about a red fox in the snow."
    [paint] = stub.requests(_slug(MODELS["text-to-image"]))
    assert paint.json["inputs"] == "A red fox."  # the summary flowed into the prompt
    assert paint.headers["Accept"] == "image/png"


def test_chat_zero_shot_and_object_detection_map_their_outputs(
    compiled, make_context, llm_server, catalog_file, stub, endpoints, workspace
):
    models = {"conversational": "acme/chat", "zero-shot-classification": "acme/nli",
              "object-detection": "acme/detector"}
    endpoints(*models.values())
    stub.script("acme--chat", Reply(json={
        "id": "c1", "created": 1, "model": "acme/chat", "system_fingerprint": "",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Hello there!"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}))
    stub.script("acme--nli", Reply(json=[{"label": "sport", "score": 0.9},
                                         {"label": "politics", "score": 0.1}]))
    stub.script("acme--detector", Reply(json=[
        {"label": "fox", "score": 0.9, "box": {"xmin": 1, "ymin": 1, "xmax": 5, "ymax": 4}}]))
    photo = workspace / "photo.png"
    photo.write_bytes(_png(size=(16, 12)))
    llm_server.script("planner", _plan(
        _sub(0, "conversational", [], text="Hi!"),
        _sub(1, "zero-shot-classification", [], text="The match ended 2-1.",
             labels="sport, politics"),
        _sub(2, "object-detection", [], image="photo.png"),
    ))
    catalog = catalog_file(*((task, model, 100) for task, model in models.items()))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))

    results = out["results"]
    assert {r.status for r in results.values()} == {"done"}, [r.error for r in results.values()]
    assert results[0].outputs["text"] == "Hello there!"
    [chat] = stub.requests("acme--chat")
    assert chat.path == "/acme--chat/v1/chat/completions"
    assert chat.json["messages"] == [{"role": "user", "content": "Hi!"}]
    assert results[1].outputs["labels"] == [{"label": "sport", "score": 0.9},
                                            {"label": "politics", "score": 0.1}]
    [nli] = stub.requests("acme--nli")
    assert nli.json["parameters"]["candidate_labels"] == ["sport", "politics"]
    assert results[2].outputs["objects"] == [
        {"label": "fox", "score": 0.9, "box": {"xmin": 1, "ymin": 1, "xmax": 5, "ymax": 4}}]
    annotated = ArtifactStore(workspace, "t").resolve(results[2].outputs["image"])
    with Image.open(annotated) as image:
        assert image.size == (16, 12)
    [detect] = stub.requests("acme--detector")
    assert detect.body == photo.read_bytes()  # the image itself, as the request body


@pytest.mark.parametrize(("status", "body", "fragment"), [
    (503, {"error": "Model acme/summarizer is currently loading", "estimated_time": 0.5},
     "estimated time: 0.5s"),
    (429, {"error": "Rate limit reached"}, "rate-limited"),
])
def test_transient_http_error_is_retried_then_succeeds(
    compiled, make_context, llm_server, catalog_file, stub, endpoints, status, body, fragment
):
    endpoints("acme/summarizer")
    stub.script("acme--summarizer", Reply(status=status, json=body),
                Reply(json=[{"summary_text": "ok"}]))
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="long text")))
    catalog = catalog_file(("summarization", "acme/summarizer", 100))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))

    result = out["results"][0]
    assert result.status == "done" and result.outputs["text"] == "ok"
    assert result.attempts == 2
    assert [a.error_type for a in result.attempt_log] == ["TransientToolError", None]
    assert f"({status})" in result.attempt_log[0].error
    assert fragment in result.attempt_log[0].error
    assert len(stub.requests("acme--summarizer")) == 2


@pytest.mark.parametrize(("status", "fragment"), [
    (404, "model not found"),
    (401, "check HF_TOKEN"),
    (400, "bad input rejected"),
])
def test_permanent_http_error_falls_back_to_the_second_model(
    compiled, make_context, llm_server, catalog_file, stub, endpoints, status, fragment
):
    endpoints("acme/first", "acme/second")
    stub.script("acme--first", Reply(status=status, json={"error": "nope"}))
    stub.script("acme--second", Reply(json=[{"summary_text": "from the second"}]))
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="long text")))
    catalog = catalog_file(("summarization", "acme/first", 1000),
                           ("summarization", "acme/second", 10))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))

    result = out["results"][0]
    assert out["selections"][0].model == "acme/first"
    assert result.status == "done" and result.model == "acme/second"
    assert result.outputs["text"] == "from the second"
    first = result.attempt_log[0]
    assert first.model == "acme/first" and first.error_type == "ToolExecutionError"
    assert fragment in first.error and "nope" in first.error
    assert len(stub.requests("acme--first")) == 1  # a permanent error is not retried


def test_missing_model_fails_the_subtask_with_a_clear_reason(
    compiled, make_context, llm_server, catalog_file, stub, endpoints
):
    endpoints("acme/gone")
    stub.script("acme--gone", Reply(status=404, json={"error": "Model acme/gone does not exist"}))
    llm_server.script("planner", _plan(_sub(0, "text-classification", [], text="hi")))
    catalog = catalog_file(("text-classification", "acme/gone", 100))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))

    result = out["results"][0]
    assert result.status == "failed" and result.attempts == 1
    assert result.error.startswith("ToolExecutionError: model not found")
    assert "does not exist" in result.error and "acme/gone" in result.error


def test_unreachable_endpoint_is_retried_then_fails(
    compiled, make_context, llm_server, catalog_file, hf_online
):
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    hf_inference.configure({"acme/down": f"http://127.0.0.1:{port}/x"}, timeout_s=2)
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    catalog = catalog_file(("summarization", "acme/down", 100))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog, subtask_retries=1))

    result = out["results"][0]
    assert result.status == "failed" and result.attempts == 2
    assert {a.error_type for a in result.attempt_log} == {"TransientToolError"}
    assert "cannot reach endpoint" in result.error


@pytest.mark.parametrize(("client_timeout_s", "subtask_timeout_s"), [(0.3, 10.0), (10.0, 0.3)],
                         ids=["client-timeout", "subtask-timeout"])
def test_slow_endpoint_ends_in_a_timeout_quickly(
    compiled, make_context, llm_server, catalog_file, stub, endpoints,
    client_timeout_s, subtask_timeout_s,
):
    endpoints("acme/slow", timeout_s=client_timeout_s)
    stub.script("acme--slow", Reply(json=[{"summary_text": "late"}], delay_s=5))
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    catalog = catalog_file(("summarization", "acme/slow", 100))
    started = time.monotonic()
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog,
                                     subtask_timeout_s=subtask_timeout_s, subtask_retries=0))
    elapsed = time.monotonic() - started

    result = out["results"][0]
    assert result.status == "failed" and result.attempts == 1
    assert result.error.startswith("ToolTimeoutError")
    assert elapsed < 3


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# tool, its arguments (files named by key), the endpoint's reply, what the tool returns
TOOL_CASES = [
    ("token_classification", {"text": "I am Sarah"},
     [{"entity_group": "PER", "score": 0.9, "word": "Sarah", "start": 5, "end": 10}],
     [{"entity_group": "PER", "score": 0.9, "word": "Sarah", "start": 5, "end": 10}]),
    ("translation", {"text": "hello", "tgt_lang": "fr_XX", "src_lang": "en_XX"},
     [{"translation_text": "bonjour"}], "bonjour"),
    ("question_answering", {"question": "Where?", "text": "In Paris."},
     {"answer": "Paris", "score": 0.9, "start": 3, "end": 8}, "Paris"),
    ("text_generation", {"text": "Once"}, [{"generated_text": "Once upon"}], "Once upon"),
    ("sentence_similarity", {"text": "a", "text2": "b"}, [0.75], 0.75),
    ("feature_extraction", {"text": "a"}, [[0.5, 0.25]], [0.5, 0.25]),
    ("feature_extraction", {"text": "a"}, [[[0.5, 0.0], [0.0, 1.0]]], [0.25, 0.5]),  # per token
    ("tabular_classification", {"table": "table"}, ["5", "6"],
     [{"row": 0, "label": "5"}, {"row": 1, "label": "6"}]),
    ("image_classification", {"image": "image"}, [{"label": "cat", "score": 0.9}],
     [{"label": "cat", "score": 0.9}]),
    ("image_to_text", {"image": "image"}, [{"generated_text": "a cat"}], "a cat"),
    ("visual_question_answering", {"image": "image", "question": "How many?"},
     [{"answer": "one", "score": 0.1}, {"answer": "two", "score": 0.8}], "two"),
    ("document_question_answering", {"image": "image", "question": "Total?"},
     [{"answer": "42", "score": 0.9, "start": 1, "end": 2}], "42"),
    ("automatic_speech_recognition", {"audio": "audio"}, {"text": "hello"}, "hello"),
    ("audio_classification", {"audio": "audio"}, [{"label": "dog", "score": 0.7}],
     [{"label": "dog", "score": 0.7}]),
]


@pytest.mark.parametrize(("name", "args", "reply", "expected"), TOOL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TOOL_CASES)])
def test_each_tool_maps_the_client_output(stub, tmp_path, name, args, reply, expected):
    files = {"image": tmp_path / "photo.png", "audio": tmp_path / "speech.wav",
             "table": tmp_path / "rows.csv"}
    files["image"].write_bytes(_png())
    files["audio"].write_bytes(_wav())
    files["table"].write_text("a,b\n1,2\n3,4\n")
    hf_inference.configure({"acme/model": stub.url_for("model")})
    stub.script("model", Reply(json=reply))
    kwargs = {k: files[v] if k in files else v for k, v in args.items()}
    assert getattr(hf_tools, name)(model="acme/model", **kwargs) == expected
    assert len(stub.requests("model")) == 1


def test_media_outputs_become_artifacts(stub, tmp_path):
    store = ArtifactStore(tmp_path)
    ctx = ToolContext(subtask_id=0, task="x", model="acme/model", artifacts=store)
    photo = tmp_path / "photo.png"
    photo.write_bytes(_png())
    hf_inference.configure({"acme/model": stub.url_for("model")})
    mask = _png(color=(255, 255, 255))
    stub.script("model",
                Reply(json=[{"label": "cat", "score": 0.9, "mask": _b64(mask)}]),
                Reply(body=_png(color=(0, 0, 255)), content_type="image/png"),
                Reply(body=_wav(), content_type="audio/wav"),
                Reply(json=[{"label": "speech", "content-type": "audio/flac",
                             "blob": _b64(b"fLaC-stream")}]))

    segmented = hf_tools.image_segmentation(photo, "acme/model", ctx)
    assert segmented["segments"] == [{"label": "cat", "score": 0.9}]
    with Image.open(store.resolve(segmented["image"])) as image:
        assert image.getpixel((0, 0)) != (0, 0, 0)  # the segment is painted
    edited = hf_tools.image_to_image(photo, "acme/model", ctx, text="bluer")
    with Image.open(store.resolve(edited)) as image:
        assert image.convert("RGB").getpixel((0, 0)) == (0, 0, 255)
    assert stub.requests("model")[1].json["parameters"] == {"prompt": "bluer"}
    speech = hf_tools.text_to_speech("hi", "acme/model", ctx)
    assert speech["kind"] == "audio" and speech["path"].endswith(".wav")
    assert store.resolve(speech).read_bytes() == _wav()
    cleaned = hf_tools.audio_to_audio(photo, "acme/model", ctx)
    assert store.resolve(cleaned).read_bytes() == b"fLaC-stream"
    assert cleaned["path"].endswith(".flac")


def test_task_the_endpoint_protocol_lacks_is_a_permanent_error(stub, tmp_path):
    ctx = ToolContext(subtask_id=0, task="text-to-video", model="acme/model",
                      artifacts=ArtifactStore(tmp_path))
    hf_inference.configure({"acme/model": stub.url_for("model")})
    with pytest.raises(ToolExecutionError, match="not supported") as caught:
        hf_tools.text_to_video("a cat", "acme/model", ctx)
    assert not isinstance(caught.value, TransientToolError)
    assert stub.requests() == []


def test_offline_mode_is_a_permanent_error_with_its_reason(monkeypatch, stub):
    hf_inference.configure({"acme/sentiment": stub.url_for("acme--sentiment")})
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(ToolExecutionError, match="offline mode") as caught:
        hf_tools.text_classification("hi", "acme/sentiment")
    # the executor would retry either
    assert not isinstance(caught.value, (ConnectionError, TransientToolError))
    assert stub.requests() == []


def test_available_with_an_endpoint(hf_online):
    hf_inference.configure({"acme/tgi": "http://127.0.0.1:1/generate"})
    assert hf_inference.available("acme/tgi")
    assert not hf_inference.available("acme/other")  # no token


def test_not_available_without_token_or_endpoint(hf_online):
    assert not hf_inference.available("acme/sentiment")


def test_available_with_a_token_when_online_and_a_provider_serves_it(hf_online, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    clear_serving()
    with MiniHub() as hub:  # the Hub says which providers serve which model
        monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", hub.url)
        hub.add_model("acme/sentiment", files={"config.json": b"{}"}, info={
            "inferenceProviderMapping": [{"provider": "hf-inference", "providerId": "x",
                                          "task": "text-classification", "status": "live"}]})
        hub.add_model("acme/unserved", files={"config.json": b"{}"})
        assert hf_inference.available("acme/sentiment")
        assert hf_inference.available("acme/sentiment", "text-classification")
        assert not hf_inference.available("acme/sentiment", "summarization")
        assert not hf_inference.available("acme/unserved")  # a token alone is not enough
    clear_serving()


def test_nothing_is_available_offline(monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    hf_inference.configure({"acme/tgi": "http://127.0.0.1:1/generate"})
    assert not hf_inference.available("acme/sentiment")
    assert not hf_inference.available("acme/tgi")  # huggingface_hub would refuse the call


def test_unavailable_models_are_not_candidates(compiled, make_context, llm_server, catalog_file,
                                               hf_online):
    llm_server.script("planner", _plan(_sub(0, "summarization", [], text="x")))
    catalog = catalog_file(("summarization", "acme/summarizer", 100))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog))
    assert out["selections"][0].model is None
    # not run, and its result says why (was: no result at all; issue 12)
    assert out["results"][0].status == "failed" and out["results"][0].attempts == 0
    assert out["results"][0].error == out["selections"][0].reason


def test_registers_the_task_types_the_client_supports():
    expected = {
        "text-classification", "zero-shot-classification", "token-classification",
        "summarization", "translation", "question-answering", "text-generation",
        "conversational", "sentence-similarity", "feature-extraction",
        "tabular-classification", "image-classification", "object-detection",
        "image-segmentation", "image-to-text", "image-to-image", "text-to-image",
        "text-to-video", "visual-question-answering", "document-question-answering",
        "text-to-speech", "automatic-speech-recognition", "audio-classification",
        "audio-to-audio", "fill-mask", "zero-shot-image-classification", "image-text-to-text",
        "table-question-answering",
    }
    assert set(hf_inference.REGISTERED_TASKS) == expected
    for task in expected:
        [tool] = find_tools(task, "any/model", ["hf-inference"])
        assert tool.unavailable is not None and tool.available is None
        assert tool.why_not("any/model") == hf_inference.unavailable_reason(task, "any/model")
    assert find_tools("depth-estimation", "any/model", ["hf-inference"]) == []
