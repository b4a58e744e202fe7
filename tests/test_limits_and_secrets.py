"""LLM consumption is bounded per run (calls, tokens), and secrets never reach state,
traces, the JSON document, logs or errors, even when an endpoint echoes them back."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hugginggpt.cli import main
from hugginggpt.tools.redact import redact
from tests.conftest import run

BAD = {"tool_args": {"subtasks": [{"id": 0, "task": "teleportation", "dep": [], "args": {}}]}}
VALID = {"tool_args": {"subtasks": [
    {"id": 0, "task": "summarization", "dep": [], "args": {"text": "Some long text."}}]}}


def test_the_llm_call_limit_ends_planning_with_the_reason(compiled, make_context, llm_server):
    llm_server.script("planner", BAD, BAD, BAD)
    out = run(compiled, make_context(backend="dry-run", max_llm_calls=2, max_plan_retries=5))
    assert out["status"] == "aborted"
    assert "the run has made 2 LLM calls, its limit (max_llm_calls = 2)" in out["abort_reason"]
    assert "HUGGINGGPT_MAX_LLM_CALLS" in out["abort_reason"]
    assert len(llm_server.calls("planner")) == 2  # the third was never sent


def test_the_token_limit_keeps_the_results_and_answers_plainly(
        compiled, make_context, llm_server):
    llm_server.script("planner", {**VALID, "tokens": 50})
    out = run(compiled, make_context(backend="dry-run", max_llm_tokens=60))
    # the plan (10 + 50 tokens) used the budget: the subtask still ran, and the answer
    # is the plain summary of the results, saying why
    assert out["status"] == "completed" and out["results"][0].status == "done"
    assert out["responder"] == "template (responder LLM failed)"
    assert "max_llm_tokens = 60" in out["response"] and "summarization" in out["response"]
    assert llm_server.calls("responder") == []


def test_limits_count_per_run_not_per_thread(compiled, make_context, llm_server):
    context = make_context(backend="dry-run", max_llm_calls=2)
    llm_server.script("planner", VALID, VALID)
    first = run(compiled, context, "first", thread="same")
    second = compiled.invoke({"request": "second"}, {"configurable": {"thread_id": "same"}},
                             context=context)
    assert first["status"] == second["status"] == "completed"
    assert second["responder"].startswith("llm:")


SECRETS = {"OPENAI_API_KEY": "sk-test-0123456789abcdefSECRET",
           "HF_TOKEN": "hf_ABCDEFGHIJKLMNOPsecret",
           "LANGSMITH_API_KEY": "lsv2_pt_0123456789secretkey"}


@pytest.mark.parametrize(("credentials", "scheme"), [("", "Bearer"),
                                                    ("user:pa55w0rd-xyz@", "Basic")])
def test_an_echoed_key_reaches_nothing_we_write(capsys, caplog, monkeypatch, tmp_path,
                                                 llm_server, credentials, scheme):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    workspace = tmp_path / "ws"
    # the key is sent to this server (the run names OPENAI_API_KEY for it), which puts it
    # in its error messages; the planner fails, then the responder does
    llm_server.script("planner", {"status": 401, "echo_auth": True})
    config = tmp_path / "llms.toml"
    config.write_text(f'[[endpoints]]\nname = "careless"\nmodel = "m"\n'
                      f'base_url = "http://{credentials}{llm_server.url[7:]}"\n'
                      f'api_key_env = "OPENAI_API_KEY"\n')
    caplog.set_level(logging.DEBUG)
    code = main(["run", "Summarize this", "--llm-config", str(config), "--dry-run",
                 "--json", "--workspace", str(workspace), "--thread", "leak"])
    out, err = capsys.readouterr()
    assert code == 5 and "401" in json.loads(out)["abort_reason"]  # aborted (issue 12: was 1)
    # the endpoint echoed what it was sent: the key (or, with credentials in the URL,
    # httpx's Basic authorization made of them)
    assert f"you sent {scheme} [redacted]" in json.loads(out)["abort_reason"]
    main(["trace", "--thread", "leak", "--workspace", str(workspace), "--full"])
    trace, trace_err = capsys.readouterr()
    assert "careless" in trace
    written = [out, err, trace, trace_err, caplog.text]
    written += [p.read_bytes().decode("latin-1") for p in Path(workspace).rglob("*")
                if p.is_file()]  # checkpoints (SQLite), saved settings, artifacts
    for text in written:
        for secret in [*SECRETS.values(), "pa55w0rd-xyz", "dXNlcjpwYTU1dzByZC14eXo="]:
            assert secret not in text


@pytest.mark.parametrize(("text", "kept"), [
    ("Error: Bearer abcdefgh12345678 rejected", "Error: Bearer [redacted] rejected"),
    ("see http://bob:hunter22@host/v1", "see http://[redacted]@host/v1"),
    ("key sk-proj-abcdefghijklmnop is invalid", "key [redacted] is invalid"),
    ("token hf_abcdefghijklmnopqrst", "token [redacted]"),
    ("you sent Basic dXNlcjpwYTU1dzByZC14eXo=", "you sent Basic [redacted]"),
    ("nothing secret here: 0.42s", "nothing secret here: 0.42s"),
])
def test_redaction_shapes(text, kept):
    assert redact(text) == kept


def test_redaction_of_environment_secrets(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-looking-value")
    assert redact("it said plain-looking-value") == "it said [redacted]"
