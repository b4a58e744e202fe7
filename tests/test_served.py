"""The graph served by a real ``langgraph dev``, driven over ``langgraph_sdk``."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dev_server(tmp_path: Path):
    exe = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which(
        "langgraph")
    if exe is None:
        pytest.fail("langgraph CLI is not installed: pip install -e '.[dev]'")
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1"}
    proc = subprocess.Popen(
        [exe, "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("langgraph dev did not start:\n" + (tmp_path / "server.log").read_text())
        time.sleep(0.3)
    yield url, tmp_path / "server.log"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_langgraph_dev_serves_the_graph(dev_server, tmp_path: Path):
    from langgraph_sdk import get_client

    url, log = dev_server
    plan = [
        {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a boat"}},
        {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
        {"id": 2, "task": "summarization", "dep": [], "args": {"text": "a story"}},
    ]

    async def go() -> dict:
        client = get_client(url=url)
        assistants = await client.assistants.search(graph_id="hugginggpt")
        assert assistants, "the graph is not registered"
        thread = await client.threads.create()
        return await client.runs.wait(
            thread["thread_id"], "hugginggpt", input={"request": "draw and caption a boat"},
            context={"backend": "dry-run", "plan": plan, "dry_run_latency_scale": 0.01,
                     "workspace": str(tmp_path / "ws")},
        )

    out = asyncio.run(go())
    assert out["status"] == "completed"
    assert {r["status"] for r in out["results"].values()} == {"done"}, [r.get("error") for r in out["results"].values()]
    assert (tmp_path / "ws" / out["results"]["0"]["outputs"]["image"]["path"]).is_file()
    server_log = log.read_text()
    assert "unregistered" not in server_log.lower(), server_log[-2000:]
