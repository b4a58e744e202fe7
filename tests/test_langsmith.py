"""LangSmith tracing keeps working: with its usual environment variables set, a run's
graph, nodes and LLM calls reach the tracing endpoint as one trace (here a local stub
of the LangSmith API), and no key appears in what is sent."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import run

_PART = re.compile(rb'name="(post|patch)\.([0-9a-f-]{36})"\r\n.*?\r\n\r\n(\{.*?\})\r\n--',
                   re.DOTALL)


def _forget_tracing_settings() -> None:
    """langsmith caches its environment and client: start and end with neither."""
    import langsmith.run_trees
    import langsmith.utils

    langsmith.utils.get_env_var.cache_clear()
    langsmith.utils.get_tracer_project.cache_clear()
    langsmith.run_trees._CLIENT = None


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    bodies: list[bytes] = []
    _forget_tracing_settings()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - /info: the client then uses its defaults
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_PATCH = do_POST  # noqa: N815

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_secret-test-key")
    monkeypatch.setenv("LANGSMITH_PROJECT", "hugginggpt-tests")
    yield bodies
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()
    monkeypatch.undo()
    _forget_tracing_settings()
    server.shutdown()
    server.server_close()


def test_runs_reach_langsmith_as_one_trace(compiled, make_context, llm_server, langsmith):
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": "a long text"}}]}})
    out = run(compiled, make_context(backend="dry-run"), "Summarize a long text")
    assert out["status"] == "completed"
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()
    sent = b"".join(langsmith)
    runs: dict[str, dict[str, Any]] = {}
    for _, run_id, body in _PART.findall(sent):
        runs.setdefault(run_id.decode(), {}).update(json.loads(body))
    names = [r.get("name") for r in runs.values()]
    assert {"plan", "select", "execute", "respond"} <= set(names)
    llm_runs = [r for r in runs.values() if r.get("name") == "ChatOpenAI"]
    assert len(llm_runs) == 2  # planner and responder
    root = next(r for r in runs.values() if r.get("name") == "hugginggpt")
    # every node and LLM call is inside the graph run's trace
    assert {r["trace_id"] for r in runs.values() if "trace_id" in r} == {root["id"]}
    assert all(r.get("parent_run_id") for r in llm_runs)
    assert b"secret-test-key" not in sent
