"""Paths that hold (issue 25): a hung LLM endpoint, Ctrl-C, progress order, ``--file DIR``
and ``models list`` width, each through the real ``hugginggpt`` command.

The hung endpoint is :class:`tests.silent_llm.SilentLLMServer`: it accepts the
connection, reads the request and never answers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.silent_llm import SilentLLMServer

REQUEST = "Summarize: The cat sat on the mat. It was happy. The dog slept all day."
TIMEOUT_S = 12


def _exe() -> str:
    exe = shutil.which("hugginggpt", path=str(Path(sys.executable).parent))
    assert exe, "the hugginggpt console script is missing: pip install -e ."
    return exe


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HUGGINGGPT_", "OPENAI_", "HF_", "HUGGINGFACE"))}
    return env | {"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_OFFLINE": "1",
                  "HUGGINGGPT_STATE_DIR": str(tmp_path / "state"), **extra}


def _run_args(tmp_path: Path, url: str, *args: str) -> list[str]:
    return [_exe(), "run", REQUEST, "--llm", "m", "--llm-base-url", url,
            "--workspace", str(tmp_path / "ws"), *args]


def test_a_hung_endpoint_costs_one_timeout_per_run(tmp_path):
    """Planner, selector, responder and the llm expert all route to one endpoint that
    never answers: one request, one timeout, then the offline stand-ins and a message
    that says it did not answer and what to do."""
    with SilentLLMServer() as silent:
        started = time.monotonic()
        done = subprocess.run(
            _run_args(tmp_path, silent.url, "--json"), capture_output=True, text=True,
            timeout=300, cwd=tmp_path,
            env=_env(tmp_path, HUGGINGGPT_LLM_TIMEOUT=str(TIMEOUT_S)))
        elapsed = time.monotonic() - started
        received = silent.count()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doc = json.loads(done.stdout)
    assert received == 1, silent.requests  # the client makes no retries of its own
    sent = [c for c in doc["llm_calls"] if not (c["error"] or "").startswith("not called")]
    assert len(sent) == 1 and sent[0]["role"] == "planner"
    waited = sum(c["latency_s"] for c in doc["llm_calls"])
    assert TIMEOUT_S <= waited < 1.5 * TIMEOUT_S, waited
    # before: 3 tries for the planner and 3 for the expert (6 timeouts, 72 s and more)
    assert elapsed < 4 * TIMEOUT_S, elapsed
    assert doc["planner"].startswith("offline (fallback)")
    assert doc["responder"].startswith("template")
    assert doc["results"]["0"]["status"] == "done"
    fallback = doc["planner_fallback"]
    assert fallback.startswith(f"The planner LLM m @ {silent.url} did not answer within "
                               f"{TIMEOUT_S} s (not a byte came back: is the server up")
    assert "HUGGINGGPT_LLM_TIMEOUT" in fallback and fallback in doc["response"]
    expert = [c for c in doc["llm_calls"] if c["role"] == "expert"]
    assert all(c["error"].startswith("not called") for c in expert)
    # while it waited, the plain progress said what for, and for how long, every 5 s
    waiting = [line for line in done.stderr.splitlines()
               if f"[plan] waiting for the planner LLM at m @ {silent.url}: " in line]
    seconds = [int(line.rsplit(": ", 1)[1].removesuffix(" s")) for line in waiting]
    assert len(seconds) >= 2 and seconds == sorted(seconds) and seconds[-1] > seconds[0], (
        done.stderr)


def test_models_list_fits_100_columns_and_wide_has_everything(capsys):
    from hugginggpt.cli import main

    assert main(["models", "list"]) == 0
    narrow = capsys.readouterr().out
    assert main(["models", "list", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert max(len(line) for line in narrow.splitlines()) <= 100
    assert max(len(line) for line in wide.splitlines()) > 100  # the table as it was
    # every model id whole on one line, and every reason's words in both
    ids = [line.split()[1] for line in wide.splitlines()[1:]
           if line and not line.startswith(" ") and len(line.split()) > 1
           and "/" in line.split()[1]]
    assert len(ids) > 50
    for model in ids:
        assert any(line.strip().startswith(f"{model} (") for line in narrow.splitlines()), model
    assert " ".join(narrow.split()).count("no: ") == " ".join(wide.split()).count("no: ")
    header = "TASK MODEL LIBRARY SIZE BACKEND CAN RUN NOW"
    assert " ".join(wide.splitlines()[0].split()) == header


def test_a_directory_given_to_file_is_a_directory(tmp_path, capsys):
    from hugginggpt.cli import main

    folder = tmp_path / "photos"
    folder.mkdir()
    assert main(["run", "caption it", "--file", str(folder), "--backend", "lite",
                 "--workspace", str(tmp_path / "ws")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"hugginggpt: --file {folder}: is a directory; attach files, "
                           "not folders")


def test_the_python_api_says_a_folder_is_not_a_file_in_its_own_terms(tmp_path):
    import hugginggpt
    from hugginggpt.tools.errors import ArgumentError

    with pytest.raises(ArgumentError) as raised:
        hugginggpt.run("caption it", files=[tmp_path], workspace=str(tmp_path / "ws"))
    assert str(raised.value).startswith(f"files: {tmp_path}: is a directory; pass the files "
                                        "in it, not the folder")


def _cpu_s(pid: int) -> float:
    """CPU seconds the process has used (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interrupt(proc: subprocess.Popen[str], moment: str) -> tuple[int, str, float]:
    """Send SIGINT at ``moment`` (a line that starts with it on stderr; ``imports``:
    once the process has used 0.3 s of CPU, well into importing the command's modules,
    which take about 1.5 s of CPU); its exit code, stderr and seconds to exit."""
    assert proc.stderr is not None
    seen = []
    if moment == "imports":
        while _cpu_s(proc.pid) < 0.3:
            assert proc.poll() is None, "the command ended before it was interrupted"
            time.sleep(0.002)
    else:
        for line in proc.stderr:
            seen.append(line)
            if moment in line:
                break
        else:
            pytest.fail(f"no {moment!r} line on stderr: {''.join(seen)}")
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=120)
    return proc.returncode, "".join(seen) + err, time.monotonic() - sent


@pytest.mark.parametrize("moment", ["imports", "[plan] started", "[execute] #0"])
def test_ctrl_c_at_any_moment_is_interrupted_and_130(tmp_path, moment):
    """Ctrl-C while the command imports, while the planner waits for an LLM that does
    not answer, and while a subtask runs: "interrupted", exit 130, no traceback, and
    no wait for the call in flight."""
    with SilentLLMServer() as silent:
        if moment == "[execute] #0":  # no LLM: the offline planner, a slow simulated expert
            args = [_exe(), "run", REQUEST, "--backend", "dry-run",
                    "--workspace", str(tmp_path / "ws")]
            env = _env(tmp_path, HUGGINGGPT_DRY_RUN_SCALE="200")
        else:
            args = _run_args(tmp_path, silent.url)
            env = _env(tmp_path, HUGGINGGPT_LLM_TIMEOUT="300")
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=tmp_path)
        code, err, took = _interrupt(proc, moment)
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert took < 60, took  # not the LLM's 300 s timeout, nor the subtask's


def test_streamed_execution_says_the_plan_first_then_one_execute_started(tmp_path):
    """Subtasks that start while the plan streams are told after the plan's lines, under
    one "[execute] started" (they used to come first, and "started" twice)."""
    from tests.llm_server import ScriptedLLMServer

    def sub(i: int, task: str, dep: list[int], **args: str) -> dict[str, object]:
        return {"id": i, "task": task, "dep": dep, "args": args}

    server = ScriptedLLMServer(tokens_per_s=50).start()  # 150 tokens: a 3 s stream
    try:
        server.script("planner", {"tool_args": {"subtasks": [
            sub(0, "summarization", [], text="The cat sat on the mat. It was happy."),
            sub(1, "summarization", [], text="The dog slept all day long."),
            sub(2, "translation", [0], text="<GENERATED>-0", tgt_lang="fr")]},
            "tokens": 150})
        done = subprocess.run(
            [_exe(), "run", "Summarize two texts, then translate the first", "--llm",
             "scripted-model", "--llm-base-url", server.url, "--backend", "dry-run",
             "--no-cache", "--workspace", str(tmp_path / "ws")],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env=_env(tmp_path, HUGGINGGPT_LLM_RETRIES="0"))
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    lines = [line.split(maxsplit=1)[1] for line in done.stderr.splitlines()
             if line.strip().split(maxsplit=1)[0].endswith("s")
             and line.split(maxsplit=1)[1].startswith("[")]
    assert any("while the plan streams" in line for line in lines), done.stderr  # it did
    planned = lines.index("[plan] 3 subtask(s): #0 summarization, #1 summarization, "
                          "#2 translation")
    first_execute = next(i for i, line in enumerate(lines) if line.startswith("[execute]"))
    assert planned < first_execute, done.stderr
    started = [line for line in lines if line.startswith("[execute] started")]
    assert len(started) == 1 and started[0].endswith("began while the plan streamed)"), (
        done.stderr)
    assert lines.index(started[0]) == first_execute
    assert all(not line.startswith(("[select]", "[plan]")) for line in lines[first_execute:])


def test_the_runs_llm_wait_is_bounded_by_max_run_time(tmp_path):
    """A 300 s LLM timeout, a 3 s --max-run-time: the hung planner call is cut at 3 s."""
    with SilentLLMServer() as silent:
        done = subprocess.run(
            _run_args(tmp_path, silent.url, "--json", "--max-run-time", "3"),
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env=_env(tmp_path, HUGGINGGPT_LLM_TIMEOUT="300"))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    [planner] = [c for c in doc["llm_calls"] if c["role"] == "planner"]
    assert 3 <= planner["latency_s"] < 10, planner
    assert "did not answer within 3 s" in doc["planner_fallback"]


def test_a_silent_endpoint_cools_down_across_runs_in_one_process(tmp_path):
    """The UI and the server run many runs per process: the next run does not ask an
    endpoint that just did not answer, and says when it will be asked again."""
    import hugginggpt

    settings = {"llm": "m", "backend": "lite", "llm_timeout_s": 2.0,
                "workspace": str(tmp_path / "ws")}
    with SilentLLMServer() as silent:
        first = hugginggpt.run(REQUEST, llm_base_url=silent.url, **settings)
        second = hugginggpt.run(REQUEST, llm_base_url=silent.url, **settings)
        received = silent.count()
    assert received == 1
    assert first.status == second.status == "completed"
    assert "did not answer within 2 s (not a byte came back" in first.planner_fallback
    assert second.planner_fallback.startswith(
        f"The planner LLM m @ {silent.url} did not answer within 2 s")
    [call] = [c for c in second.llm_calls if c.role == "planner"]
    assert call.error.startswith("not called") and call.latency_s == 0


def test_a_slow_endpoint_is_told_apart_from_a_silent_one(tmp_path, capsys, llm_server,
                                                         monkeypatch):
    """The endpoint answered the planner, then was too slow for the responder: the
    advice is to raise the timeout, not to check whether the server is up."""
    from hugginggpt.cli import main

    monkeypatch.setenv("HUGGINGGPT_LLM_TIMEOUT", "1")
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": "The cat sat."}}]}})
    llm_server.script("responder", {"content": "late", "delay": 5})
    code = main(["run", REQUEST, "--llm", "scripted-model", "--llm-base-url", llm_server.url,
                 "--backend", "lite", "--json", "--workspace", str(tmp_path / "ws")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["planner"].startswith("llm: "), doc
    assert ("The LLM responder failed: scripted-model @ "
            f"{llm_server.url} gave no complete reply within 1 s (it answers, but slowly: "
            "raise HUGGINGGPT_LLM_TIMEOUT (now 1 s)") in doc["response"]
