"""Local stubs of LLM providers' own APIs, for the real LangChain integrations to talk to.

Each is a :class:`tests.llm_server.ScriptedLLMServer` (scripted per role, a reply may
carry ``status``, ``garbage`` or ``delay``) that speaks another wire format:

- :class:`AnthropicStub`: Anthropic's Messages API, ``POST /v1/messages``, whole or as
  server-sent events; structure as a ``tool_use`` block, or a JSON text block when asked
  for ``output_config``'s JSON schema.
- :class:`OllamaStub`: Ollama's ``POST /api/chat``, one NDJSON line; structure as
  ``tool_calls``, or JSON content when asked with ``format``.
- :class:`GoogleStub`: the Gemini API, ``POST .../models/{model}:generateContent``, or
  ``:streamGenerateContent?alt=sse``; structure as a ``functionCall`` part, or JSON text
  when asked with ``responseJsonSchema``; ``usageMetadata`` with the token counts.

The OpenAI protocol needs no stub of its own: it is the scripted server itself.
A stub sees each request as :func:`tests.llm_server.role_of` reads it (a system message
first) in ``requests``, with the provider's own fields kept beside.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.llm_server import Reply, ScriptedLLMServer, role_of

__all__ = ["AnthropicStub", "OllamaStub", "GoogleStub", "asked_for_structure"]


def _send(handler: BaseHTTPRequestHandler, status: int, content_type: str,
          data: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _json(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args)


def asked_for_structure(request: dict[str, Any]) -> str | None:
    """How a request (as a stub saw it) asked for structure: ``tools``, or the
    provider's JSON schema field; None when it was asked plainly."""
    config = request.get("generationConfig") or {}
    for how, present in (("tools", request.get("tools")),
                         ("output_config", request.get("output_config")),
                         ("format", request.get("format")),
                         ("response_format", request.get("response_format")),
                         ("responseJsonSchema", config.get("responseJsonSchema"))):
        if present:
            return how
    return None


class _ProviderStub(ScriptedLLMServer):
    """A scripted server in another provider's wire format: :meth:`_as_openai` gives
    the request as :func:`role_of` reads it, :meth:`_reply` and :meth:`_error` answer."""

    def _as_openai(self, handler: BaseHTTPRequestHandler,
                   body: dict[str, Any]) -> dict[str, Any]:
        return body

    def _serve(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        seen = self._as_openai(handler, body)
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
        self._reply(handler, seen, reply)

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
               reply: Reply) -> None:
        raise NotImplementedError

    def _error(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        raise NotImplementedError


class AnthropicStub(_ProviderStub):
    """``POST /v1/messages``, whole or streamed as server-sent events."""

    def _as_openai(self, handler: BaseHTTPRequestHandler,
                   body: dict[str, Any]) -> dict[str, Any]:
        system = {"role": "system", "content": body.get("system") or ""}
        return body | {"messages": [system, *body.get("messages", [])]}

    def _error(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        payload = {"type": "error", "error": {"type": kind, "message": message}}
        _send(handler, status, "application/json", json.dumps(payload).encode())

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
               reply: Reply) -> None:
        tools = body.get("tools") or []
        if "tool_args" in reply and tools:
            text = _json(reply["tool_args"])
            block = {"type": "tool_use", "id": "toolu_1", "name": tools[0]["name"],
                     "input": json.loads(text)}
            stop = "tool_use"
        else:  # plain text, or JSON asked for by output_config's schema
            text = _json(reply["tool_args"]) if "tool_args" in reply else (
                reply.get("content") or "")
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
        if "tool_args" in reply and body.get("tools"):
            args = reply["tool_args"]
            name = body["tools"][0].get("function", {}).get("name", "PlanReply")
            message["tool_calls"] = [{"function": {
                "name": name, "arguments": json.loads(args) if isinstance(args, str) else args}}]
        elif "tool_args" in reply:  # asked with format: the JSON is the content
            message["content"] = _json(reply["tool_args"])
        line = {"model": body["model"], "created_at": "2026-12-03T00:00:00Z",
                "message": message, "done": True, "done_reason": "stop",
                "prompt_eval_count": 10, "eval_count": reply.get("tokens", 5)}
        _send(handler, 200, "application/x-ndjson", (json.dumps(line) + "\n").encode())


class GoogleStub(_ProviderStub):
    """The Gemini API: ``POST {base}/{version}/models/{model}:generateContent``, or
    ``:streamGenerateContent?alt=sse`` (one event, the whole reply)."""

    def _as_openai(self, handler: BaseHTTPRequestHandler,
                   body: dict[str, Any]) -> dict[str, Any]:
        def text(content: dict[str, Any] | None) -> str:
            return "".join(p.get("text", "") for p in (content or {}).get("parts", []))

        model = handler.path.split("/models/", 1)[-1].split(":", 1)[0]
        messages = [{"role": "system", "content": text(body.get("systemInstruction"))}]
        messages += [{"role": c.get("role", "user"), "content": text(c)}
                     for c in body.get("contents", [])]
        return body | {"model": model, "messages": messages,
                       "stream": ":streamGenerateContent" in handler.path,
                       "key": handler.headers.get("x-goog-api-key")}

    def _error(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        kind = {429: "RESOURCE_EXHAUSTED", 404: "NOT_FOUND", 503: "UNAVAILABLE"}.get(
            status, "INTERNAL")
        payload = {"error": {"code": status, "message": message, "status": kind}}
        _send(handler, status, "application/json", json.dumps(payload).encode())

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
               reply: Reply) -> None:
        declared = [f for tool in body.get("tools") or []
                    for f in tool.get("functionDeclarations", [])]
        if "tool_args" in reply and declared:
            args = reply["tool_args"]
            part: dict[str, Any] = {"functionCall": {
                "name": declared[0]["name"],
                "args": json.loads(args) if isinstance(args, str) else args}}
        elif "tool_args" in reply:  # asked with responseJsonSchema: the JSON is the text
            part = {"text": _json(reply["tool_args"])}
        else:
            part = {"text": reply.get("content") or ""}
        tokens = reply.get("tokens", 5)
        payload = {
            "candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": tokens,
                              "totalTokenCount": 10 + tokens},
            "modelVersion": body["model"],
        }
        if not body["stream"]:
            return _send(handler, 200, "application/json", json.dumps(payload).encode())
        _send(handler, 200, "text/event-stream",
              f"data: {json.dumps(payload)}\r\n\r\n".encode())
