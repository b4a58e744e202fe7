"""Paths that hold (issue 25): a hung LLM endpoint, Ctrl-C, progress order, ``--file DIR``
and ``models list`` width, each through the real ``hugginggpt`` command.

The hung endpoint is :class:`tests.silent_llm.SilentLLMServer`: it accepts the
connection, reads the request and never answers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.silent_llm import SilentLLMServer

REQUEST = "Summarize: The cat sat on the mat. It was happy. The dog slept all day."
TIMEOUT_S = 6


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
    # before: 3 tries for the planner and 3 for the expert (6 timeouts, 36 s and more)
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
