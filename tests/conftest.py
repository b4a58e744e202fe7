"""Shared fixtures: a scripted LLM server, a clean environment, a workspace, test tools.

No test reaches the network: outbound connections other than loopback fail loudly.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from hypothesis.configuration import set_hypothesis_home_dir
from langgraph.checkpoint.memory import InMemorySaver

from hugginggpt import build_graph
from hugginggpt.graph.checkpoint import serializer
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts import registry
from tests.llm_server import ScriptedLLMServer

# Property tests keep no example database, and hypothesis's caches go to the temp
# folder: nothing is written into the checkout.
hypothesis_settings.register_profile("hugginggpt", database=None)
hypothesis_settings.load_profile("hugginggpt")
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "hugginggpt-hypothesis")

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            if not ipaddress.ip_address(host).is_loopback:
                raise RuntimeError(f"test tried to reach the network: {address}")
        except ValueError:
            if host != "localhost":
                raise RuntimeError(f"test tried to reach the network: {address}") from None
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Block real outbound calls, clear the user's LLM settings, hide a saved Hugging
    Face login (huggingface_hub reads its offline switch once, at import) and give the
    test its own index of threads."""
    import huggingface_hub.constants

    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    no_token = tmp_path_factory.mktemp("hf-home") / "token"
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(no_token))
    monkeypatch.setattr(huggingface_hub.constants, "HF_STORED_TOKENS_PATH",
                        str(no_token.with_name("stored_tokens")))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    import os

    for name in list(os.environ):
        if name.startswith("HUGGINGGPT_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # the per-user index of threads (resume from any folder): one per test, never the
    # user's own
    monkeypatch.setenv("HUGGINGGPT_STATE_DIR", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def fresh_router() -> Iterator[None]:
    """Each test starts from the routing priors and a closed breaker (both per process)."""
    from hugginggpt.tools.llm.breaker import BREAKER
    from hugginggpt.tools.llm.router import ROUTER

    ROUTER.reset()
    BREAKER.reset()
    yield
    ROUTER.reset()
    BREAKER.reset()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def make_context(workspace: Path, llm_server: ScriptedLLMServer):
    """Context for a run against the scripted server, fast retries, given overrides."""

    def make(**overrides: Any) -> Context:
        settings: dict[str, Any] = {
            "llm": "scripted-model", "llm_base_url": llm_server.url, "llm_max_retries": 0,
            "llm_timeout_s": 10.0, "workspace": str(workspace), "retry_backoff_s": 0.01,
            "dry_run_latency_scale": 0.01,
        }
        return Context(**(settings | overrides))

    return make


@pytest.fixture
def compiled():
    return build_graph(checkpointer=InMemorySaver(serde=serializer()))


@pytest.fixture
def test_tools() -> Iterator[list[registry.Tool]]:
    """Tools registered by a test, removed afterwards."""
    added: list[registry.Tool] = []
    yield added
    for t in added:
        registry.unregister_tool(t)


@pytest.fixture
def catalog_file(tmp_path: Path):
    """Write a catalog with the given (task, model id, downloads) entries."""

    def write(*entries: tuple[str, str, int]) -> str:
        path = tmp_path / "catalog.json"
        path.write_text(json.dumps({"version": 1, "models": [
            {"id": model, "task": task, "downloads": downloads, "likes": 0,
             "expected_latency_s": 0.01}
            for task, model, downloads in entries
        ]}))
        return str(path)

    return write


def run(compiled: Any, context: Context, request: str = "do it", thread: str = "t", **inp: Any):
    """Invoke the graph on a fresh thread and return its output."""
    return compiled.invoke({"request": request, **inp},
                           {"configurable": {"thread_id": thread}}, context=context)


def benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported as a module, for a small run inside a test."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def wait_until_inside(threads: list[threading.Thread], code: CodeType,
                      timeout: float = 30.0) -> None:
    """Wait until each of ``threads`` is running ``code`` (a function's ``__code__``)
    somewhere in its stack: a test of what threads racing into one function do holds
    the first one there until the others have arrived, instead of sleeping for a time
    that a busy machine can overrun."""
    deadline = time.monotonic() + timeout
    idents = [t.ident for t in threads]
    while not all(_runs(sys._current_frames().get(i), code) for i in idents):
        assert time.monotonic() < deadline, "the other threads never arrived"
        time.sleep(0.005)


def _runs(frame: FrameType | None, code: CodeType) -> bool:
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False
