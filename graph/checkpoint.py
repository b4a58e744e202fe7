"""Checkpointers by URL.

- ``memory``: in-process (tests, notebooks).
- ``sqlite:///path/to/file.sqlite`` or a bare path ending in ``.sqlite``/``.db``: one
  file, the CLI's default (``<workspace>/checkpoints.sqlite``).
- ``postgresql://user:pass@host/db``: many processes or machines
  (``pip install langgraph-checkpoint-postgres``).

Every saver gets a serializer that knows this project's state types, so checkpoints
load them without "unregistered type" warnings.

Every saver comes with a LangGraph Store beside it, where the LLM calls' prompts and
replies are kept out of the checkpoints (:mod:`hugginggpt.tools.llm.transcripts`): an
``InMemoryStore`` with ``memory``, the ``store`` table in the same SQLite file (opened at
its first use: a run that calls no LLM never opens it), the ``store`` table of the same
PostgreSQL database. :func:`store_of` gives the one opened
with a saver, and :func:`~hugginggpt.graph.builder.build_graph` compiles with it. The
LangGraph server brings its own store, as it brings its own checkpointer.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.memory import InMemoryStore

from hugginggpt.graph.state import STATE_TYPES

__all__ = ["serializer", "register_state_types", "open_checkpointer", "aopen_checkpointer",
           "sqlite_path", "store_of"]

_STORES: weakref.WeakKeyDictionary[BaseCheckpointSaver, BaseStore] = (
    weakref.WeakKeyDictionary())


def store_of(saver: BaseCheckpointSaver | None) -> BaseStore | None:
    """The store opened beside ``saver`` by :func:`open_checkpointer` or
    :func:`aopen_checkpointer` (None for a saver made otherwise)."""
    return _STORES.get(saver) if saver is not None else None


_SETUP_TRIES = 5


def _setup_sqlite_store(store: Any) -> None:
    """The store's tables, made once: processes opening one file together may run the
    same migration at once, and the later one's record of it then fails (its SQL is
    idempotent); it reads the version again and goes on from there."""
    for tries_left in range(_SETUP_TRIES - 1, -1, -1):
        try:
            return store.setup()
        except (sqlite3.IntegrityError, sqlite3.OperationalError):
            if not tries_left:
                raise
            time.sleep(0.05)


async def _asetup_sqlite_store(store: Any) -> None:
    """:func:`_setup_sqlite_store` for the async store."""
    for tries_left in range(_SETUP_TRIES - 1, -1, -1):
        try:
            return await store.setup()
        except (sqlite3.IntegrityError, sqlite3.OperationalError):
            if not tries_left:
                raise
            await asyncio.sleep(0.05)


def _paired(saver: BaseCheckpointSaver, store: BaseStore) -> BaseCheckpointSaver:
    _STORES[saver] = store
    return saver


class _OpenedOnUse(BaseStore):
    """A SQLite store opened at its first operation (:func:`open_checkpointer`).

    LangGraph's SQLite store imports sqlite-vec, and sqlite-vec NumPy: a tenth of a
    second, which a run that calls no LLM (nothing to keep in the store) need not pay.
    """

    def __init__(self, open_store: Callable[[], BaseStore]) -> None:
        self._open = open_store
        self._lock = threading.Lock()
        self.store: BaseStore | None = None

    def _opened(self) -> BaseStore:
        with self._lock:
            if self.store is None:
                self.store = self._open()
            return self.store

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._opened().batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, ops)


class _AsyncOpenedOnUse(BaseStore):
    """:class:`_OpenedOnUse` for :func:`aopen_checkpointer`: the store is opened on the
    event loop the checkpointer was opened on, and a synchronous call (from a sync node,
    in a worker thread) runs there, as LangGraph's async stores do."""

    def __init__(self, open_store: Callable[[], Awaitable[BaseStore]]) -> None:
        self._open = open_store
        self._loop = asyncio.get_running_loop()
        self._lock = asyncio.Lock()
        self.store: BaseStore | None = None

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        async with self._lock:
            if self.store is None:
                self.store = await self._open()
        return await self.store.abatch(ops)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: a worker thread
            running = None
        if running is self._loop:
            raise asyncio.InvalidStateError(
                "a synchronous store call on the event loop's own thread would block it: "
                "use abatch (aget, aput, ...) in async code")
        return asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), self._loop).result()


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
        yield _paired(InMemorySaver(serde=serializer()), InMemoryStore())
        return
    if (path := sqlite_path(url)) is not None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False)
        # the store on a connection of its own: its transactions never mix with the saver's
        store_conns: list[sqlite3.Connection] = []

        def open_store() -> BaseStore:
            from langgraph.store.sqlite import SqliteStore

            store_conns.append(sqlite3.connect(str(path), check_same_thread=False,
                                               isolation_level=None))
            store = SqliteStore(store_conns[-1])
            _setup_sqlite_store(store)
            return store

        try:
            yield _paired(SqliteSaver(conn, serde=serializer()), _OpenedOnUse(open_store))
        finally:
            for store_conn in store_conns:
                store_conn.close()
            conn.close()
        return
    if url.startswith(("postgres://", "postgresql://")):
        module = _postgres_module("langgraph.checkpoint.postgres")
        stores = _postgres_module("langgraph.store.postgres")
        import psycopg

        with module.PostgresSaver.from_conn_string(url) as saver, \
                stores.PostgresStore.from_conn_string(url) as store:
            saver.serde = serializer()
            with psycopg.connect(url, autocommit=True) as lock:
                while not (row := lock.execute(_TRY_LOCK, (_SETUP_LOCK,)).fetchone()) or not row[0]:
                    time.sleep(0.1)
                saver.setup()  # the lock is released when this connection closes
                store.setup()
            yield _paired(saver, store)
        return
    raise _unknown(url)


@asynccontextmanager
async def aopen_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for ``ainvoke``/``astream`` (what the CLI uses)."""
    if url == "memory":
        yield _paired(InMemorySaver(serde=serializer()), InMemoryStore())
        return
    if (path := sqlite_path(url)) is not None:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path.parent.mkdir(parents=True, exist_ok=True)
        store_conns: list[aiosqlite.Connection] = []

        async def open_store() -> BaseStore:
            from langgraph.store.sqlite.aio import AsyncSqliteStore

            store_conns.append(await aiosqlite.connect(str(path), isolation_level=None))
            store = AsyncSqliteStore(store_conns[-1])
            await _asetup_sqlite_store(store)
            return store

        async with aiosqlite.connect(str(path)) as conn:
            try:
                yield _paired(AsyncSqliteSaver(conn, serde=serializer()),
                              _AsyncOpenedOnUse(open_store))
            finally:
                for store_conn in store_conns:
                    await store_conn.close()
        return
    if url.startswith(("postgres://", "postgresql://")):
        module = _postgres_module("langgraph.checkpoint.postgres.aio")
        stores = _postgres_module("langgraph.store.postgres.aio")
        import psycopg

        async with module.AsyncPostgresSaver.from_conn_string(url) as saver, \
                stores.AsyncPostgresStore.from_conn_string(url) as store:
            saver.serde = serializer()
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as lock:
                while True:
                    row = await (await lock.execute(_TRY_LOCK, (_SETUP_LOCK,))).fetchone()
                    if row and row[0]:
                        break
                    await asyncio.sleep(0.1)
                await saver.setup()  # the lock is released when this connection closes
                await store.setup()
            yield _paired(saver, store)
        return
    raise _unknown(url)
