"""Checkpointers by URL.

- ``memory``: in-process (tests, notebooks).
- ``sqlite:///path/to/file.sqlite`` or a bare path ending in ``.sqlite``/``.db``: one
  file, the CLI's default (``<workspace>/checkpoints.sqlite``).
- ``postgresql://user:pass@host/db``: many processes or machines
  (``pip install langgraph-checkpoint-postgres``).

Every saver gets a serializer that knows this project's state types, so checkpoints
load them without "unregistered type" warnings.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from hugginggpt.graph.state import STATE_TYPES

__all__ = ["serializer", "register_state_types", "open_checkpointer", "aopen_checkpointer",
           "sqlite_path"]


_SETUP_LOCK = 0x48474754
"""Processes starting together run the migrations one at a time. They poll for the lock
rather than wait in a statement: a waiting statement holds a transaction, and the
migrations' CREATE INDEX CONCURRENTLY waits for every open transaction (a deadlock)."""
_TRY_LOCK = "SELECT pg_try_advisory_lock(%s)"


def serializer() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=list(STATE_TYPES))


def register_state_types() -> None:
    """Declare this project's state models safe for langgraph's msgpack deserializer.

    Our own checkpointers get :func:`serializer`. For the LangGraph server,
    ``langgraph.json`` declares the same types under
    ``checkpointer.serde.allowed_msgpack_modules``, but langgraph-api (0.16.7) does not
    give that list to the serializer that reads a thread's state (langgraph issue
    #7695): without this patch the served graph logs "Deserializing unregistered type"
    for every nested model (checked by ``tests/test_served.py``). These models are plain
    pydantic data with validation on construction, which is what langgraph's list of
    safe types holds; adding them there is the one hook the server's serializer sees.
    Drop this once the server applies the declared list.
    """
    from langgraph.checkpoint.serde import _msgpack

    ours = {(t.__module__, t.__name__) for t in STATE_TYPES}
    _msgpack.SAFE_MSGPACK_TYPES = _msgpack.SAFE_MSGPACK_TYPES | ours


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL, or None when the URL is not SQLite.

    As in SQLAlchemy: ``sqlite:///runs.sqlite`` is relative, ``sqlite:////abs/runs.sqlite``
    absolute; ``sqlite:runs.sqlite`` and a bare ``runs.sqlite`` are accepted too.
    """
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///"))
    if url.startswith("sqlite:"):
        return Path(url.removeprefix("sqlite:"))
    if url.endswith((".sqlite", ".sqlite3", ".db")):
        return Path(url)
    return None


def _postgres_module(name: str):  # noqa: ANN202 - a module
    try:
        import importlib

        return importlib.import_module(name)
    except ImportError as exc:
        raise RuntimeError(
            "a postgresql:// checkpoint URL needs the PostgreSQL checkpointer: "
            "pip install -e '.[postgres]' (langgraph-checkpoint-postgres and psycopg)"
        ) from exc


def _unknown(url: str) -> ValueError:
    return ValueError(
        f"unknown checkpoint URL {url!r}: use 'memory', 'sqlite:///path.sqlite' "
        "or 'postgresql://...'"
    )


@contextmanager
def open_checkpointer(url: str) -> Iterator[BaseCheckpointSaver]:
    """A sync checkpointer for ``invoke``/``stream``."""
    if url == "memory":
        yield InMemorySaver(serde=serializer())
        return
    if (path := sqlite_path(url)) is not None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False)
        try:
            yield SqliteSaver(conn, serde=serializer())
        finally:
            conn.close()
        return
    if url.startswith(("postgres://", "postgresql://")):
        module = _postgres_module("langgraph.checkpoint.postgres")
        import psycopg

        with module.PostgresSaver.from_conn_string(url) as saver:
            saver.serde = serializer()
            with psycopg.connect(url, autocommit=True) as lock:
                while not (row := lock.execute(_TRY_LOCK, (_SETUP_LOCK,)).fetchone()) or not row[0]:
                    time.sleep(0.1)
                saver.setup()  # the lock is released when this connection closes
            yield saver
        return
    raise _unknown(url)


@asynccontextmanager
async def aopen_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for ``ainvoke``/``astream`` (what the CLI uses)."""
    if url == "memory":
        yield InMemorySaver(serde=serializer())
        return
    if (path := sqlite_path(url)) is not None:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path.parent.mkdir(parents=True, exist_ok=True)
        async with aiosqlite.connect(str(path)) as conn:
            yield AsyncSqliteSaver(conn, serde=serializer())
        return
    if url.startswith(("postgres://", "postgresql://")):
        module = _postgres_module("langgraph.checkpoint.postgres.aio")
        import psycopg

        async with module.AsyncPostgresSaver.from_conn_string(url) as saver:
            saver.serde = serializer()
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as lock:
                while True:
                    row = await (await lock.execute(_TRY_LOCK, (_SETUP_LOCK,))).fetchone()
                    if row and row[0]:
                        break
                    await asyncio.sleep(0.1)
                await saver.setup()  # the lock is released when this connection closes
            yield saver
        return
    raise _unknown(url)
