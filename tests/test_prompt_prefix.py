"""Each role's system prompt is the same bytes from one request to the next, and what
varies (few-shot examples, request, results) comes after it: the prefix a provider caches.

Checked on what the scripted OpenAI-compatible server received over HTTP.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import run

TRANSLATE = "Translate 'good night' into French"
SUMMARISE = "Summarise this: the river rose in the night and fell back before dawn."


def _plan(task: str, text: str) -> dict[str, Any]:
    return {"subtasks": [{"id": 0, "task": task, "dep": [], "args": {"text": text}}]}


def _two_runs(compiled: Any, context: Any, llm_server: Any) -> None:
    llm_server.script("planner", {"tool_args": _plan("translation", "good night")},
                      {"tool_args": _plan("summarization", SUMMARISE)})
    llm_server.script("selector",
                      {"tool_args": {"model": "t/two", "reason": "fluent French"}},
                      {"tool_args": {"model": "s/one", "reason": "short summaries"}})
    assert run(compiled, context, TRANSLATE, thread="a")["status"] == "completed"
    assert run(compiled, context, SUMMARISE, thread="b")["status"] == "completed"


def _messages(llm_server: Any, role: str) -> list[list[dict[str, Any]]]:
    return [call["messages"] for call in llm_server.calls(role)]


def test_system_prompts_are_byte_identical_across_requests(
        compiled, make_context, llm_server, catalog_file):
    close = catalog_file(("translation", "t/one", 1000), ("translation", "t/two", 1000),
                         ("summarization", "s/one", 1000), ("summarization", "s/two", 1000))
    _two_runs(compiled, make_context(backend="dry-run", catalog=close, few_shot=2),
              llm_server)
    for role in ("planner", "selector", "responder"):
        first, second = _messages(llm_server, role)
        assert first[0]["role"] == second[0]["role"] == "system", role
        assert first[0]["content"] == second[0]["content"], role
        assert first[1:] != second[1:], role  # the request is there, after the system prompt


def test_planner_examples_and_request_come_after_the_system_prompt(
        compiled, make_context, llm_server):
    _two_runs(compiled, make_context(backend="dry-run", few_shot=2), llm_server)
    for messages, request in zip(_messages(llm_server, "planner"), (TRANSLATE, SUMMARISE),
                                 strict=True):
        system, user = messages[0]["content"], messages[1]["content"]
        assert "task planner of HuggingGPT" in system and "Task types" in system
        assert "Examples of requests" not in system and request not in system
        examples = user.index("Examples of requests and their plans")
        assert examples < user.index(f"Request: {request}")
        assert user.count("Plan: {") == 2  # few_shot=2
    responders = _messages(llm_server, "responder")
    assert all(TRANSLATE not in m[0]["content"] for m in responders)
    assert TRANSLATE in responders[0][1]["content"]
