"""The shared thread pool for blocking work (sync tools, model inference, file I/O), and
how the process's compute threads wait."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["TOOL_POOL", "MODEL_LOAD_LOCK", "loading_model", "in_thread"]

T = TypeVar("T")

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
"""torch's OpenMP threads otherwise spin while they wait for work. When other processes
compete for the cores (a server, CI, a second job) every operation then waits for
spinning threads: a MiniLM embedding took 150-1200 ms instead of 20 ms on these 2-core
machines under load (measured side by side). Passive waiting costs nothing measurable
when the machine is idle. Set here, before any backend imports torch (they import it on
first use, after this module); a value the user set is kept."""

TOOL_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="tool")
"""Large, because a call that outlives its timeout cannot be killed and keeps its thread
until it returns."""


MODEL_LOAD_LOCK = threading.Lock()
"""Held while any backend loads a transformers model (local models, lite's
sentence-transformers). transformers' ``from_pretrained`` patches process-wide state while
it runs (``PreTrainedModel.tie_weights`` and ``init_weights``, the ``torch.nn.init``
functions, torch's default dtype) and restores it afterwards; two loads in parallel
threads can restore each other's patches, leaving weight tying off for the rest of the
process (seen here: a T5 then failed to load, its tied embeddings left on the meta
device). Loads are therefore serialised."""


@contextmanager
def loading_model() -> Iterator[None]:
    """Hold :data:`MODEL_LOAD_LOCK` while a transformers model loads, with transformers'
    own progress bars off: each load printed a "Loading weights" bar on stderr, noise in
    every log and a break in the run's live display, which says what is loading."""
    with MODEL_LOAD_LOCK:
        from transformers.utils import logging as transformers_logging  # loaded anyway

        shown = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()
        try:
            yield
        finally:
            if shown:
                transformers_logging.enable_progress_bar()


def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> asyncio.Future[T]:
    """Run blocking work on the shared pool from async code, keeping contextvars.

    Unlike ``asyncio.to_thread`` it reuses threads across event loops, which matters on
    the executor's sync path, where each subtask runs its own short-lived loop, and it
    never blocks an event loop (the LangGraph server refuses blocking calls on its loop).
    """
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return asyncio.wrap_future(TOOL_POOL.submit(call))
