"""A model download's progress: the bytes arriving from the Hub, counted against the
run's download budget and told to the run as ``download`` events.

huggingface_hub reports bytes through a ``tqdm_class``; its download threads do not carry
the run's context (its stream writer), so the events are handed over by the thread that
does (:func:`pumping`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Progress", "Counter", "bar_class", "pumping"]

Progress = Callable[[dict[str, Any]], None]
"""Called with ``{"type": "download", "model", "done", "total", "finished"}`` (bytes)."""


@dataclass
class Counter:
    """Bytes arriving over every file of one download, reported at most every 0.2 s."""

    model: str
    total: int
    progress: Progress | None
    count: Callable[[int], None] | None
    done: int = 0
    _said: float = field(default=0.0)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, size: int) -> None:
        with self._lock:
            self.done += size
            if self.count is not None:
                self.count(size)  # raises LimitExceededError beyond the reservation
            now = time.monotonic()
            if self.progress is not None and (now - self._said >= 0.2 or self.done >= self.total):
                self._said = now
                self.report(finished=False)

    def report(self, finished: bool) -> None:
        if self.progress is not None:
            self.progress({"type": "download", "model": self.model, "done": self.done,
                           "total": self.total, "finished": finished})


_TRANSFER_BAR = "huggingface_hub.snapshot_download.transfer"
"""The bar of bytes received from the network (the other one counts bytes written)."""


def bar_class(counter: Counter | None) -> type:
    """A ``tqdm_class`` for ``snapshot_download``: its network-bytes bar feeds
    ``counter`` (if any); it draws nothing itself (the run's display shows the progress)."""
    from huggingface_hub.utils import tqdm as hub_tqdm

    class Bar(hub_tqdm):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._network = kwargs.get("name") == _TRANSFER_BAR
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            if counter is not None and self._network and n and n > 0:
                counter.add(int(n))
            return super().update(n)

    return Bar


def pumping(events: queue.SimpleQueue[dict[str, Any]], progress: Progress | None,
             work: Callable[[], Any]) -> Any:
    """Run ``work`` in a thread of its own while this thread hands its progress events
    to ``progress``: the Hub's download threads do not carry the run's context (its
    stream writer), this one does."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="download") as pool:
        future = pool.submit(work)
        while True:
            finished = future.done()
            while not events.empty():
                event = events.get()
                if progress is not None:
                    progress(event)
            if finished:
                return future.result()
            with contextlib.suppress(concurrent.futures.TimeoutError):
                future.result(timeout=0.1)
