"""LangChain's ``provider:model`` strings, through the real integration packages talking
HTTP to local stubs of the providers' APIs (:mod:`tests.provider_stubs`): Anthropic's
Messages API, Ollama's ``/api/chat``, the Gemini API, and OpenAI's own protocol (the
scripted server itself, as ``openai:MODEL``).

Each stub answers what it is scripted with, per role, in its provider's wire format; a
reply may be an HTTP error, garbage, or late.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.demo import make_samples
from tests.llm_server import ScriptedLLMServer
from tests.provider_stubs import AnthropicStub, GoogleStub, OllamaStub, asked_for_structure

PLAN = {"subtasks": [{"id": 0, "task": "sentence-similarity", "dep": [],
                      "args": {"text": "I love dogs", "text2": "Dogs are great"}}]}
REQUEST = "how similar are these?"


COMPOUND = "Read the text in notice.png, then tell me the sentiment of the text."
"""The compound request of Getting started (the demo's first): OCR, then sentiment."""
COMPOUND_PLAN = {"subtasks": [
    {"id": 0, "task": "image-to-text", "dep": [], "args": {"image": "notice.png"}},
    {"id": 1, "task": "text-classification", "dep": [0], "args": {"text": "<GENERATED>-0"}}]}
ANSWER = "The notice says the museum reopens on Saturday, and its tone is positive."

PROVIDERS = [("anthropic_stub", "anthropic:claude-x"), ("ollama_stub", "ollama:qwen3:4b"),
             ("openai_stub", "openai:gpt-x"), ("google_stub", "google_genai:gemini-x")]
"""Each provider's stub, and the ``--llm`` that names it: the integration package
``init_chat_model`` picks for the prefix talks to the stub at ``--llm-base-url``."""


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


@pytest.fixture
def google_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[GoogleStub]:
    for name in ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "dummy-google-key")
    server = GoogleStub().start()
    server.url = server.url.removesuffix("/v1")
    yield server
    server.stop()


@pytest.fixture
def openai_stub(llm_server: ScriptedLLMServer) -> ScriptedLLMServer:
    """OpenAI's protocol is the scripted server's own (its URL ends in ``/v1``)."""
    return llm_server


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _cli(capsys: pytest.CaptureFixture[str], llm: str, url: str, workspace: Any,
         *extra: str) -> tuple[int, str, str]:
    return _run(capsys, "run", REQUEST, "--llm", llm, "--llm-base-url", url,
                "--planner", "llm", "--backend", "lite", "--json",
                "--workspace", str(workspace), *extra)


def _compound(capsys: pytest.CaptureFixture[str], llm: str, url: str, workspace: Path,
              *extra: str) -> tuple[int, dict[str, Any], str]:
    """The compound request on the demo's notice, through ``--llm``."""
    notice = make_samples(workspace.parent / "inputs")["notice.png"]
    code, out, err = _run(capsys, "run", COMPOUND, "--file", str(notice), "--llm", llm,
                          "--llm-base-url", url, "--backend", "lite", "--json",
                          "--workspace", str(workspace), *extra)
    assert "Traceback" not in err
    return code, json.loads(out), err


@pytest.mark.parametrize("stub, llm", PROVIDERS)
def test_each_provider_plans_selects_and_answers_the_compound_request(
        request, capsys, workspace, stub, llm):
    server = request.getfixturevalue(stub)
    server.script("planner", {"tool_args": COMPOUND_PLAN})
    server.script("responder", {"content": ANSWER})
    code, doc, err = _compound(capsys, llm, server.url, workspace, "--planner", "llm")
    assert (code, doc["status"]) == (0, "completed"), err
    assert doc["response"] == ANSWER
    assert [s["task"] for s in doc["plan"]] == ["image-to-text", "text-classification"]
    assert {k: s["backend"] for k, s in doc["selections"].items()} == {"0": "lite", "1": "lite"}
    ocr, sentiment = doc["results"]["0"]["outputs"], doc["results"]["1"]["outputs"]
    assert "museum reopens" in ocr["text"].lower()
    assert sentiment["labels"][0]["label"] == "POSITIVE"
    assert doc["planner"] == f"llm: {llm} @ {server.url}"
    model = llm.split(":", 1)[1]
    assert {r["model"] for r in server.requests} == {model}
    by_role = doc["usage"]["by_role"]
    assert by_role["planner"] == 1 and by_role["responder"] == 1, by_role
    calls = sum(by_role.values())
    assert doc["usage"]["prompt_tokens"] == 10 * calls  # every reply's usage was read
    assert asked_for_structure(server.calls("planner")[0]), "the plan is asked for as structure"


@pytest.mark.parametrize("stub, llm, how", [
    ("anthropic_stub", "anthropic:claude-x", "tools"),
    ("ollama_stub", "ollama:qwen3:4b", "format"),
    ("openai_stub", "openai:gpt-x", "tools"),
    ("google_stub", "google_genai:gemini-x", "responseJsonSchema")])
def test_structure_is_asked_for_each_provider_s_best_way(request, capsys, workspace, stub,
                                                         llm, how):
    """``auto``: tool calling on the OpenAI protocol (plain servers often lack JSON
    schema), each other integration's own default."""
    server = request.getfixturevalue(stub)
    server.script("planner", {"tool_args": PLAN})
    code, _, err = _cli(capsys, llm, server.url, workspace)
    assert code == 0, err
    assert asked_for_structure(server.calls("planner")[0]) == how


@pytest.mark.parametrize("stub, llm", [("anthropic_stub", "anthropic:claude-x"),
                                       ("google_stub", "google_genai:gemini-x")])
def test_an_explicit_method_wins_over_auto(request, capsys, workspace, monkeypatch, stub,
                                           llm):
    monkeypatch.setenv("HUGGINGGPT_STRUCTURED_OUTPUT", "function_calling")
    server = request.getfixturevalue(stub)
    server.script("planner", {"tool_args": PLAN})
    code, out, err = _cli(capsys, llm, server.url, workspace)
    assert code == 0, err
    assert asked_for_structure(server.calls("planner")[0]) == "tools"
    assert json.loads(out)["plan"][0]["task"] == "sentence-similarity"


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


@pytest.mark.parametrize("stub, llm, variables", [
    ("anthropic_stub", "anthropic:claude-x", "ANTHROPIC_API_KEY"),
    ("google_stub", "google_genai:gemini-x", "GOOGLE_API_KEY or GEMINI_API_KEY")])
def test_a_provider_without_its_key_is_refused_before_any_request(
        request, capsys, workspace, monkeypatch, stub, llm, variables):
    server = request.getfixturevalue(stub)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    code, out, err = _run(capsys, "run", REQUEST, "--llm", llm, "--planner", "llm",
                          "--backend", "lite", "--json", "--workspace", str(workspace))
    assert server.requests == []
    assert f"needs a key: set {variables} (export {variables.split()[0]}=...)" in out + err
    assert "Traceback" not in err


def test_a_server_of_the_user_s_needs_no_key(capsys, workspace, monkeypatch, google_stub):
    """At a base URL, a provider whose client insists on a key gets a placeholder."""
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    google_stub.script("planner", {"tool_args": PLAN})
    code, _, err = _cli(capsys, "google_genai:gemini-x", google_stub.url, workspace)
    assert code == 0, err
    assert google_stub.requests[0]["key"] == "not-needed"


# ---------------------------------------------------------------- faults, as for OpenAI

FAULTY = [*PROVIDERS, ("llm_server", "scripted")]
"""Every provider, and the OpenAI-compatible server by a bare name (today's reference)."""


@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.parametrize("stub, llm", FAULTY)
def test_a_persistent_http_error_is_retried_then_aborts_cleanly(
        request, capsys, workspace, monkeypatch, stub, llm, status):
    monkeypatch.setenv("HUGGINGGPT_LLM_RETRIES", "1")
    server = request.getfixturevalue(stub)
    server.script("planner", *[{"status": status}] * 2)
    code, out, err = _cli(capsys, llm, server.url, workspace)
    doc = json.loads(out)
    assert (code, doc["status"]) == (5, "aborted"), err
    assert len(server.calls("planner")) == 2  # retried once, as the status allows
    reason = doc["abort_reason"]
    assert "the LLM planner failed" in reason and f"answered HTTP {status}" in reason
    assert ("its rate limit" in reason) == (status == 429), reason
    assert "check its logs, or retry later" in reason
    assert doc["results"] == {} and reason in doc["response"]
    assert "Traceback" not in err


@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.parametrize("stub, llm", FAULTY)
def test_one_http_error_is_retried_and_the_run_completes(
        request, capsys, workspace, monkeypatch, stub, llm, status):
    monkeypatch.setenv("HUGGINGGPT_LLM_RETRIES", "1")
    server = request.getfixturevalue(stub)
    server.script("planner", {"status": status}, {"tool_args": PLAN})
    server.script("responder", {"content": "They are quite similar."})
    code, out, err = _cli(capsys, llm, server.url, workspace)
    doc = json.loads(out)
    assert (code, doc["response"]) == (0, "They are quite similar."), err
    assert [c["ok"] for c in doc["llm_calls"] if c["role"] == "planner"] == [False, True]


@pytest.mark.parametrize("stub, llm", FAULTY)
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


@pytest.mark.parametrize("stub, llm", FAULTY)
def test_a_garbled_plan_is_repaired_then_answered(request, capsys, workspace, stub, llm):
    server = request.getfixturevalue(stub)
    server.script("planner", {"content": "Sure! Here is the plan: {subtasks: [compare them]"},
                  {"tool_args": PLAN})
    server.script("responder", {"content": "They are quite similar."})
    code, out, err = _cli(capsys, llm, server.url, workspace)
    doc = json.loads(out)
    assert (code, doc["response"]) == (0, "They are quite similar."), err
    assert len(server.calls("planner")) == 2  # asked again, with what was wrong
    assert "{subtasks: [compare them]" in json.dumps(server.calls("planner")[1]["messages"])


@pytest.mark.parametrize("stub, llm", FAULTY)
def test_a_garbled_plan_twice_aborts_saying_why(request, capsys, workspace, monkeypatch,
                                                stub, llm):
    monkeypatch.setenv("HUGGINGGPT_PLAN_RETRIES", "1")
    server = request.getfixturevalue(stub)
    garbled = {"content": "no idea, sorry"}
    server.script("planner", garbled, garbled)
    code, out, err = _cli(capsys, llm, server.url, workspace)
    doc = json.loads(out)
    assert (code, doc["status"]) == (5, "aborted"), err
    assert "planner" in doc["abort_reason"] and doc["results"] == {}
    assert len(server.calls("planner")) == 2
    assert "Traceback" not in err


HANG_TIMEOUT_S = 1


@pytest.mark.parametrize("stub, llm", FAULTY)
def test_a_hung_provider_falls_back_to_the_offline_planner_within_the_timeout(
        request, capsys, workspace, monkeypatch, stub, llm):
    monkeypatch.setenv("HUGGINGGPT_LLM_TIMEOUT", str(HANG_TIMEOUT_S))
    server = request.getfixturevalue(stub)
    server.script("planner", {"delay": 4 * HANG_TIMEOUT_S, "tool_args": COMPOUND_PLAN})
    code, doc, err = _compound(capsys, llm, server.url, workspace)
    assert (code, doc["status"]) == (0, "completed"), err
    assert len(server.requests) == 1  # the responder does not wait for it again
    waited = sum(c["latency_s"] for c in doc["llm_calls"])
    assert HANG_TIMEOUT_S <= waited < 1.5 * HANG_TIMEOUT_S + 0.5, waited
    assert doc["planner"].startswith("offline (fallback)")
    fallback = doc["planner_fallback"]
    assert fallback.startswith(f"The planner LLM {llm} @ {server.url} did not answer within "
                               f"{HANG_TIMEOUT_S} s"), fallback
    assert "HUGGINGGPT_LLM_TIMEOUT" in fallback and fallback in doc["response"]
    assert doc["results"]["1"]["outputs"]["labels"][0]["label"] == "POSITIVE"


@pytest.mark.parametrize("stub, llm", FAULTY)
def test_a_hung_provider_aborts_within_the_timeout_with_planner_llm(
        request, capsys, workspace, monkeypatch, stub, llm):
    monkeypatch.setenv("HUGGINGGPT_LLM_TIMEOUT", str(HANG_TIMEOUT_S))
    server = request.getfixturevalue(stub)
    server.script("planner", {"delay": 4 * HANG_TIMEOUT_S, "tool_args": PLAN})
    started = time.monotonic()
    code, out, err = _cli(capsys, llm, server.url, workspace)
    assert time.monotonic() - started < 3 * HANG_TIMEOUT_S + 2  # it did not wait for it
    doc = json.loads(out)
    assert (code, doc["status"]) == (5, "aborted"), err
    assert f"did not answer within {HANG_TIMEOUT_S} s" in doc["abort_reason"]
    assert "HUGGINGGPT_LLM_TIMEOUT" in doc["abort_reason"]
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
