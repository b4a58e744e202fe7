"""The README's test command cleans up after itself: a PostgreSQL server that `make test`
started is up while the tests run, then stopped, its data removed, whatever the
tests' outcome."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.timeout(600)
@pytest.mark.parametrize("outcome", ["pass", "fail"])
def test_make_test_stops_the_postgresql_it_started(outcome):
    if not glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"):
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not installed: .ci/run's make test installs it")
        pytest.skip("PostgreSQL is not installed (make test installs it with apt)")
    folder = Path(tempfile.mkdtemp(prefix="hugginggpt-make-test-"))
    folder.chmod(0o755)  # the server runs as the postgres user
    port, data = _free_port(), folder / "pg"
    selected = "tests/make_probe.py" if outcome == "pass" else "tests/make_probe.py::nothing"
    env = {**os.environ, "PGTEST_PORT": str(port), "PGTEST_DIR": str(data)}
    try:
        proc = subprocess.run(
            ["make", "-o", ".venv/.installed", "test",
             f"TEST_ARGS={selected} -p no:cacheprovider -rs"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert f"starting a throwaway PostgreSQL on 127.0.0.1:{port}" in proc.stderr, \
            proc.stderr
        assert (proc.returncode == 0) == (outcome == "pass"), proc.stdout[-2000:] + proc.stderr
        if outcome == "pass":
            assert "1 passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout
        assert not _listening(port)  # stopped
        assert not data.exists()  # and its data removed
    finally:
        shutil.rmtree(folder, ignore_errors=True)
