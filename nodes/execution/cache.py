"""The result cache: a subtask whose tool already ran on the same inputs is served from
it, across runs, threads and processes that share a workspace.

What makes two calls the same (the key, a SHA-256): the task type, the model, the
backend and the tool, the backend's settings that may change an output (an
hf-inference endpoint or provider), and the *resolved* arguments: texts as they are (a
``<GENERATED>-k`` filled in with the dependency's text), files by the SHA-256 of their
bytes, never their paths (an attached photo, a dependency's image artifact and the same
photo under another name are one input). Only a call that succeeded is stored, and
only for a tool that declares itself deterministic (:meth:`Tool.is_deterministic`:
text-to-image without a seed, the controller LLM, a dry run with faults are not).
A dry run's simulated outputs are cached: they are deterministic placeholders (the
benchmark uses them with latency), and the answer says a dry run was simulated anyway.

Why a store of its own rather than LangGraph's ``CachePolicy`` on the ``subtask`` task
(with ``compile(cache=SqliteCache(...))``), which was the first choice:

- the task's input is the :class:`~hugginggpt.nodes.execution.jobs.Job`: the plan's
  arguments with ``<GENERATED>-k`` placeholders and file *paths*. The dependencies'
  outputs arrive inside the task, from the board, after it starts; a ``key_func`` runs
  before, on the input, so it cannot hash what the key must hold;
- the key must name the model that ran, and that is chosen inside the task (the first
  candidate that works, after fallbacks): one lookup per candidate, just before its call,
  keeps a run's choices what they would be without the cache;
- a failed subtask is a returned value (failures are data here), which LangGraph would
  cache (it refuses only tasks that raised or were interrupted);
- artifacts live per thread (``artifacts/<thread>/``) and a thread may only read its
  own: a hit's files are copied into the new thread's folder, and a hit whose file is
  gone is refused (and forgotten); LangGraph's cache hands back the stored writes as
  they were;
- the result must say it came from the cache, and ``SqliteCache`` has a time to live
  but no size bound.

So the store is one SQLite file, ``<workspace>/cache.sqlite`` beside the checkpoints
(WAL mode; a connection per operation, so threads and processes share it safely), with
a time to live (``cache_ttl_s``) and a bound on entries (``cache_max_entries``: the
least recently used go first). A cache that cannot be opened or read (a corrupt file, a
read-only disk) is warned about once and the run goes on without it: nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref

__all__ = ["CACHE_FILE", "CacheSettings", "ResultCache", "cache_key", "MissingArtifact"]

CACHE_FILE = "cache.sqlite"
"""The cache's file in the workspace, beside ``checkpoints.sqlite``."""

_KEY_VERSION = 2
"""Part of every key: a change to what a key holds (or to outputs' form; 2: an entry holds
the result's confidence too) bumps it, so old entries are never read as new ones."""

_REF_FIELDS = {"artifact_id", "kind", "path", "bytes", "url"}
"""An artifact reference's own fields; the rest (``simulated``, a length) travel along."""

log = logging.getLogger(__name__)
_warned: set[str] = set()


@dataclass(frozen=True)
class CacheSettings:
    """A run's cache settings, as plain data in each job (None there: no cache)."""

    path: str
    ttl_s: float
    max_entries: int


class MissingArtifact(Exception):
    """A cached output's file is gone from the workspace: the entry cannot be served."""


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _canonical(value: Any) -> Any:
    """An argument as the key sees it: a file by its content, anything else as JSON."""
    if isinstance(value, Path):
        return {"file-sha256": _file_digest(value)}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


NOT_OUTPUT_SETTINGS = frozenset({"max_loaded", "download", "consented", "catalog",
                                 "timeout_s", "bill_to"})
"""Backend settings that change how a call is made or paid for, not what it returns (the
local backend's model bound and download consent, hf-inference's timeout and billed
organisation); every other setting of the call's backend is part of the key (an
hf-inference endpoint URL or provider: another server may answer otherwise)."""


def cache_key(task: str, model: str, backend: str, tool: str, args: dict[str, Any],
              settings: dict[str, Any] | None = None) -> str:
    """The key of a call: SHA-256 over the task, model, backend, tool, the resolved
    arguments (files by content) and the backend's settings that may change its output
    (those not in :data:`NOT_OUTPUT_SETTINGS`). Reads each file once; call it off the
    event loop."""
    kept = {k: v for k, v in (settings or {}).items() if k not in NOT_OUTPUT_SETTINGS}
    payload = {"v": _KEY_VERSION, "task": task, "model": model, "backend": backend,
               "tool": tool, "args": _canonical(args), "settings": _canonical(kept)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _warn_once(path: str, what: str, exc: BaseException) -> None:
    if path not in _warned:
        _warned.add(path)
        log.warning("result cache %s %s (%s: %s); running without it", path, what,
                    type(exc).__name__, exc)


class ResultCache:
    """The cache file of a workspace. Every method opens its own connection: safe from
    any thread, and from several processes on one workspace."""

    def __init__(self, settings: CacheSettings) -> None:
        self.settings = settings
        self.path = settings.path

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30.0)) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("""CREATE TABLE IF NOT EXISTS results (
                key TEXT PRIMARY KEY, task TEXT NOT NULL, model TEXT NOT NULL,
                backend TEXT NOT NULL, outputs TEXT NOT NULL, latency_s REAL NOT NULL,
                stored_at REAL NOT NULL, used_at REAL NOT NULL)""")
            with conn:
                yield conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry (``outputs``, ``latency_s``, ``stored_at``), or None when there
        is none, it has expired (then it is removed) or the cache cannot be read."""
        try:
            with self._db() as conn:
                row = conn.execute("SELECT outputs, latency_s, stored_at FROM results "
                                   "WHERE key = ?", (key,)).fetchone()
                if row is None:
                    return None
                now = time.time()
                if now - row[2] > self.settings.ttl_s:
                    conn.execute("DELETE FROM results WHERE key = ?", (key,))
                    return None
                conn.execute("UPDATE results SET used_at = ? WHERE key = ?", (now, key))
                return {"outputs": json.loads(row[0]), "latency_s": row[1], "stored_at": row[2]}
        except (sqlite3.Error, OSError, ValueError) as exc:
            _warn_once(self.path, "cannot be read", exc)
            return None

    def put(self, key: str, task: str, model: str, backend: str, outputs: dict[str, Any],
            latency_s: float) -> None:
        """Store a successful call's outputs, then evict the least recently used entries
        beyond the bound (and any that expired)."""
        try:
            text = json.dumps(outputs)
            now = time.time()
            with self._db() as conn:
                conn.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             (key, task, model, backend, text, latency_s, now, now))
                if math.isfinite(self.settings.ttl_s):
                    conn.execute("DELETE FROM results WHERE stored_at < ?",
                                 (now - self.settings.ttl_s,))
                conn.execute("DELETE FROM results WHERE key IN (SELECT key FROM results "
                             "ORDER BY used_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
                             (self.settings.max_entries,))
        except (sqlite3.Error, OSError, TypeError, ValueError) as exc:
            _warn_once(self.path, "cannot be written", exc)

    def forget(self, key: str) -> None:
        try:
            with self._db() as conn:
                conn.execute("DELETE FROM results WHERE key = ?", (key,))
        except (sqlite3.Error, OSError) as exc:
            _warn_once(self.path, "cannot be written", exc)

    def count(self) -> int:
        """How many entries the cache holds (0 when it cannot be read)."""
        try:
            with self._db() as conn:
                return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        except (sqlite3.Error, OSError) as exc:
            _warn_once(self.path, "cannot be read", exc)
            return 0


def adopt_outputs(outputs: Any, store: ArtifactStore) -> Any:
    """Cached outputs made this thread's own: each artifact they reference is copied from
    where it was stored (another thread's folder, maybe) into ``store``'s folder, under
    the same content address.

    Raises:
        MissingArtifact: a referenced file is gone (or is not inside the workspace's
            artifacts).
    """
    if is_artifact_ref(outputs):
        root = (store.workspace / "artifacts").resolve()
        source = Path(os.path.realpath(store.workspace / str(outputs["path"])))
        if not source.is_relative_to(root) or not source.is_file():
            raise MissingArtifact(f"cached artifact {outputs.get('path')!r} is gone")
        extra = {k: v for k, v in outputs.items() if k not in _REF_FIELDS}
        return store.add_file(source, str(outputs.get("kind")), **extra)
    if isinstance(outputs, dict):
        return {k: adopt_outputs(v, store) for k, v in outputs.items()}
    if isinstance(outputs, list):
        return [adopt_outputs(v, store) for v in outputs]
    return outputs
