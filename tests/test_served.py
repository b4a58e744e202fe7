"""The graph served by a real ``langgraph dev``, driven over ``langgraph_sdk``: streaming
stage events, a plan-approval interrupt resumed with an edited plan, the thread's history,
and the thread surviving a server restart."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PLAN = [
    {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a boat"}},
    {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
    {"id": 2, "task": "summarization", "dep": [], "args": {"text": "a story"}},
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevServer:
    """``langgraph dev`` in its own folder (its saved threads live there)."""

    def __init__(self, folder: Path, env: dict[str, str] | None = None) -> None:
        """``env``: the deployment's environment beyond this process's (its keys, its
        workspace)."""
        self.folder = folder
        self.env = dict(env or {})
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        exe = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or \
            shutil.which("langgraph")
        if exe is None:
            pytest.fail("langgraph CLI is not installed: pip install -e '.[dev]'")
        env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1",
               "LANGGRAPH_NO_VERSION_CHECK": "1", **self.env}
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                [exe, "dev", "--no-browser", "--no-reload", "--port", str(self.port),
                 "--config", str(ROOT / "langgraph.json")],
                cwd=self.folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail("langgraph dev did not start:\n" + self.log.read_text())
            time.sleep(0.3)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def start_deployment(folder: Path, env: dict[str, str]) -> DevServer:
    """A started server of a deployment whose environment is only ``env``: none of the
    user's keys, saved Hugging Face login or ``HUGGINGGPT_*`` settings; offline, with its
    workspace in ``folder`` and the dry-run latency scaled down. (For module fixtures,
    which start before the per-test ones that clear the environment.)"""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("HUGGINGGPT_", "OPENAI_", "HF_", "HUGGINGFACE")):
                patch.delenv(name)
        patch.setenv("HF_HOME", str(folder / "hf-home"))
        patch.setenv("HF_HUB_OFFLINE", "1")
        dev = DevServer(folder, {"HUGGINGGPT_WORKSPACE": str(folder / "ws"),
                                 "HUGGINGGPT_DRY_RUN_SCALE": "0.01", **env})
        dev.start()
    return dev


@pytest.fixture
def server(tmp_path: Path):
    # the workspace and the test knob are the deployment's: a caller may not set them
    dev = DevServer(tmp_path, {"HUGGINGGPT_WORKSPACE": str(tmp_path / "ws"),
                               "HUGGINGGPT_DRY_RUN_SCALE": "0.01"})
    dev.start()
    yield dev
    dev.stop()


def test_served_graph_with_approval_history_and_restart(server: DevServer, tmp_path: Path):
    from langgraph_sdk import get_client

    context = {"backend": "dry-run", "plan": PLAN, "approval": "plan"}

    async def first_part() -> tuple[str, list[Any], dict[str, Any]]:
        client = get_client(url=server.url)
        assert await client.assistants.search(graph_id="hugginggpt")
        thread = await client.threads.create()
        events = [part async for part in client.runs.stream(
            thread["thread_id"], "hugginggpt", input={"request": "draw and caption a boat"},
            context=context, stream_mode=["custom", "updates"])]
        state = await client.threads.get_state(thread["thread_id"])
        return thread["thread_id"], events, state

    thread_id, events, state = asyncio.run(first_part())
    stages = [e.data["stage"] for e in events
              if e.event.startswith("custom") and e.data.get("type") == "stage"]
    assert stages[:3] == ["plan", "select", "approve"]
    [pending] = state["interrupts"]
    assert pending["value"]["policy"] == "plan" and len(pending["value"]["plan"]) == 3
    assert state["values"]["status"] == "waiting"  # the server's state says so (issue 12)

    edited = PLAN[:2]  # drop the summary; keep draw and caption

    async def resume() -> tuple[dict[str, Any], list[Any]]:
        client = get_client(url=server.url)
        out = await client.runs.wait(
            thread_id, "hugginggpt", context=context,
            command={"resume": {"action": "edit", "plan": edited, "who": "studio-user"}})
        history = await client.threads.get_history(thread_id, limit=50)
        return out, history

    out, history = asyncio.run(resume())
    assert out["status"] == "completed"
    assert [s["task"] for s in out["plan"]] == ["text-to-image", "image-to-text"]
    assert {r["status"] for r in out["results"].values()} == {"done"}
    assert out["approvals"][0]["action"] == "edit"
    assert out["approvals"][0]["who"] == "studio-user"
    assert (tmp_path / "ws" / out["results"]["0"]["outputs"]["image"]["path"]).is_file()
    assert len(history) >= 5  # a checkpoint per step, newest first
    assert history[0]["values"]["status"] == "completed"

    server.stop()
    server.start()  # same folder: the dev server's saved threads are there

    async def after_restart() -> dict[str, Any]:
        return await get_client(url=server.url).threads.get_state(thread_id)

    again = asyncio.run(after_restart())
    assert again["values"]["status"] == "completed"
    assert again["values"]["approvals"][0]["who"] == "studio-user"
    log = server.log.read_text()
    assert "unregistered" not in log.lower(), [x for x in log.splitlines() if "nregistered" in x]
    # every server log line printed (no handler failed on a record: the redaction is a
    # filter, it does not replace the record factory that structlog calls)
    assert "Logging error" not in log and "--- Logging" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
