"""With ``--planner auto`` (the default) a planner LLM that cannot be called is not the end
of the run: it is planned offline, and the answer, ``--json`` and the trace say why. With
``--planner llm`` the run aborts as before. Real HTTP: an endpoint on a closed port."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import hugginggpt
from hugginggpt import Context
from tests.conftest import run

REQUEST = "Summarize: The cat sat on the mat. It was happy. The dog slept all day."


def _closed_url() -> str:
    """The URL of an OpenAI-compatible endpoint that refuses connections: a local port
    nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("hugginggpt", path=str(Path(sys.executable).parent))
    assert exe, "the hugginggpt console script is missing: pip install -e ."
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HUGGINGGPT_", "OPENAI_", "HF_", "HUGGINGFACE"))}
    env |= {"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_OFFLINE": "1",
            "HUGGINGGPT_STATE_DIR": str(tmp_path / "state")}
    return subprocess.run([exe, "run", REQUEST, "--backend", "lite", "--json", "--workspace",
                           str(tmp_path / "ws"), *args],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)


def test_an_unreachable_planner_llm_falls_back_to_the_offline_planner_from_the_cli(tmp_path):
    url = _closed_url()
    done = _cli(tmp_path, "--llm", "m", "--llm-base-url", url)
    assert done.returncode == 0, done.stderr  # completed
    assert "Traceback" not in done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "completed"
    assert doc["planner"] == "offline (fallback): read from the request"
    assert doc["planner_fallback"] == (
        f"The planner LLM m @ {url} could not be reached: Connection error: is the server "
        "running, and is --llm-base-url right?; this plan was made offline")
    assert doc["plan"][0]["task"] == "summarization"
    assert doc["results"]["0"]["status"] == "done"
    # the responder would ask the same dead endpoint: it is not asked, and one line says so
    assert doc["responder"].startswith("template (responder LLM not asked")
    assert {call["role"] for call in doc["llm_calls"]} == {"planner"}
    assert "Summary: The cat sat on the mat." in doc["response"]
    assert doc["response"].endswith(
        f"\n\n(The planner LLM m @ {url} could not be reached: Connection error: is the "
        "server running, and is --llm-base-url right?; this plan was made offline, and this "
        "answer without an LLM.)")


def test_an_unreachable_planner_llm_aborts_with_planner_llm_from_the_cli(tmp_path):
    url = _closed_url()
    done = _cli(tmp_path, "--llm", "m", "--llm-base-url", url, "--planner", "llm")
    assert done.returncode == 5, done.stderr  # aborted
    assert "Traceback" not in done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "aborted" and doc["plan"] == [] and not doc["planner_fallback"]
    assert doc["abort_reason"].startswith("the LLM planner failed: ")
    assert "is the server running, and is --llm-base-url right?" in doc["abort_reason"]


def test_no_credentials_plans_offline_and_says_so_from_the_cli(tmp_path):
    done = _cli(tmp_path, "--llm", "gpt-4o-mini")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "completed" and doc["planner"].startswith("offline (fallback)")
    last = doc["response"].splitlines()[-1]
    assert last.startswith("(No credentials for the planner LLM: gpt-4o-mini is OpenAI's API "
                           "and needs a key: set HUGGINGGPT_LLM_API_KEY or OPENAI_API_KEY")
    assert last.endswith("; this plan was made offline, and this answer without an LLM.)")
    [call] = doc["llm_calls"]  # recorded, never sent
    assert call["role"] == "planner" and call["error"].startswith("not called: ")


def test_python_falls_back_with_auto_and_aborts_with_llm(tmp_path):
    url = _closed_url()
    settings = {"llm": "m", "llm_base_url": url, "backend": "lite", "llm_max_retries": 0,
                "workspace": str(tmp_path / "ws")}
    result = hugginggpt.run(REQUEST, **settings)
    assert result.status == "completed" and result.plan[0].task == "summarization"
    assert result.planner_fallback.startswith(f"The planner LLM m @ {url} could not be reached")
    assert result.planner_fallback in result.response
    assert result.document()["planner_fallback"] == result.planner_fallback
    strict = hugginggpt.run(REQUEST, planner="llm", **settings)
    # the endpoint was refused a moment ago, in the run before: it is cooling down
    assert strict.status == "aborted" and (strict.abort_reason or "").startswith(
        f"the LLM planner was not asked: m @ {url} could not be reached: Connection error "
        "in an earlier run; it is asked again in ")
    no_key = hugginggpt.run(REQUEST, llm="gpt-4o-mini", backend="lite",
                            workspace=str(tmp_path / "ws"))
    assert no_key.status == "completed"
    assert no_key.planner_fallback.startswith("No credentials for the planner LLM: gpt-4o-mini")


def test_a_live_responder_still_answers_and_the_fallback_is_told(compiled, workspace,
                                                                 llm_server):
    """The planner's endpoint is down, the responder's is up: the responder is asked,
    and the answer ends with the planner's fallback."""
    llm_server.script("responder", {"content": "The text is about a cat and a dog."})
    context = Context(llm_endpoints=[
        {"name": "dead", "model": "m", "base_url": _closed_url(), "roles": ["planner"]},
        {"name": "live", "model": "scripted-model", "base_url": llm_server.url,
         "roles": ["selector", "responder"]}],
        llm_max_retries=0, backend="lite", workspace=str(workspace))
    out = run(compiled, context, REQUEST)
    assert out["status"] == "completed" and out["planner"].startswith("offline (fallback)")
    assert out["responder"].startswith("llm: ")
    assert out["response"].startswith("The text is about a cat and a dog.\n\n(The planner LLM "
                                      "dead (m @ http://127.0.0.1:")  # the label of "dead"
    assert out["response"].endswith("; this plan was made offline.)")
    assert len(llm_server.calls("responder")) == 1


@pytest.mark.parametrize("planner", ["auto", "llm"])
def test_when_the_offline_planner_cannot_either_the_run_aborts_saying_both(
        compiled, workspace, tmp_path, planner):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"id": "b-quote", "request": 'Translate "hello" into Italian',
                                "plan": [{"id": 0, "task": "translation", "dep": [], "args": {
                                    "text": "hello", "tgt_lang": "it"}}]}))
    context = Context(llm="m", llm_base_url=_closed_url(), llm_max_retries=0, planner=planner,
                      backend="lite", workspace=str(workspace), plan_bank=str(bank))
    out = run(compiled, context, "Do it to clip.mp4")  # the offline planner reads no task
    assert out["status"] == "aborted"
    if planner == "auto":
        assert out["abort_reason"].startswith("The planner LLM m @ ")
        # said for the caller, a Python one here (the CLI's says --llm-base-url)
        assert "could not be reached: Connection error, and the offline planner could not " \
               "plan the request either: " in out["abort_reason"]
        assert out["abort_reason"].endswith(  # the fixes of both, as a Python caller sets them
            "Is the server running, and is llm_base_url=... right?; attach files with the "
            "files argument of hugginggpt.run.")
    else:
        assert out["abort_reason"].startswith("the LLM planner failed")


def test_a_run_planned_offline_after_a_dead_planner_llm_replays_the_same(capsys, tmp_path):
    from hugginggpt.cli import main

    workspace = str(tmp_path / "ws")
    code = main(["run", REQUEST, "--llm", "m", "--llm-base-url", _closed_url(), "--backend",
                 "lite", "--json", "--thread", "fb", "--workspace", workspace])
    recorded = json.loads(capsys.readouterr().out)
    assert code == 0 and recorded["planner_fallback"]
    code = main(["replay", "--thread", "fb", "--workspace", workspace, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["same"] is True, report["differences"]
    assert report["response"].endswith("this plan was made offline, and this answer without "
                                       "an LLM.)")
