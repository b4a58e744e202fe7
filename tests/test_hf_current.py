"""hf-inference up to date (issue 13, item 7), against the local stub over real HTTP.

- ``bill_to``: the ``X-HF-Bill-To`` header on requests that carry the Hugging Face token,
  never on a third-party endpoint;
- ``hf:`` LLMs: the run's provider through langchain-huggingface, streamed;
- failures classified by huggingface_hub's own types, so timeouts and 503s are retried
  and 4xx are not;
- the async path: a hanging endpoint is cut at the subtask timeout, its connection
  closed and no thread left behind.

The stub plays the Hugging Face router (``INFERENCE_PROXY_TEMPLATE``) and the Hub API
(``constants.ENDPOINT``) where a test needs them: huggingface_hub reads both when it
makes a request.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub.errors import HfHubHTTPError, InferenceTimeoutError
from huggingface_hub.utils import httpx as hub_httpx
from langchain_core.messages import HumanMessage

from hugginggpt.cli import _parser
from hugginggpt.cli.run import context_from
from hugginggpt.graph.context import Context
from hugginggpt.tools.errors import ToolExecutionError, ToolTimeoutError, TransientToolError
from hugginggpt.tools.experts import hf_inference
from hugginggpt.tools.experts.hf_inference.client import _translate
from hugginggpt.tools.llm.client import complete
from hugginggpt.tools.llm.config import ConfigError, parse_config, routing_config
from tests.conftest import run
from tests.hf_stub import HFStubServer, Reply

HF_INFERENCE_CODE = str(Path(hf_inference.__file__).parent)


def _plan(*subtasks: dict) -> dict:
    return {"tool_args": {"subtasks": list(subtasks)}}


def _sub(i: int, task: str, **args: str) -> dict:
    return {"id": i, "task": task, "dep": [], "args": args}


def _header(request, name: str) -> str | None:
    return next((v for k, v in request.headers.items() if k.lower() == name.lower()), None)


@pytest.fixture(autouse=True)
def hf_online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Online (huggingface_hub's offline mode blocks even loopback calls), no saved
    token, the backend's default configuration."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(tmp_path / "no-token"))
    hf_inference.configure()
    yield
    hf_inference.configure()


@pytest.fixture
def stub() -> Iterator[HFStubServer]:
    server = HFStubServer().start()
    yield server
    server.stop()


@pytest.fixture
def hub_at_stub(stub: HFStubServer, monkeypatch: pytest.MonkeyPatch) -> HFStubServer:
    """The stub as the Hugging Face router (``/router/{provider}/...``) and the Hub API
    (``/hub/api/models/...``), with a Hugging Face token (requests to the router carry
    one)."""
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setattr("huggingface_hub.constants.INFERENCE_PROXY_TEMPLATE",
                        f"{stub.url}/router/{{provider}}")
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", f"{stub.url}/hub")
    return stub


# --- bill_to ------------------------------------------------------------------------------


def _chat_reply(content: str) -> dict:
    return {"id": "c1", "created": 1, "model": "acme/chat-together", "system_fingerprint": "",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}


def _served_by_together(model: str) -> Reply:
    """The Hub API's answer for a model that the provider ``together`` serves for chat."""
    return Reply(json={"id": model, "inferenceProviderMapping": {
        "together": {"providerId": f"{model}-together", "status": "live",
                     "task": "conversational"}}})


def test_bill_to_goes_with_the_token_to_the_provider_and_not_to_a_third_party(
    compiled, make_context, llm_server, catalog_file, hub_at_stub
):
    stub = hub_at_stub
    # asked twice: by selection (is it served, by whom?) and by huggingface_hub's client
    # (the provider's own model id), each from its own per-process cache
    stub.script("hub", _served_by_together("acme/chatter"), _served_by_together("acme/chatter"))
    stub.script("router", Reply(json=_chat_reply("Hello from together")))
    stub.script("tgi", Reply(json=[{"summary_text": "short"}]))
    llm_server.script("planner", _plan(_sub(0, "conversational", text="Hi!"),
                                       _sub(1, "summarization", text="a long text")))
    catalog = catalog_file(("conversational", "acme/chatter", 100),
                           ("summarization", "acme/summarizer", 100))
    out = run(compiled, make_context(
        backend="hf-inference", catalog=catalog, hf_provider="together",
        hf_bill_to="acme-org", hf_endpoints={"acme/summarizer": stub.url_for("tgi")}))

    results = out["results"]
    assert {r.status for r in results.values()} == {"done"}, [r.error for r in results.values()]
    assert results[0].outputs["text"] == "Hello from together"
    lookups = stub.requests("hub")  # the provider's model id, from the Hub's mapping
    assert len(lookups) == 2
    assert all(x.path.startswith("/hub/api/models/acme/chatter") for x in lookups)
    [routed] = stub.requests("router")  # the provider's route, with the token and the org
    assert routed.path == "/router/together/v1/chat/completions"
    assert routed.json["model"] == "acme/chatter-together"
    assert _header(routed, "Authorization") == "Bearer hf_test_token"
    assert _header(routed, "X-HF-Bill-To") == "acme-org"
    [third_party] = stub.requests("tgi")  # neither the token nor the org
    assert _header(third_party, "X-HF-Bill-To") is None
    assert "hf_test_token" not in (_header(third_party, "Authorization") or "")


def test_bill_to_from_the_environment_and_the_flag(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_HF_BILL_TO", "env-org")
    assert Context().hf_bill_to == "env-org"
    assert Context().backend_settings()["hf-inference"]["bill_to"] == "env-org"
    assert Context(hf_bill_to="run-org").backend_settings()["hf-inference"]["bill_to"] == "run-org"
    args = _parser().parse_args(["run", "Summarize: a text", "--hf-bill-to", "flag-org"])
    assert context_from(args).hf_bill_to == "flag-org"  # the flag wins over the environment


# --- hf: LLMs: the provider, bill_to, streaming ------------------------------------------------


def _sse(*pieces: str) -> bytes:
    """A streamed chat completion as server-sent events, usage in the last chunk."""
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1,
            "model": "acme/chat-together", "system_fingerprint": ""}
    chunks = [base | {"choices": [{"index": 0, "finish_reason": None,
                                   "delta": {"role": "assistant", "content": piece}}]}
              for piece in pieces]
    chunks[-1]["choices"][0]["finish_reason"] = "stop"
    chunks.append(base | {"choices": [], "usage": {
        "prompt_tokens": 7, "completion_tokens": len(pieces),
        "total_tokens": 7 + len(pieces)}})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def test_hf_llm_streams_through_the_runs_provider_billed_to_the_org(hub_at_stub):
    stub = hub_at_stub
    stub.script("hub", _served_by_together("acme/chat"))
    stub.script("router", Reply(body=_sse("Bonjour", " le", " monde"),
                                content_type="text/event-stream"))
    settings = Context(llm="hf:acme/chat", hf_provider="together", hf_bill_to="acme-org",
                       llm_max_retries=0)
    calls: list = []
    reply = complete(settings, "responder", [HumanMessage("Say hello in French")], calls=calls)

    assert reply.content == "Bonjour le monde"
    [call] = calls
    assert call.ok and call.ttft_s is not None  # streamed: the first token was timed
    assert (call.prompt_tokens, call.completion_tokens) == (7, 3)
    [chat] = stub.requests("router")
    assert chat.path == "/router/together/v1/chat/completions"  # the provider's route
    assert chat.json["model"] == "acme/chat-together" and chat.json["stream"] is True
    assert _header(chat, "X-HF-Bill-To") == "acme-org"
    assert _header(chat, "Authorization") == "Bearer hf_test_token"


def test_hf_llm_reply_cut_mid_stream_is_a_failed_call(stub):
    events = _sse("Bonjour", " le", " monde").split(b"\n\n")
    cut = b"\n\n".join(events[:2]) + b"\n\n"  # two pieces, then the server stops: no end
    stub.script("tgi", Reply(body=cut, content_type="text/event-stream"))
    settings = Context(llm=f"hf:{stub.url_for('tgi')}", llm_max_retries=0)
    calls: list = []
    with pytest.raises(Exception) as caught:
        complete(settings, "responder", [HumanMessage("Say hello")], calls=calls)
    assert type(caught.value).__name__ == "StreamInterruptedError"
    assert [c.ok for c in calls] == [False]


def test_the_runs_provider_and_bill_to_apply_to_hf_llms_only():
    config = routing_config(Context(llm_endpoints=[
        {"name": "hub", "model": "hf:org/m"},
        {"name": "tgi", "model": "hf:http://127.0.0.1:9"},
        {"name": "oai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
        {"name": "own", "model": "hf:org/n", "provider": "groq", "bill_to": "other"},
    ], hf_provider="together", hf_bill_to="acme"))
    assert config is not None
    by = {e.name: e for e in config.endpoints}
    assert (by["hub"].provider, by["hub"].bill_to) == ("together", "acme")
    assert (by["tgi"].provider, by["tgi"].bill_to) == (None, "acme")  # a server of its own
    assert (by["oai"].provider, by["oai"].bill_to) == (None, None)
    assert (by["own"].provider, by["own"].bill_to) == ("groq", "other")
    assert all(e.streams for e in config.endpoints)
    with pytest.raises(ConfigError, match="Hugging Face endpoints"):
        parse_config([{"model": "m", "provider": "together"}])
    with pytest.raises(ConfigError, match="a server of its own"):
        parse_config([{"model": "hf:http://127.0.0.1:9", "provider": "together"}])


# --- failures, classified at huggingface_hub's level ----------------------------------------


def _http_error(status: int) -> HfHubHTTPError:
    request = hub_httpx.Request("POST", "http://127.0.0.1:9/m")
    return HfHubHTTPError(f"HTTP {status}", response=hub_httpx.Response(
        status, json={"error": "scripted"}, request=request))


@pytest.mark.parametrize(("exc", "expected", "retried"), [
    (InferenceTimeoutError("Inference call timed out"), ToolTimeoutError, True),
    (hub_httpx.ReadTimeout("read timed out"), ToolTimeoutError, True),
    (hub_httpx.ConnectError("connection refused"), TransientToolError, True),
    (hub_httpx.RemoteProtocolError("peer closed connection"), TransientToolError, True),
    (_http_error(503), TransientToolError, True),
    (_http_error(429), TransientToolError, True),
    (_http_error(400), ToolExecutionError, False),
    (_http_error(404), ToolExecutionError, False),
], ids=["inference-timeout", "read-timeout", "connect", "dropped", "503", "429", "400", "404"])
def test_failures_are_classified_by_huggingface_hubs_types(exc, expected, retried):
    typed = _translate(exc, "acme/model")
    assert type(typed) is expected
    assert isinstance(typed, TransientToolError) is retried


def test_a_client_timeout_is_retried_then_succeeds(
    compiled, make_context, llm_server, catalog_file, stub
):
    hf_inference.configure({"acme/slow": stub.url_for("slow")}, timeout_s=0.3)
    stub.script("slow", Reply(json=[{"summary_text": "late"}], delay_s=2),
                Reply(json=[{"summary_text": "in time"}]))
    llm_server.script("planner", _plan(_sub(0, "summarization", text="x")))
    catalog = catalog_file(("summarization", "acme/slow", 100))
    out = run(compiled, make_context(backend="hf-inference", catalog=catalog, subtask_retries=1))

    result = out["results"][0]
    assert result.status == "done" and result.outputs["text"] == "in time"
    assert [a.error_type for a in result.attempt_log] == ["ToolTimeoutError", None]
    assert "sent no reply within 0.3s" in result.attempt_log[0].error
    assert len(stub.requests("slow")) == 2


# --- the async path: a timeout cancels the request -------------------------------------------


def _threads_in_hf_inference() -> list[str]:
    """Threads whose stack is inside the hf-inference backend now."""
    frames = sys._current_frames()
    busy = []
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        if frame is not None and thread is not threading.current_thread() and any(
                HF_INFERENCE_CODE in f.f_code.co_filename for f, _ in traceback.walk_stack(frame)):
            busy.append(thread.name)
    return busy


@pytest.mark.parametrize("path", ["ainvoke", "invoke"])
def test_a_hanging_endpoint_is_cut_at_the_timeout_and_its_connection_closed(
    compiled, make_context, llm_server, catalog_file, stub, path
):
    hf_inference.configure({"acme/hangs": stub.url_for("hangs")}, timeout_s=60)
    stub.script("hangs", Reply(hang=True))
    llm_server.script("planner", _plan(_sub(0, "summarization", text="x")))
    catalog = catalog_file(("summarization", "acme/hangs", 100))
    context = make_context(backend="hf-inference", catalog=catalog, subtask_timeout_s=0.5,
                           subtask_retries=0)
    started = time.monotonic()
    if path == "ainvoke":
        out = asyncio.run(compiled.ainvoke({"request": "do it"},
                                           {"configurable": {"thread_id": "t"}}, context=context))
    else:
        out = run(compiled, context)
    elapsed = time.monotonic() - started

    result = out["results"][0]
    assert result.status == "failed" and result.error.startswith("ToolTimeoutError")
    assert elapsed < 5, elapsed  # the client's own timeout is 60 s
    # the request was cancelled: its connection is closed, nothing waits for a reply
    assert stub.wait_hangup("hangs", timeout_s=2.0)
    assert _threads_in_hf_inference() == []
