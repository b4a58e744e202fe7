"""The async path of the hf-inference tools: requests on the caller's event loop, through
:class:`huggingface_hub.AsyncInferenceClient`, so that a timeout cancels them.

The adapters in :mod:`hugginggpt.tools.experts.hf_inference.tools` are plain functions:
they prepare inputs and shape outputs (decode images, draw boxes, write artifacts),
which is blocking work that belongs in a thread. Only the HTTP request needs the loop.
:func:`on_the_loop` turns an adapter into the coroutine function the executor awaits:
the adapter runs on the shared tool pool, and each request it makes through
:func:`~hugginggpt.tools.experts.hf_inference.client._call` is handed back to the
caller's loop (:meth:`Requests.run`) as an ``AsyncInferenceClient`` call.

When the executor's timeout cancels the coroutine, the requests in flight are cancelled
on the loop (httpx closes their connections), the adapter's thread gets a
``CancelledError`` at once and ends, and the coroutine returns only after both. Before,
a sync ``InferenceClient`` call that outlived its timeout kept its thread and its
connection until the server answered.

Direct calls of an adapter (a script, a test) keep the sync ``InferenceClient``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from hugginggpt.tools.threads import in_thread

__all__ = ["Requests", "current_requests", "on_the_loop", "CLOSE_GRACE_S"]

T = TypeVar("T")

CLOSE_GRACE_S = 2.0
"""How long a cancelled call waits for its requests to close and its thread to end."""

_REQUESTS: contextvars.ContextVar[Requests | None] = contextvars.ContextVar(
    "hf_inference_requests", default=None)


class Requests:
    """The requests one tool call makes on its caller's loop, cancelled together.

    :meth:`run` is called from the adapter's thread; :meth:`cancel` and :meth:`closed`
    from the loop.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        self._futures: set[concurrent.futures.Future[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._cancelled = False

    def run(self, request: Coroutine[Any, Any, T]) -> T:
        """Run ``request`` on the loop and wait for it (from a thread, never the loop).

        Raises:
            concurrent.futures.CancelledError: the call was cancelled (its timeout); the
                adapter's thread unwinds with it.
        """
        with self._lock:
            if self._cancelled:
                request.close()
                raise concurrent.futures.CancelledError
            future = asyncio.run_coroutine_threadsafe(self._tracked(request), self.loop)
            self._futures.add(future)
        try:
            return future.result()
        finally:
            with self._lock:
                self._futures.discard(future)

    async def _tracked(self, request: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            return await request
        finally:
            self._tasks.discard(task)

    def cancel(self) -> None:
        """Cancel every request in flight, and refuse new ones (on the loop)."""
        with self._lock:
            self._cancelled = True
            futures = list(self._futures)
        for future in futures:
            future.cancel()  # cancels its task on the loop; the waiting thread wakes now

    async def closed(self, timeout_s: float) -> None:
        """Wait until the cancelled requests have unwound (their connections closed)."""
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)


def current_requests() -> Requests | None:
    """The running tool call's requests on its loop, or None on the sync path."""
    return _REQUESTS.get()


def _within(requests: Requests, fn: Callable[..., T], kwargs: dict[str, Any]) -> T:
    _REQUESTS.set(requests)  # this thread's copy of the caller's context
    return fn(**kwargs)


def on_the_loop(fn: Callable[..., T]) -> Callable[..., Coroutine[Any, Any, T]]:
    """The async form of an adapter: the adapter in a thread, its requests on the loop.

    The result has the adapter's signature and type hints (``functools.wraps``), so it
    registers as the same tool.
    """

    @functools.wraps(fn)
    async def call(**kwargs: Any) -> T:
        requests = Requests(asyncio.get_running_loop())
        work = in_thread(_within, requests, fn, kwargs)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            requests.cancel()
            await requests.closed(CLOSE_GRACE_S)
            await asyncio.wait([work], timeout=CLOSE_GRACE_S)
            if work.done() and not work.cancelled():
                work.exception()  # retrieved: the thread's own CancelledError, or its failure
            raise

    return call
