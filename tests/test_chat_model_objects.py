"""A LangChain chat model the caller built, as the LLM: ``hugginggpt.run(...,
llm=model)``, per role (``planner_llm=``, ...), and in ``build_graph``'s context.

It is routed, budgeted, recorded and replayed like a named endpoint, named by its class
and model, and never saved with the thread: a resume needs it passed again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

import hugginggpt
from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.context import Context
from hugginggpt.tools.errors import ArgumentError

PLAN = {"subtasks": [{"id": 0, "task": "sentence-similarity", "dep": [],
                      "args": {"text": "I love dogs", "text2": "Dogs are great"}}]}
REQUEST = "how similar are 'I love dogs' and 'Dogs are great'?"


class ScriptedChat(BaseChatModel):
    """A chat model that answers a structured request (a bound tool) with the scripted
    arguments for that tool, and anything else with ``answer``; it keeps what it was
    asked."""

    model_name: str = "scripted-1"
    plan: dict[str, Any] = PLAN
    answer: str = "They are quite similar."
    asked: list[list[BaseMessage]] = []
    fail_with: Any = None
    note: str = "zqx-object-field-7731"
    """Found in a checkpoint only if the object were saved."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.asked.append(messages)
        if self.fail_with is not None:
            raise self.fail_with
        usage = {"input_tokens": 30, "output_tokens": 7, "total_tokens": 37}
        tools = kwargs.get("tools") or []
        if tools:
            name = tools[0]["function"]["name"]
            message = AIMessage(content="", usage_metadata=usage, tool_calls=[
                {"name": name, "args": self.plan, "id": "call-1", "type": "tool_call"}])
        else:
            message = AIMessage(content=self.answer, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def model() -> ScriptedChat:
    return ScriptedChat(asked=[])


@pytest.fixture(autouse=True)
def _no_configured_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("HUGGINGGPT_LLM", "HUGGINGGPT_LLM_BASE_URL", "OPENAI_BASE_URL",
                 "OPENAI_API_KEY", "HUGGINGGPT_PLANNER_LLM", "HUGGINGGPT_RESPONDER_LLM",
                 "HUGGINGGPT_SELECTOR_LLM", "HUGGINGGPT_LLM_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    yield


def _run(workspace: Any, **settings: Any) -> hugginggpt.RunResult:
    settings = {"backend": "lite", "planner": "llm", "workspace": str(workspace)} | settings
    return hugginggpt.run(REQUEST, **settings)


def test_a_chat_model_object_plans_and_answers_and_its_calls_are_recorded(workspace, model):
    result = _run(workspace, llm=model)
    assert result.status == "completed", result.abort_reason
    assert result.response == "They are quite similar."
    assert [s.task for s in result.plan] == ["sentence-similarity"]
    assert result.results[0].outputs["score"] > 0.5
    assert result.planner == "llm: ScriptedChat(scripted-1)"
    assert [(c.role, c.llm, c.ok) for c in result.llm_calls] == [
        ("planner", "ScriptedChat(scripted-1)", True),
        ("responder", "ScriptedChat(scripted-1)", True)]
    assert [c.prompt_tokens for c in result.llm_calls] == [30, 30]
    assert [c.completion_tokens for c in result.llm_calls] == [7, 7]
    assert len(model.asked) == 2
    assert "I love dogs" in str(model.asked[0][-1].content)


def test_each_role_takes_its_own_object(workspace):
    planner = ScriptedChat(model_name="big", asked=[])
    responder = ScriptedChat(model_name="small", asked=[], answer="Very similar.")
    result = _run(workspace, planner_llm=planner, responder_llm=responder)
    assert result.response == "Very similar."
    assert [(c.role, c.llm) for c in result.llm_calls] == [
        ("planner", "ScriptedChat(big)"), ("responder", "ScriptedChat(small)")]
    assert (len(planner.asked), len(responder.asked)) == (1, 1)


def test_an_object_with_no_structured_output_is_asked_plainly_and_its_json_read(workspace):
    """langchain_core's fake chat models have no ``with_structured_output``: the plan is
    asked for as text, and the JSON in the reply is read as a plan."""
    fake = GenericFakeChatModel(messages=iter([
        AIMessage(json.dumps(PLAN)), AIMessage("Similar, yes.")]))
    result = _run(workspace, llm=fake)
    assert result.status == "completed", result.abort_reason
    assert [s.task for s in result.plan] == ["sentence-similarity"]
    assert result.response == "Similar, yes."
    assert {c.llm for c in result.llm_calls} == {"GenericFakeChatModel(generic-fake-chat-model)"}


def test_the_object_is_held_to_the_run_s_budget(workspace, model):
    result = _run(workspace, llm=model, max_llm_calls=1)
    assert [c.role for c in result.llm_calls] == ["planner"]
    assert len(model.asked) == 1, "the responder's call is over the budget: never made"
    assert result.status == "completed"
    assert "0.8" in result.response or "similar" in result.response.lower()


def test_a_failing_object_fails_like_an_endpoint(workspace, model):
    model.fail_with = TimeoutError("read timed out")
    result = _run(workspace, llm=model)
    assert result.status == "aborted"
    assert "ScriptedChat(scripted-1)" in (result.abort_reason or "")
    assert "Traceback" not in (result.abort_reason or "")
    assert result.llm_calls and not result.llm_calls[0].ok


def test_a_named_endpoint_file_keeps_the_roles_no_object_takes(workspace, model, tmp_path):
    config = tmp_path / "llms.toml"
    config.write_text('[[endpoints]]\nname = "unused"\nmodel = "gpt-4o-mini"\n'
                      'base_url = "http://127.0.0.1:9/v1"\nroles = ["planner", "selector"]\n')
    result = _run(workspace, llm_config=str(config), planner_llm=model, responder_llm=model)
    assert result.status == "completed", result.abort_reason
    assert {c.llm for c in result.llm_calls} == {"ScriptedChat(scripted-1)"}


def test_the_object_is_never_saved_with_the_thread(workspace, model):
    result = _run(workspace, llm=model)

    async def values() -> dict[str, Any]:
        from hugginggpt.graph.checkpoint import aopen_checkpointer

        url = f"sqlite:///{result.workspace}/checkpoints.sqlite"
        async with aopen_checkpointer(url) as saver:
            state = await build_graph(checkpointer=saver).aget_state(
                {"configurable": {"thread_id": result.thread_id}})
            return dict(state.values)

    saved = asyncio.run(values())

    def objects(value: Any) -> Iterator[Any]:
        if isinstance(value, BaseChatModel):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from objects(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                yield from objects(item)
        elif hasattr(value, "__dict__"):
            yield from objects(vars(value))

    assert list(objects(saved)) == []
    assert saved["settings"]["llm"] == "chat-model-object:ScriptedChat(scripted-1)"
    database = (result.workspace / "checkpoints.sqlite").read_bytes()
    assert b"They are quite similar" in database  # the state is there
    assert b"zqx-object-field-7731" not in database  # the object's fields are not


def test_a_resume_without_the_object_says_to_pass_it_again(workspace, model):
    waiting = _run(workspace, llm=model, approval="plan")
    assert waiting.status == "waiting"
    with pytest.raises(ArgumentError) as refused:
        hugginggpt.resume(waiting.thread_id, "approve", workspace=str(workspace),
                          backend="lite")
    message = str(refused.value)
    assert "ScriptedChat(scripted-1)" in message and "llm=" in message
    assert "never saved" in message
    done = hugginggpt.resume(waiting.thread_id, "approve", workspace=str(workspace),
                             backend="lite", llm=model)
    assert done.status == "completed"
    assert done.response == "They are quite similar."


def test_the_cli_resume_of_an_object_s_thread_says_what_to_do(workspace, model, capsys):
    from hugginggpt.cli import main

    waiting = _run(workspace, llm=model, approval="plan")
    url = f"sqlite:///{waiting.workspace}/checkpoints.sqlite"
    code = main(["resume", "--thread", waiting.thread_id, "--approve",
                 "--workspace", str(workspace), "--checkpoint-url", url])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert "ScriptedChat(scripted-1)" in err and "--llm" in err
    assert f"hugginggpt.resume('{waiting.thread_id}', llm=...)" in err
    assert "Traceback" not in err


def test_build_graph_takes_the_object_in_its_context(workspace, model):
    app = build_graph()
    context = Context(llm=model, backend="lite", planner="llm", workspace=str(workspace))
    values = app.invoke({"request": REQUEST, "files": []},
                        {"configurable": {"thread_id": "g1"}}, context=context)
    assert values["response"] == "They are quite similar."
    assert [c.llm for c in values["llm_calls"]] == ["ScriptedChat(scripted-1)"] * 2


def test_a_replay_of_an_object_s_run_needs_no_object(workspace, model, capsys):
    from hugginggpt.cli import main

    result = _run(workspace, llm=model)
    url = f"sqlite:///{result.workspace}/checkpoints.sqlite"
    code = main(["replay", "--thread", result.thread_id, "--workspace", str(workspace),
                 "--checkpoint-url", url])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(model.asked) == 2, "the replay asked the recording, not the model"


def test_anything_else_is_refused_naming_the_setting():
    with pytest.raises(hugginggpt.SettingsError) as refused:
        Context(planner_llm=42)
    assert "planner_llm" in str(refused.value) and "BaseChatModel" in str(refused.value)


def test_the_llm_backend_s_subtasks_run_on_the_expert_object(workspace, model):
    expert = ScriptedChat(model_name="writer", asked=[], answer="Dogs are loved.")
    plan = [{"id": 0, "task": "summarization", "dep": [],
             "args": {"text": "People love dogs. Dogs are loyal and friendly companions."}}]
    result = hugginggpt.run("summarize it", plan=plan, backend="llm", llm=model,
                            expert_llm=expert, workspace=str(workspace))
    assert result.status == "completed", result.abort_reason
    assert result.results[0].outputs["text"] == "Dogs are loved."
    assert len(expert.asked) == 1
    assert [(c.role, c.llm) for c in result.llm_calls] == [
        ("expert", "ScriptedChat(writer)"), ("responder", "ScriptedChat(scripted-1)")]
    assert result.results[0].endpoint == "ScriptedChat(writer)"


def test_an_object_that_hangs_is_cut_at_the_run_s_llm_timeout(workspace):
    import time

    hung = ScriptedChat(asked=[])
    original = ScriptedChat._generate

    def slow(self: ScriptedChat, *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(30)
        return original(self, *args, **kwargs)

    started = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScriptedChat, "_generate", slow)
        result = _run(workspace, llm=hung, llm_timeout_s=1.0)
    assert time.monotonic() - started < 15
    assert result.status == "aborted"
    assert "did not answer" in (result.abort_reason or "")
    assert "ScriptedChat(scripted-1)" in (result.abort_reason or "")
