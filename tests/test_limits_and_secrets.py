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


@pytest.mark.parametrize("planner", ["llm", "auto"])
@pytest.mark.parametrize(("credentials", "scheme"), [("", "Bearer"),
                                                    ("user:pa55w0rd-xyz@", "Basic")])
def test_an_echoed_key_reaches_nothing_we_write(capsys, caplog, monkeypatch, tmp_path,
                                                 llm_server, credentials, scheme, planner):
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
    code = main(["run", "Summarize this: the meeting moved to Friday.", "--llm-config", str(config), "--dry-run",
                 "--json", "--workspace", str(workspace), "--thread", "leak",
                 "--planner", planner])
    out, err = capsys.readouterr()
    # the endpoint echoed what it was sent: the key (or, with credentials in the URL,
    # httpx's Basic authorization made of them)
    if planner == "llm":
        assert code == 5 and "401" in json.loads(out)["abort_reason"]  # aborted
        assert f"you sent {scheme} [redacted]" in json.loads(out)["abort_reason"]
    else:  # planned offline (issue 14), the reason told in the answer
        assert code == 0, err
        assert f"you sent {scheme} [redacted]" in json.loads(out)["planner_fallback"]
        assert json.loads(out)["planner_fallback"] in json.loads(out)["response"]
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


# ------------------------------------------------------------------ credentials in URLs

PASSWORD = "pa55w0rd-xyz"
BASIC = "dXNlcjpwYTU1dzByZC14eXo="  # base64 of user:pa55w0rd-xyz, as httpx sends it
PLAN_FILE = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "A long text."}}]


def _with_password(url: str) -> str:
    return url.replace("://", f"://user:{PASSWORD}@", 1)


def _written(workspace: Path, *texts: str) -> list[str]:
    """Everything a run left: the texts given, and every file of its workspace
    (checkpoints, saved settings, artifacts)."""
    return [*texts, *(p.read_bytes().decode("latin-1") for p in workspace.rglob("*")
                      if p.is_file())]


def _clean(texts: list[str]) -> None:
    for text in texts:
        assert PASSWORD not in text and BASIC not in text


@pytest.mark.parametrize("entry", ["--llm-base-url", "HUGGINGGPT_LLM_BASE_URL",
                                   "OPENAI_BASE_URL", "HUGGINGGPT_LLM_ENDPOINTS", "toml"])
def test_credentials_in_an_llm_url_reach_nothing_we_write(
        capsys, caplog, monkeypatch, tmp_path, llm_server, entry):
    workspace = tmp_path / "ws"
    url = _with_password(llm_server.url)
    argv = ["run", "Summarize this", "--dry-run", "--json", "--workspace", str(workspace),
            "--thread", "url"]
    if entry == "--llm-base-url":
        argv += ["--llm", "m", "--llm-base-url", url]
    elif entry.endswith("BASE_URL"):
        monkeypatch.setenv(entry, url)
        argv += ["--llm", "m"]
    elif entry == "HUGGINGGPT_LLM_ENDPOINTS":
        monkeypatch.setenv(entry, json.dumps([{"model": "m", "base_url": url}]))
    else:
        config = tmp_path / "llms.toml"
        config.write_text(f'[[endpoints]]\nmodel = "m"\nbase_url = "{url}"\n')
        argv += ["--llm-config", str(config)]
    llm_server.script("planner", VALID)
    # the responder's endpoint repeats what it was sent: httpx's Basic header, made of them
    llm_server.script("responder", {"status": 401, "echo_auth": True})
    caplog.set_level(logging.DEBUG)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "completed" and doc["results"]["0"]["status"] == "done"
    assert "you sent Basic [redacted]" in doc["response"]  # they were sent, then scrubbed
    where = f"m @ http://[redacted]@{llm_server.url[7:]}"
    if entry in ("HUGGINGGPT_LLM_ENDPOINTS", "toml"):  # an endpoint named after its model
        where = f"m ({where})"
    assert doc["planner"] == f"llm: {where}"
    assert where in doc["selector"] and {c["llm"] for c in doc["llm_calls"]} == {where}
    main(["trace", "--thread", "url", "--workspace", str(workspace), "--full"])
    trace, trace_err = capsys.readouterr()
    assert where in trace
    _clean(_written(workspace, out, err, trace, trace_err, caplog.text))


@pytest.fixture
def hf_stub(monkeypatch):
    """A stand-in Hugging Face endpoint (huggingface_hub's offline mode blocks even
    loopback calls, so it is lifted)."""
    from tests.hf_stub import HFStubServer

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    server = HFStubServer().start()
    yield server
    server.stop()


def test_credentials_in_an_hf_endpoint_url_reach_nothing_we_write(
        capsys, caplog, monkeypatch, tmp_path, hf_stub, catalog_file):
    from tests.hf_stub import Reply

    workspace = tmp_path / "ws"
    monkeypatch.setenv("HUGGINGGPT_CATALOG", catalog_file(("summarization", "acme/sum", 10)))
    monkeypatch.setenv("HUGGINGGPT_RETRY_BACKOFF", "0.01")
    hf_stub.script("sum", Reply(status=503, json={"error": "loading"}),
                   Reply(json=[{"summary_text": "Short."}]))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN_FILE))
    caplog.set_level(logging.DEBUG)
    code = main(["run", "Summarize this", "--backend", "hf-inference", "--plan", str(plan),
                 "--hf-endpoint", f"acme/sum={_with_password(hf_stub.url_for('sum'))}",
                 "--json", "--workspace", str(workspace), "--thread", "hf"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["results"]["0"]["outputs"]["text"] == "Short."
    assert "(503)" in doc["results"]["0"]["attempt_log"][0]["error"]  # it names the URL
    main(["trace", "--thread", "hf", "--workspace", str(workspace), "--full"])
    trace, trace_err = capsys.readouterr()
    _clean(_written(workspace, out, err, trace, trace_err, caplog.text))
    saved = json.loads((workspace / "threads" / "hf.json").read_text())
    assert saved["context"]["hf_endpoints"]["acme/sum"].startswith("http://[redacted]@")


def test_resume_takes_url_credentials_from_the_environment_or_says_how(
        capsys, monkeypatch, tmp_path, llm_server):
    workspace = tmp_path / "ws"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN_FILE))
    url = _with_password(llm_server.url)
    code = main(["run", "Summarize this", "--dry-run", "--plan", str(plan), "--approval",
                 "plan", "--llm", "m", "--llm-base-url", url, "--json", "--thread", "r",
                 "--workspace", str(workspace)])
    out, _ = capsys.readouterr()
    assert json.loads(out)["status"] == "waiting", code
    saved = (workspace / "threads" / "r.json").read_text()
    assert PASSWORD not in saved and "[redacted]@" in saved

    code = main(["resume", "--thread", "r", "--approve", "--workspace", str(workspace)])
    _, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert (f"thread 'r' ran with llm_base_url = \"http://[redacted]@{llm_server.url[7:]}\", "
            "whose credentials are never saved: to resume it, give the full URL in "
            "HUGGINGGPT_LLM_BASE_URL or OPENAI_BASE_URL") in err
    assert llm_server.calls("responder") == []

    monkeypatch.setenv("HUGGINGGPT_LLM_BASE_URL", url)
    llm_server.script("responder", {"status": 401, "echo_auth": True})
    code = main(["resume", "--thread", "r", "--approve", "--json", "--workspace",
                 str(workspace)])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "completed" and "you sent Basic [redacted]" in doc["response"]
    _clean(_written(workspace, out, err))


def test_a_checkpoint_url_is_saved_without_its_password(capsys, tmp_path):
    import psycopg

    workspace = tmp_path / "ws"
    with pytest.raises(psycopg.OperationalError):  # nothing listens there
        main(["run", "Summarize this", "--dry-run", "--thread", "pg", "--workspace",
              str(workspace), "--checkpoint-url",
              f"postgresql://user:{PASSWORD}@127.0.0.1:1/db"])
    capsys.readouterr()
    saved = json.loads((workspace / "threads" / "pg.json").read_text())
    assert saved["checkpoint_url"] == "postgresql://[redacted]@127.0.0.1:1/db"
    code = main(["resume", "--thread", "pg", "--workspace", str(workspace)])
    _, err = capsys.readouterr()
    assert code == 2 and "pass --checkpoint-url with them" in err and PASSWORD not in err


def test_a_token_as_a_urls_user_name_is_redacted():
    assert redact("cloned https://ghp_0123token@host/repo") == \
        "cloned https://[redacted]@host/repo"
    assert redact("http://u:p@ss@host/v1") == "http://[redacted]@host/v1"
