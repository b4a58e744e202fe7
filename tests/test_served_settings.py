"""Settings through a real ``langgraph dev``: a server run's ``context`` (a dict that
LangGraph turns into a ``Context``) is checked where it enters, like a flag."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.test_served import DevServer, start_deployment

PLAN = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "A long story."}}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """One server for the module, started without the user's keys, saved Hugging Face
    login or ``HUGGINGGPT_*`` settings (module fixtures start before the per-test ones
    that clear them). Its workspace and the test knob are the deployment's; it lets its
    callers choose the LLM and the endpoints (``HUGGINGGPT_CALLER_SETTINGS``), which a
    deployment keeps to itself by default."""
    folder = tmp_path_factory.mktemp("served-settings")
    dev = start_deployment(folder, {"HUGGINGGPT_CALLER_SETTINGS": "llm,llm_base_url,llm_routing,hf_endpoints"})
    yield dev
    dev.stop()


def _run(server: DevServer, context: dict[str, Any], request: str = "Summarize the story"
         ) -> tuple[dict[str, Any] | Exception, dict[str, Any]]:
    """One run on a new thread: what ``runs.wait`` gave (or raised), and the thread's state."""
    from langgraph_sdk import get_client

    async def go() -> tuple[dict[str, Any] | Exception, dict[str, Any]]:
        client = get_client(url=server.url)
        thread = await client.threads.create()
        try:
            out: dict[str, Any] | Exception = await client.runs.wait(
                thread["thread_id"], "hugginggpt", input={"request": request},
                context=context)
        except Exception as exc:  # the SDK raises the run's error as a plain Exception
            out = exc
        return out, await client.threads.get_state(thread["thread_id"])

    return asyncio.run(go())


def test_a_bad_server_context_is_refused_before_anything_runs(server: DevServer):
    context = {"backend": "dry-run", "plan": PLAN, "approval": "sometimes"}
    artifacts = server.folder / "ws" / "artifacts"
    before = set(artifacts.iterdir()) if artifacts.exists() else set()
    out, state = _run(server, context)
    assert isinstance(out, Exception), out  # not an approval question, not a result
    assert ("SettingsError: approval = 'sometimes' is not valid: expected one of never, "
            "plan, risky") in str(out)
    assert not state["values"] and not state["interrupts"]  # nothing ran
    assert (set(artifacts.iterdir()) if artifacts.exists() else set()) == before

    out, _ = _run(server, {**context, "approval": "never", "max_subtasks": 0})
    assert "max_subtasks = 0 is not valid: expected a whole number, at least 1" in str(out)

    # a good context still runs, coerced into the schema
    out, state = _run(server, {**context, "approval": "never"})
    assert isinstance(out, dict) and out["status"] == "completed", out
    assert state["values"]["settings"]["approval"] == "never"


def test_a_bad_llm_configuration_in_a_server_context_aborts_the_run(server: DevServer):
    context = {"backend": "dry-run", "plan": PLAN, "llm_routing": "random"}
    out, state = _run(server, context)
    assert isinstance(out, dict) and out["status"] == "aborted", out
    assert "llm_routing (HUGGINGGPT_LLM_ROUTING) must be one of" in out["abort_reason"]
    assert not out.get("results")  # with a fixed plan too: nothing ran


def test_a_server_run_without_the_llm_key_ends_with_the_abort_reason(server: DevServer):
    context = {"backend": "dry-run", "llm": "gpt-4o-mini", "planner": "llm"}  # auto: offline
    out, state = _run(server, context)
    assert isinstance(out, dict), out  # no error: an aborted run
    assert state["values"]["status"] == "aborted"
    reason = state["values"]["abort_reason"]
    assert reason.startswith("the planner LLM cannot be called: gpt-4o-mini is OpenAI's API")
    # said for a served caller: the key is the operator's to set, in the server's environment
    assert "OPENAI_API_KEY" in reason and "export" not in reason and "operator" in reason


def test_credentials_in_a_server_contexts_url_reach_nothing_it_keeps(
        server: DevServer, llm_server):
    from langgraph_sdk import get_client

    password, basic = "pa55w0rd-xyz", "dXNlcjpwYTU1dzByZC14eXo="
    url = llm_server.url.replace("://", f"://user:{password}@")
    # the responder's endpoint repeats what it was sent: httpx's Basic header
    llm_server.script("responder", {"status": 401, "echo_auth": True})
    context = {"backend": "dry-run", "plan": PLAN, "llm": "m", "llm_base_url": url,
               "hf_endpoints": {"acme/model": url}}

    async def go() -> tuple[Any, list[Any]]:
        client = get_client(url=server.url)
        thread = await client.threads.create()
        out = await client.runs.wait(thread["thread_id"], "hugginggpt",
                                     input={"request": "Summarize the story"}, context=context)
        return out, await client.threads.get_history(thread["thread_id"], limit=50)

    out, history = asyncio.run(go())
    assert out["status"] == "completed", out
    assert "you sent Basic [redacted]" in out["response"]  # sent, then scrubbed
    assert out["selector"].startswith(f"llm: m @ http://[redacted]@{llm_server.url[7:]}")
    settings = history[0]["values"]["settings"]  # what the trace shows
    assert settings["hf_endpoints"] == {"acme/model": f"http://[redacted]@{llm_server.url[7:]}"}
    # every checkpoint's state; the server itself keeps the caller's context with the run
    # and in its checkpoints' metadata (SECURITY.md: give credentials in its environment)
    kept = [json.dumps(out), *(json.dumps(checkpoint["values"]) for checkpoint in history)]
    kept += [p.read_bytes().decode("latin-1") for p in (server.folder / "ws").rglob("*")
             if p.is_file()]
    for text in kept:
        assert password not in text and basic not in text


def test_a_served_runs_prompts_are_in_the_servers_store_not_its_checkpoints(
        server: DevServer, llm_server, tmp_path):
    """On ``langgraph dev`` the nodes get the server's own store (``get_store()``): the
    prompts and replies go there (issue 16), the thread's state keeps the records. The
    store's API keeps them from callers (a caller's namespaces start with their
    identity); the dev server saves its store to ``.langgraph_api/store.pckl`` in its
    folder when it stops, where the test finds the reply (a server of its own, since
    the module's runs on)."""
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import PermissionDeniedError

    reply = "A short story, summarized (served store check)."
    llm_server.script("responder", {"content": reply})
    context = {"backend": "dry-run", "plan": PLAN, "llm": "m", "llm_base_url": llm_server.url}
    own = DevServer(tmp_path, server.env)

    async def go() -> tuple[Any, list[Any], Any]:
        client = get_client(url=own.url)
        thread = await client.threads.create()
        out = await client.runs.wait(thread["thread_id"], "hugginggpt",
                                     input={"request": "Summarize the story"}, context=context)
        history = await client.threads.get_history(thread["thread_id"], limit=50)
        try:
            await client.store.search_items(["hugginggpt", "llm_calls", thread["thread_id"]])
            refused = None
        except PermissionDeniedError as exc:
            refused = exc
        return out, history, refused

    own.start()
    try:
        out, history, refused = asyncio.run(go())
    finally:
        own.stop()
    assert out["status"] == "completed" and out["response"] == reply
    records = [c for checkpoint in history for c in checkpoint["values"].get("llm_calls", [])]
    assert records and all(c["request"] == [] and c["reply"] is None for c in records)
    assert refused is not None and "start with your identity" in str(refused)
    saved = (tmp_path / ".langgraph_api" / "store.pckl").read_bytes()
    assert reply.encode() in saved and b"You are HuggingGPT" in saved
