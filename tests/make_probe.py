"""A probe that tests/test_make.py runs inside `make test` (not collected on its own):
the PostgreSQL server that `make test` started answers while the tests run."""

from __future__ import annotations

import os
import socket

URL = os.environ.get("HUGGINGGPT_TEST_POSTGRES_URL")  # read before the clean-env fixture


def test_postgresql_is_up_while_make_test_runs():
    assert URL is not None
    port = int(URL.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) == 0
