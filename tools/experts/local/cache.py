"""The local backend's model cache: a bounded, thread-safe LRU of loaded models.

It knows nothing of transformers: it holds whatever a loader returns, keyed by (task,
model id), and after dropping models only empties torch's CUDA cache if torch is already
imported. It lives apart from the loading code so that its concurrency rules stay in
one place: the bound counts models being loaded as well as cached ones (memory holds
both), an entry in use is never dropped, concurrent requests for one key load it once,
and a load that finds every slot in use waits for one rather than exceeding the bound.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.tools.errors import LimitExceededError

__all__ = ["ROOM_WAIT_S"]

ROOM_WAIT_S = 300.0
"""How long a load waits for a model slot while every loaded model is in use."""


@dataclass(eq=False)
class _Entry:
    value: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while the model runs: fast tokenizers and pipelines are not thread-safe."""
    users: int = 0
    """Calls using the model now; an entry in use is never dropped (its memory would not
    be freed anyway while a call holds it)."""


class _ModelCache:
    """A thread-safe LRU of loaded models; concurrent requests for one key load it once.

    The bound counts every model held in memory: cached ones and those being loaded. A
    load first drops idle models, least recently used first; when every model is in use
    it waits (at most :data:`ROOM_WAIT_S`) for one to become idle.

    ``max_size`` is the process's bound. A load may name its own (a run's
    ``max_loaded_models``): that load makes room within it, and it holds for that load
    only, so runs with different bounds in one process never change each other's.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._loading: dict[tuple[str, str], threading.Lock] = {}
        self._pending = 0
        """Loads in progress: they hold (or will hold) memory too."""
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)
        self.peak = 0
        """The most models held at once (cached and being loaded) since the last clear."""
        self.loads = 0
        """Loads started in this process (the benchmarks count them)."""

    def get(self, key: tuple[str, str], loader: Callable[[], Any],
            limit: int | None = None, use: bool = False) -> _Entry:
        """The entry for ``key``, loaded if needed, within ``limit`` models (None: the
        current bound). With ``use`` the caller holds it until :meth:`release`.

        Raises:
            LimitExceededError: every model slot stayed in use for :data:`ROOM_WAIT_S`.
        """
        bound = self.max_size if limit is None else limit
        with self._lock:
            if (entry := self._hit(key, use)) is not None:
                return entry
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if (entry := self._hit(key, use)) is not None:
                    return entry
                self._make_room(key, bound)
                self._pending += 1
                self.loads += 1
                self.peak = max(self.peak, len(self._entries) + self._pending)
            try:
                entry = _Entry(loader(), users=int(use))
            except BaseException:
                with self._lock:
                    self._pending -= 1
                    self._loading.pop(key, None)
                    self._room.notify_all()
                raise
            with self._lock:  # cached and no longer loading in one step: no gap to reload in
                self._pending -= 1
                self._loading.pop(key, None)
                self._entries[key] = entry
                self._evict(bound=bound)
            return entry

    def release(self, entry: _Entry) -> None:
        """A call is done with ``entry``; it may now be dropped, by the next load that
        needs its room (within that load's bound)."""
        with self._lock:
            entry.users -= 1
            self._room.notify_all()

    def _hit(self, key: tuple[str, str], use: bool) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            entry.users += int(use)
        return entry

    def _make_room(self, key: tuple[str, str], bound: int) -> None:
        """Under the lock: drop idle models until one more fits within ``bound``, waiting
        while all are in use."""
        deadline = time.monotonic() + ROOM_WAIT_S
        while True:
            self._evict(room_for=1, bound=bound)
            if len(self._entries) + self._pending < bound:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise LimitExceededError(
                    f"no room to load {key[1]!r}: the {bound} loaded models stayed in "
                    f"use for {ROOM_WAIT_S:g} s", setting="max_loaded_models",
                    value=bound)
            self._room.wait(left)

    def _evict(self, room_for: int = 0, bound: int | None = None) -> None:
        """Under the lock: drop idle models, least recently used first, until the cached
        and loading ones plus ``room_for`` fit ``bound`` (the process's by default)."""
        bound = self.max_size if bound is None else bound
        evicted = False
        for key in list(self._entries):
            if len(self._entries) + self._pending + room_for <= bound:
                break
            if self._entries[key].users == 0:
                del self._entries[key]
                evicted = True
        if evicted:
            _free_accelerator_memory()

    def resize(self, max_size: int) -> None:
        with self._lock:
            self.max_size = max_size
            self._evict()

    def keys(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Drop every idle model (a model in use goes when its call ends)."""
        with self._lock:
            for key in [k for k, e in self._entries.items() if e.users == 0]:
                del self._entries[key]
            self.peak = len(self._entries)
        _free_accelerator_memory()


def _free_accelerator_memory() -> None:
    import sys

    torch = sys.modules.get("torch")  # never import torch just to free nothing
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
