"""LangChain's ``provider:model`` strings, through the real integration packages talking
HTTP to local stubs of the providers' APIs: Anthropic's Messages API (server-sent
events, a ``tool_use`` block for structured output) and Ollama's ``/api/chat`` (NDJSON).

The stubs answer what :class:`tests.llm_server.ScriptedLLMServer` is scripted with, per
role, in each provider's own wire format.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from hugginggpt.cli import main
from tests.llm_server import Reply, ScriptedLLMServer, role_of

PLAN = {"subtasks": [{"id": 0, "task": "sentence-similarity", "dep": [],
                      "args": {"text": "I love dogs", "text2": "Dogs are great"}}]}
REQUEST = "how similar are these?"


def _send(handler: BaseHTTPRequestHandler, status: int, content_type: str,
          data: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _ProviderStub(ScriptedLLMServer):
    """A scripted server in another provider's wire format: :meth:`_as_openai` gives
    the request as :func:`role_of` reads it, :meth:`_reply` and :meth:`_error` answer."""

    def _as_openai(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    def _serve(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        seen = self._as_openai(body)
        with self._lock:
            self.requests.append(seen)
        reply = self._next_reply(role_of(seen))
        if reply is None:
            return self._error(handler, 500, f"no scripted reply left for {role_of(seen)}")
        time.sleep(reply.get("delay", 0))
        if "status" in reply:
            return self._error(handler, reply["status"], f"scripted HTTP {reply['status']}")
        if reply.get("garbage"):  # a proxy's error page, say
            return _send(handler, 200, "application/json", b"<html>Bad gateway</html>")
        self._reply(handler, body, reply)

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
               reply: Reply) -> None:
        raise NotImplementedError

    def _error(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        raise NotImplementedError


class AnthropicStub(_ProviderStub):
    """``POST /v1/messages``, whole or streamed as server-sent events."""

    def _as_openai(self, body: dict[str, Any]) -> dict[str, Any]:
        system = {"role": "system", "content": body.get("system") or ""}
        return body | {"messages": [system, *body.get("messages", [])]}

    def _error(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        payload = {"type": "error", "error": {"type": kind, "message": message}}
        _send(handler, status, "application/json", json.dumps(payload).encode())

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
               reply: Reply) -> None:
        tools = body.get("tools") or []
        if "tool_args" in reply:
            args = reply["tool_args"]
            text = args if isinstance(args, str) else json.dumps(args)
            block = {"type": "tool_use", "id": "toolu_1", "name": tools[0]["name"],
                     "input": json.loads(text)}
            stop = "tool_use"
        else:
            text = reply.get("content") or ""
            block = {"type": "text", "text": text}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": reply.get("tokens", 5)}
        message = {"id": "msg_1", "type": "message", "role": "assistant",
                   "model": body["model"], "stop_sequence": None}
        if not body.get("stream"):
            payload = message | {"content": [block], "stop_reason": stop, "usage": usage}
            return _send(handler, 200, "application/json", json.dumps(payload).encode())
        start = (block | {"input": {}} if block["type"] == "tool_use"
                 else block | {"text": ""})
        delta = ({"type": "input_json_delta", "partial_json": text}
                 if block["type"] == "tool_use" else {"type": "text_delta", "text": text})
        events = [
            ("message_start", {"message": message | {
                "content": [], "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ("content_block_start", {"index": 0, "content_block": start}),
            ("content_block_delta", {"index": 0, "delta": delta}),
            ("content_block_stop", {"index": 0}),
            ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": usage}),
            ("message_stop", {}),
        ]
        data = "".join(f"event: {name}\ndata: {json.dumps({'type': name} | payload)}\n\n"
                       for name, payload in events)
        _send(handler, 200, "text/event-stream", data.encode())


class OllamaStub(_ProviderStub):
    """``POST /api/chat``: one NDJSON line, the whole reply."""

    def _error(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        _send(handler, status, "application/json", json.dumps({"error": message}).encode())

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
               reply: Reply) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content") or ""}
        if "tool_args" in reply:
            args = reply["tool_args"]
            name = (body.get("tools") or [{}])[0].get("function", {}).get("name", "PlanReply")
            message["tool_calls"] = [{"function": {
                "name": name, "arguments": json.loads(args) if isinstance(args, str) else args}}]
        line = {"model": body["model"], "created_at": "2026-12-03T00:00:00Z",
                "message": message, "done": True, "done_reason": "stop",
                "prompt_eval_count": 10, "eval_count": reply.get("tokens", 5)}
        _send(handler, 200, "application/x-ndjson", (json.dumps(line) + "\n").encode())


@pytest.fixture
def anthropic_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicStub]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    server = AnthropicStub().start()
    server.url = server.url.removesuffix("/v1")
    yield server
    server.stop()


@pytest.fixture
def ollama_stub() -> Iterator[OllamaStub]:
    server = OllamaStub().start()
    server.url = server.url.removesuffix("/v1")
    yield server
    server.stop()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _cli(capsys: pytest.CaptureFixture[str], llm: str, url: str, workspace: Any,
         *extra: str) -> tuple[int, str, str]:
    return _run(capsys, "run", REQUEST, "--llm", llm, "--llm-base-url", url,
                "--planner", "llm", "--backend", "lite", "--json",
                "--workspace", str(workspace), *extra)


@pytest.mark.parametrize("stub, llm", [("anthropic_stub", "anthropic:claude-x"),
                                       ("ollama_stub", "ollama:qwen3:4b")])
def test_a_provider_string_plans_selects_and_answers(request, capsys, workspace, stub, llm):
    server = request.getfixturevalue(stub)
    server.script("planner", {"tool_args": PLAN})
    server.script("responder", {"content": "They are quite similar."})
    code, out, err = _cli(capsys, llm, server.url, workspace)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["response"] == "They are quite similar."
    assert doc["plan"][0]["task"] == "sentence-similarity"
    assert doc["selections"]["0"]["backend"] == "lite"
    assert doc["results"]["0"]["outputs"]["score"] > 0.5
    assert doc["planner"] == f"llm: {llm} @ {server.url}"
    model = llm.split(":", 1)[1]
    assert [r["model"] for r in server.requests] == [model, model]
    assert doc["usage"]["by_role"] == {"planner": 1, "responder": 1}
    assert doc["usage"]["prompt_tokens"] == 20 and doc["usage"]["completion_tokens"] == 10
    planned = server.calls("planner")[0]
    assert planned["tools"], "the plan is asked for as a tool call"


def test_anthropic_is_asked_with_its_own_key_never_openai_s(capsys, workspace,
                                                            anthropic_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-key")
    seen: list[str | None] = []
    serve = anthropic_stub._serve

    def keep_key(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        seen.append(handler.headers.get("x-api-key") or handler.headers.get("authorization"))
        serve(handler, body)

    anthropic_stub._serve = keep_key  # type: ignore[method-assign]
    anthropic_stub.script("planner", {"tool_args": PLAN})
    code, _, err = _cli(capsys, "anthropic:claude-x", anthropic_stub.url, workspace)
    assert code == 0, err
    assert seen and all(h is not None and h.endswith("sk-ant-the-key") for h in seen), seen


def test_anthropic_without_its_key_is_refused_before_any_request(capsys, workspace,
                                                                   anthropic_stub):
    code, out, err = _run(capsys, "run", REQUEST, "--llm", "anthropic:claude-x",
                          "--planner", "llm", "--backend", "lite", "--json",
                          "--workspace", str(workspace))
    assert anthropic_stub.requests == []
    assert "ANTHROPIC_API_KEY" in out + err


@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.parametrize("stub, llm", [("llm_server", "scripted"),
                                       ("anthropic_stub", "anthropic:claude-x"),
                                       ("ollama_stub", "ollama:qwen3:4b")])
def test_an_http_error_aborts_as_for_openai(request, capsys, workspace, monkeypatch, stub,
                                            llm, status):
    monkeypatch.setenv("HUGGINGGPT_LLM_RETRIES", "1")
    server = request.getfixturevalue(stub)
    server.script("planner", *[{"status": status}] * 2)
    code, out, err = _cli(capsys, llm, server.url, workspace)
    doc = json.loads(out)
    assert (code, doc["status"]) == (5, "aborted"), err
    assert len(server.calls("planner")) == 2  # retried once, as the status allows
    assert f"answered HTTP {status}; check its logs, or retry later" in doc["abort_reason"]
    assert "the LLM planner failed" in doc["abort_reason"] and doc["results"] == {}
    assert "Traceback" not in err


@pytest.mark.parametrize("stub, llm", [("anthropic_stub", "anthropic:claude-x"),
                                       ("ollama_stub", "ollama:qwen3:4b")])
def test_a_reply_that_cannot_be_read_aborts_cleanly(request, capsys, workspace, monkeypatch,
                                                    stub, llm):
    monkeypatch.setenv("HUGGINGGPT_LLM_RETRIES", "0")
    server = request.getfixturevalue(stub)
    server.script("planner", {"garbage": True})
    code, out, err = _cli(capsys, llm, server.url, workspace)
    doc = json.loads(out)
    assert (code, doc["status"]) == (5, "aborted"), err
    assert "the reply could not be read" in doc["abort_reason"]
    assert "Traceback" not in err


def test_a_refused_connection_is_told_as_for_openai(capsys, workspace):
    code, out, err = _cli(capsys, "ollama:qwen3:4b", "http://127.0.0.1:9", workspace)
    doc = json.loads(out)
    assert doc["status"] == "aborted", err
    assert "is the server running" in doc["abort_reason"]


@pytest.mark.skipif(importlib.util.find_spec("langchain_groq") is not None,
                    reason="langchain-groq is installed")
def test_a_missing_package_says_which_extra_to_install(capsys, workspace):
    code, _, err = _run(capsys, "run", REQUEST, "--llm", "groq:llama-3.3-70b",
                        "--backend", "lite", "--workspace", str(workspace))
    assert code == 2
    assert "pip install 'hugginggpt[groq]'" in err
    assert "Traceback" not in err and "ImportError" not in err


def test_an_unknown_provider_is_a_usage_error(capsys, workspace):
    code, _, err = _run(capsys, "run", REQUEST, "--llm", "antropic:claude-x",
                        "--backend", "lite", "--workspace", str(workspace))
    assert code == 2
    assert "unknown LLM provider 'antropic'" in err
    assert "anthropic:claude-sonnet-4-5" in err and "anthropic, " in err


def test_a_tagged_model_on_an_openai_compatible_server_is_no_provider(
        capsys, workspace, llm_server):
    llm_server.script("planner", {"tool_args": PLAN})
    code, out, err = _cli(capsys, "qwen3:4b", llm_server.url, workspace)
    assert code == 0, err
    assert llm_server.requests[0]["model"] == "qwen3:4b"


def test_routing_fails_over_from_one_provider_to_another(capsys, workspace, monkeypatch,
                                                        anthropic_stub, ollama_stub):
    endpoints = [{"name": "claude", "model": "anthropic:claude-x",
                  "base_url": anthropic_stub.url, "tier": "large"},
                 {"name": "local", "model": "ollama:qwen3:4b", "base_url": ollama_stub.url,
                  "tier": "large"}]
    monkeypatch.setenv("HUGGINGGPT_LLM_ENDPOINTS", json.dumps(endpoints))
    monkeypatch.setenv("HUGGINGGPT_LLM_ROUTING", "strongest")
    anthropic_stub.script("planner", {"status": 500})
    ollama_stub.script("planner", {"tool_args": PLAN})
    ollama_stub.script("responder", {"content": "They are quite similar."})
    anthropic_stub.script("responder", {"content": "They are quite similar."})
    code, out, err = _run(capsys, "run", REQUEST, "--planner", "llm", "--backend", "lite",
                          "--json", "--workspace", str(workspace))
    assert code == 0, err
    doc = json.loads(out)
    planner = [c for c in doc["llm_calls"] if c["role"] == "planner"]
    assert [(c["endpoint"], c["ok"]) for c in planner] == [("claude", False), ("local", True)]
    assert doc["plan"][0]["task"] == "sentence-similarity"
