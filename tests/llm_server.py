"""A local OpenAI-compatible chat server with scripted replies, for tests and benchmarks.

It speaks enough of ``POST /v1/chat/completions`` for ``langchain_openai.ChatOpenAI``:
plain content replies, tool-call replies (what ``with_structured_output`` with
``function_calling`` expects), HTTP errors and slow replies, each either whole or
streamed as server-sent events (with ``usage`` in the last chunk when asked). Replies
are scripted per role; the role of a request is recognised from its system prompt.

Server-wide knobs simulate an endpoint's character: ``ttft_s`` (time to first token),
``tokens_per_s`` (streaming speed), ``failure_rate`` (share of requests answered with
HTTP 500), ``slots`` (requests served at once; more wait in a queue, as on a GPU
server), ``down`` (every request fails with 503 until set back) and ``die_mid_stream``
(close the connection halfway through a streamed reply).
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ScriptedLLMServer", "Reply", "role_of"]

Reply = dict[str, Any]
"""One scripted reply: {"content": str} | {"tool_args": dict} | {"status": int} |
{"garbage": True} (an HTML page where JSON was due),
optionally with "delay": seconds before answering, "tokens": the completion length to
report (and to stream at the server's speed; default 5), and "echo_auth": an error
message that repeats the request's Authorization header."""

_ROLE_MARKERS = {
    "planner": "task planner of HuggingGPT",
    "selector": "choose the expert model",
    "responder": "You are HuggingGPT. Expert models",
    "expert": "text expert model of HuggingGPT",
}


def role_of(body: dict[str, Any]) -> str:
    system = next((m.get("content", "") for m in body.get("messages", [])
                   if m.get("role") in ("system", "developer")), "")
    if isinstance(system, list):
        system = " ".join(p.get("text", "") for p in system)
    return next((role for role, marker in _ROLE_MARKERS.items() if marker in system), "other")


class _Died(Exception):
    """The simulated endpoint drops the connection mid-stream."""


class ScriptedLLMServer:
    def __init__(self, *, ttft_s: float = 0.0, tokens_per_s: float | None = None,
                 failure_rate: float = 0.0, slots: int | None = None,
                 seed: int = 0) -> None:
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.defaults: dict[str, Reply] = {"responder": {"content": "Done: see the results."},
                                           "other": {"content": "pong", "tokens": 1}}
        self.answer: Callable[[dict[str, Any]], Reply | None] | None = None
        """A reply computed from the request's body (its model, its messages), taken
        before the scripted ones when it gives one."""
        self.requests: list[dict[str, Any]] = []
        self.streams: list[dict[str, Any]] = []
        """Per streamed reply: its ``role``, and when (``time.monotonic()``) its ``first``
        piece and its ``last`` piece (the one before the finish chunk) were sent."""
        self.ttft_s = ttft_s
        self.tokens_per_s = tokens_per_s
        self.failure_rate = failure_rate
        self.down = False
        self.die_mid_stream = False
        self.served = 0
        self._random = random.Random(seed)
        self._slots = threading.Semaphore(slots) if slots else None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, _Died):
                    if server._slots is None:
                        server._serve(self, body)
                    else:
                        with server._slots:
                            server._serve(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def script(self, role: str, *replies: Reply) -> None:
        with self._lock:
            self.scripts[role].extend(replies)

    def calls(self, role: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if role_of(r) == role]

    # -- answering

    def _next_reply(self, role: str) -> Reply | None:
        with self._lock:
            queue = self.scripts[role]
            return queue.popleft() if queue else self.defaults.get(role)

    def _serve(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)
            fails = self.failure_rate > 0 and self._random.random() < self.failure_rate
        if self.down:
            return self._send_json(handler, 503, {"error": {"message": "endpoint down"}})
        if fails:
            time.sleep(self.ttft_s / 2)
            return self._send_json(handler, 500, {"error": {"message": "simulated failure"}})
        reply = (self.answer(body) if self.answer else None) or self._next_reply(role_of(body))
        if reply is None:
            message = f"no scripted reply left for role {role_of(body)}"
            return self._send_json(handler, 500, {"error": {"message": message}})
        time.sleep(self.ttft_s + reply.get("delay", 0))
        if "status" in reply:
            status = reply["status"]
            message = f"scripted HTTP {status}"
            if reply.get("echo_auth"):  # as careless servers do: the key in the error
                message += f"; you sent {handler.headers.get('Authorization')}"
            return self._send_json(handler, status, {"error": {"message": message}})
        if reply.get("garbage"):  # a proxy's error page, say
            data = b"<html>Bad gateway</html>"
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return None
        with self._lock:
            self.served += 1
        if body.get("stream"):
            return self._stream(handler, body, reply)
        message, finish = self._message(body, reply)
        tokens = reply.get("tokens", 5)
        if self.tokens_per_s:
            time.sleep(tokens / self.tokens_per_s)
        self._send_json(handler, 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": tokens,
                      "total_tokens": 10 + tokens},
        })

    def _message(self, body: dict[str, Any], reply: Reply) -> tuple[dict[str, Any], str]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if "tool_args" not in reply:
            return message, "stop"
        tools = body.get("tools") or []
        name = tools[0]["function"]["name"] if tools else "PlanReply"
        arguments = reply["tool_args"]
        message["content"] = None
        message["tool_calls"] = [{
            "id": f"call_{len(self.requests)}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }]
        return message, "tool_calls"

    def _stream(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
                reply: Reply) -> None:
        """Send the reply as server-sent events, ``tokens`` pieces at the server's speed."""
        message, finish = self._message(body, reply)
        tokens = max(1, reply.get("tokens", 5))
        tool = (message.get("tool_calls") or [None])[0]
        text = tool["function"]["arguments"] if tool else (message["content"] or "")
        size = max(1, -(-len(text) // tokens))
        pieces = [text[i:i + size] for i in range(0, len(text), size)] or [""]
        pieces += [""] * (tokens - len(pieces))
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        base = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", "scripted")}

        def send(choices: list[dict[str, Any]], **extra: Any) -> None:
            handler.wfile.write(f"data: {json.dumps(base | {'choices': choices} | extra)}\n\n"
                                .encode())
            handler.wfile.flush()

        timing: dict[str, Any] = {"role": role_of(body)}
        with self._lock:
            self.streams.append(timing)
        for i, piece in enumerate(pieces):
            if self.die_mid_stream and i == len(pieces) // 2:
                handler.close_connection = True
                raise _Died
            delta: dict[str, Any] = {"role": "assistant"} if i == 0 else {}
            if tool:
                call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
                if i == 0:
                    call |= {"id": tool["id"], "type": "function"}
                    call["function"]["name"] = tool["function"]["name"]
                delta["tool_calls"] = [call]
            else:
                delta["content"] = piece
            send([{"index": 0, "delta": delta, "finish_reason": None}])
            timing.setdefault("first", time.monotonic())
            timing["last"] = time.monotonic()
            if self.tokens_per_s and i < len(pieces) - 1:
                time.sleep(1 / self.tokens_per_s)
        send([{"index": 0, "delta": {}, "finish_reason": finish}])
        if (body.get("stream_options") or {}).get("include_usage"):
            send([], usage={"prompt_tokens": 10, "completion_tokens": tokens,
                            "total_tokens": 10 + tokens})
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True

    @staticmethod
    def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
