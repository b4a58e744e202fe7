"""Each role's system prompt is the same bytes from one request to the next, and what
varies (few-shot examples, request, results) comes after it: the prefix a provider caches.

Checked on what the scripted OpenAI-compatible server received over HTTP.
"""

from __future__ import annotations

import json
from typing import Any

from hugginggpt.nodes.planning.bank import DEFAULT_BANK, load_bank
from hugginggpt.nodes.prompts import PLANNER_SYSTEM
from hugginggpt.tools.experts.tasks import task_types
from tests.conftest import benchmark, run

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


def test_a_conversation_keeps_its_history_ahead_of_the_examples(
        compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": _plan("translation", "good night")},
                      {"tool_args": _plan("summarization", SUMMARISE)})
    context = make_context(backend="dry-run", few_shot=2)
    run(compiled, context, TRANSLATE, thread="chat")
    run(compiled, context, SUMMARISE, thread="chat")
    user = _messages(llm_server, "planner")[1][1]["content"]
    assert user.startswith(f"Conversation so far:\nuser: {TRANSLATE}\n")
    assert user.index("Examples of requests") < user.index(f"Request: {SUMMARISE}")


# the planner's layout at 1336e7c, before this change: examples at the end of the system
_OLD_EXAMPLES = """

Examples of requests and their plans (follow the format, not the content):
{examples}"""
_OLD_USER = """\
{history}Request: {request}
Attached files: {files}"""


def test_the_benchmarks_before_layout_is_the_old_code_s(compiled, make_context, llm_server):
    """benchmarks/prompts.py compares with the old layout made from this code's requests."""
    bench = benchmark("prompts")
    context = make_context(backend="dry-run", few_shot=3)
    _two_runs(compiled, context, llm_server)
    bank = load_bank(DEFAULT_BANK)
    for body, request in zip(llm_server.calls("planner"), (TRANSLATE, SUMMARISE), strict=True):
        examples = "\n".join(f"Request: {e.request}\nPlan: {json.dumps({'subtasks': e.plan})}"
                             for e, _ in bank.nearest(request, k=3))
        system = PLANNER_SYSTEM.format(
            task_types="\n".join(t.describe() for t in task_types()),
            image_reader="image-to-text",
            max_subtasks=context.max_subtasks) + _OLD_EXAMPLES.format(examples=examples)
        old = bench.before_layout(body)["messages"]
        assert old[0]["content"] == system
        assert old[1]["content"] == _OLD_USER.format(history="", request=request, files="none")
