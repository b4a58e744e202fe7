"""An LLM configured without its key or token is known before any request: with
``--planner llm`` the planner aborts cleanly (with ``auto``, the default, it plans offline:
tests/test_planner_fallback.py), the selector and the responder fall back, each naming
the variable to set and how; from the command line, Python and the graph alike."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import huggingface_hub.constants

import hugginggpt
from hugginggpt import Context, build_graph
from hugginggpt.cli import main
from hugginggpt.tools.llm.config import Endpoint
from hugginggpt.tools.llm.credentials import missing_credentials
from tests.conftest import run

PLAN = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "A long story."}}]


def test_openai_without_a_key_aborts_cleanly_from_the_command_line(tmp_path):
    exe = shutil.which("hugginggpt", path=str(Path(sys.executable).parent))
    assert exe, "the hugginggpt console script is missing: pip install -e ."
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HUGGINGGPT_", "OPENAI_", "HF_", "HUGGINGFACE"))}
    env |= {"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [exe, "run", "Summarize: The cat sat on the mat. It was happy.", "--llm",
         "gpt-4o-mini", "--planner", "llm", "--workspace", str(tmp_path / "ws")],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert done.returncode == 5, done.stderr  # aborted
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    assert done.stdout.startswith("The run was aborted: the planner LLM cannot be called: "
                                  "gpt-4o-mini is OpenAI's API and needs a key")
    assert "export OPENAI_API_KEY=sk-..." in done.stdout
    assert "--llm-base-url" in done.stdout
    assert "aborted" in done.stderr.splitlines()[-1]


def test_a_hugging_face_model_without_a_token_aborts_naming_hf_token(capsys, workspace):
    code = main(["run", "Summarize: a text", "--llm", "hf:meta-llama/Llama-3.1-8B-Instruct",
                 "--planner", "llm", "--dry-run", "--json", "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code == 5, err  # aborted
    doc = json.loads(out)
    assert doc["status"] == "aborted" and not doc["results"]
    assert "hf:meta-llama/Llama-3.1-8B-Instruct is a Hugging Face model and needs a token: " \
           "set HF_TOKEN (export HF_TOKEN=hf_...) or log in with `hf auth login`" \
        in doc["abort_reason"]
    [call] = doc["llm_calls"]  # recorded, not sent
    assert not call["ok"] and call["error"].startswith("not called: ")


def test_a_saved_hugging_face_login_or_a_url_needs_no_token(monkeypatch):
    model = Endpoint(name="m", model="hf:org/model")
    assert "HF_TOKEN" in (missing_credentials(model) or "")
    Path(huggingface_hub.constants.HF_TOKEN_PATH).write_text("hf_savedloginTOKEN123")
    assert missing_credentials(model) is None  # `hf auth login` saved one
    Path(huggingface_hub.constants.HF_TOKEN_PATH).unlink()
    assert missing_credentials(Endpoint(name="u", model="hf:http://127.0.0.1:9/")) is None
    monkeypatch.setenv("HF_TOKEN", "hf_fromtheenvironment1")
    assert missing_credentials(model) is None


def test_the_openai_key_is_never_the_token_of_a_hugging_face_llm(monkeypatch):
    from hugginggpt.tools.llm.config import routing_config
    from hugginggpt.tools.llm.credentials import hf_token

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789abcdef")
    config = routing_config(Context(llm="hf:org/model"))
    assert config is not None
    [endpoint] = config.endpoints
    assert hf_token(endpoint) is None and "HF_TOKEN" in (missing_credentials(endpoint) or "")
    monkeypatch.setenv("HF_TOKEN", "hf_thehuggingfacetoken")
    token = hf_token(endpoint)
    assert token is not None and token.get_secret_value() == "hf_thehuggingfacetoken"
    assert "hf_thehuggingfacetoken" not in repr(token)  # a secret is never shown


def _config(tmp_path: Path, *endpoints: str) -> str:
    path = tmp_path / "llms.toml"
    path.write_text("".join(f"[[endpoints]]\n{e}\n" for e in endpoints))
    return str(path)


def test_an_api_key_env_naming_an_unset_variable_aborts_naming_it(
        capsys, workspace, tmp_path, llm_server):
    config = _config(tmp_path, f'name = "locked"\nmodel = "m"\nbase_url = "{llm_server.url}"\n'
                               'api_key_env = "MY_LLM_KEY"')
    code = main(["run", "Summarize: a text", "--llm-config", config, "--dry-run", "--json",
                 "--planner", "llm", "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code == 5, err  # aborted
    reason = json.loads(out)["abort_reason"]
    assert "reads its key from MY_LLM_KEY (its api_key_env), which is not set: " \
           "export MY_LLM_KEY=..." in reason
    assert llm_server.requests == []  # known before any request


def test_endpoints_without_their_keys_are_skipped_for_those_that_have_them(
        capsys, caplog, workspace, tmp_path, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": PLAN}})
    config = _config(
        tmp_path,
        f'name = "locked"\nmodel = "m"\nbase_url = "{llm_server.url}"\n'
        'api_key_env = "MY_LLM_KEY"\ntier = "large"',
        f'name = "open"\nmodel = "m"\nbase_url = "{llm_server.url}"\ntier = "small"')
    code = main(["run", "Summarize: a text", "--llm-config", config, "--dry-run", "--json",
                 "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "completed"
    assert {c["endpoint"] for c in doc["llm_calls"]} == {"open"}
    assert "LLM endpoint skipped for the planner: locked" in caplog.text


def test_python_gets_an_aborted_result_not_an_exception(tmp_path):
    result = hugginggpt.run("Summarize: a text", llm="gpt-4o-mini", backend="dry-run",
                            planner="llm", workspace=str(tmp_path / "ws"))
    assert result.status == "aborted"
    assert result.abort_reason and "export OPENAI_API_KEY=sk-..." in result.abort_reason
    planned = hugginggpt.run("Summarize: The museum reopens on Saturday after a long "
                             "renovation.", llm="gpt-4o-mini", backend="dry-run",
                             workspace=str(tmp_path / "ws"))  # planner auto: offline
    assert planned.status == "completed" and "export OPENAI_API_KEY=sk-..." in \
        planned.planner_fallback
    # the graph snippet of the Python guide (docs/guides/python.md), with a dry run
    from langgraph.checkpoint.memory import InMemorySaver

    app = build_graph(checkpointer=InMemorySaver())
    out = app.invoke({"request": "Summarise this: ...", "files": []},
                     {"configurable": {"thread_id": "demo-1"}},
                     context=Context(llm="gpt-4o-mini", backend="dry-run", max_subtasks=8,
                                     planner="llm", workspace=str(tmp_path / "ws")))
    assert out["status"] == "aborted" and "OPENAI_API_KEY" in out["abort_reason"]


def test_the_selector_and_the_responder_fall_back_with_the_reason(
        compiled, workspace, catalog_file):
    catalog = catalog_file(("summarization", "org/a", 100), ("summarization", "org/b", 100))
    context = Context(llm="gpt-4o-mini", backend="dry-run", plan=PLAN, catalog=catalog,
                      workspace=str(workspace), dry_run_latency_scale=0.0)
    out = run(compiled, context)
    assert out["status"] == "completed" and out["results"][0].status == "done"
    reason = out["selections"][0].reason
    assert "close call" in reason and "took the top-ranked" in reason
    assert "the selector LLM cannot be called: gpt-4o-mini is OpenAI's API" in reason
    assert out["responder"] == "template (responder LLM failed)"
    last = out["response"].splitlines()[-1]  # the answer in words, then why
    assert last.startswith("(The responder LLM cannot be called: gpt-4o-mini")
    assert "OPENAI_API_KEY" in last
