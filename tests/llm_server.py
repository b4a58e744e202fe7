"""A local OpenAI-compatible chat server with scripted replies, for tests.

It speaks enough of ``POST /v1/chat/completions`` for ``langchain_openai.ChatOpenAI``:
plain content replies, tool-call replies (what ``with_structured_output`` with
``function_calling`` expects), HTTP errors and slow replies. Replies are scripted per
role; the role of a request is recognised from its system prompt.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ScriptedLLMServer", "Reply"]

Reply = dict[str, Any]
"""One scripted reply: {"content": str} | {"tool_args": dict} | {"status": int} ,
optionally with "delay": seconds."""

_ROLE_MARKERS = {
    "planner": "task planner of HuggingGPT",
    "selector": "choose the expert model",
    "responder": "You are HuggingGPT. Expert models",
}


def role_of(body: dict[str, Any]) -> str:
    system = next((m.get("content", "") for m in body.get("messages", [])
                   if m.get("role") in ("system", "developer")), "")
    if isinstance(system, list):
        system = " ".join(p.get("text", "") for p in system)
    return next((role for role, marker in _ROLE_MARKERS.items() if marker in system), "other")


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.defaults: dict[str, Reply] = {"responder": {"content": "Done: see the results."}}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload = server._answer(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

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

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        role = role_of(body)
        with self._lock:
            self.requests.append(body)
            queue = self.scripts[role]
            reply = queue.popleft() if queue else self.defaults.get(role)
        if reply is None:
            return 500, {"error": {"message": f"no scripted reply left for role {role}"}}
        if reply.get("delay"):
            time.sleep(reply["delay"])
        if "status" in reply:
            return reply["status"], {"error": {"message": f"scripted HTTP {reply['status']}"}}
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        finish = "stop"
        if "tool_args" in reply:
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
            finish = "tool_calls"
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
