"""The set-up installs torch's CPU build from PyTorch's CPU wheel index when it can be
reached, and says so when it falls back to the configured package index (as here)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "install_torch.sh"
PIN = next(line.split('"')[1] for line in (ROOT / "pyproject.toml").read_text().splitlines()
           if '"torch==' in line)


class _Index(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        found = self.path.rstrip("/") == "/whl/cpu/torch"
        self.send_response(200 if found else 404)
        self.end_headers()
        self.wfile.write(b"<a href='torch-x.whl'>torch</a>" if found else b"")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
    server.shutdown()
    server.server_close()


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, Path]:
    """A virtualenv's bin folder whose pip records what it was asked to install."""
    bin_dir, log = tmp_path / "bin", tmp_path / "pip.log"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "pip").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bin_dir / "pip").chmod(0o755)
    return bin_dir / "pip", log


def _install(pip: Path, *index: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), str(pip), *index], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PIP_INDEX_URL": ""})


def test_the_cpu_index_is_used_when_it_answers(venv, index):
    pip, log = venv
    proc = _install(pip, index)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().split() == ["install", "--quiet", "--index-url", index, PIN]
    assert f"{PIN} from {index}" in proc.stderr


def test_an_unreachable_index_falls_back_to_the_package_index_and_says_so(venv):
    pip, log = venv
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/whl/cpu"
    proc = _install(pip, closed)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().split() == ["install", "--quiet", PIN]
    assert f"{closed} is not reachable" in proc.stderr


def test_default_asks_the_package_index_and_the_makefile_uses_the_script(venv):
    pip, log = venv
    assert _install(pip, "default").returncode == 0
    assert log.read_text().split() == ["install", "--quiet", PIN]
    makefile = (ROOT / "Makefile").read_text()
    assert 'scripts/install_torch.sh $(BIN)/pip "$(TORCH_INDEX)"' in makefile
    assert "TORCH_INDEX ?= https://download.pytorch.org/whl/cpu" in makefile
