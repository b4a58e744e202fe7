"""Ctrl-C at any moment: "interrupted", exit 130, never a traceback.

Three phases of the ``hugginggpt`` process, each with its own SIGINT handler:

- **Starting** (imports, parsing; about 1.5 s of CPU): nothing is saved yet and nothing
  needs telling, so :func:`leave_now` ends the process at once. Before this handler a
  Ctrl-C in the first half second printed a ``KeyboardInterrupt`` traceback from
  whichever import was running.
- **Running**: :func:`stop_running` raises ``KeyboardInterrupt`` as Python would, so
  the command stops where it is and says so, and arms a watchdog: a call that cannot
  be cancelled (a blocking LLM request to an endpoint that does not answer, a model
  running in a thread) would otherwise hold the exit until it returned. What finished
  is in the checkpoints either way; ``hugginggpt resume`` continues from there.
- **Ending**: :func:`leave_now` again.

A second Ctrl-C always ends the process at once. Only the command does this
(:func:`hugginggpt.cli.console`); :func:`hugginggpt.cli.main` called from Python leaves
the caller's handler alone.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import NoReturn

from hugginggpt.cli.exits import EXIT_INTERRUPTED

__all__ = ["GRACE_S", "leave_now", "stop_running", "running", "interrupted_line"]

GRACE_S = 3.0
"""Seconds a stopped command has to leave by itself before the watchdog ends it."""

_thread: list[str] = []


def running(thread_id: str) -> None:
    """The thread the command runs, for the line that says how to resume it."""
    _thread[:] = [thread_id]


def interrupted_line() -> str:
    """What Ctrl-C prints: interrupted, and how to resume the thread if one ran."""
    if _thread:
        return (f"hugginggpt: interrupted (resume with: hugginggpt resume --thread "
                f"{_thread[0]})")
    return "hugginggpt: interrupted"


def leave_now(signum: int = signal.SIGINT, frame: FrameType | None = None) -> NoReturn:
    """End the process at once: "interrupted", exit 130, no clean-up."""
    os.write(2, (interrupted_line() + "\n").encode())
    os._exit(EXIT_INTERRUPTED)


def stop_running(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while the command runs: stop it (``KeyboardInterrupt``), and end the
    process after :data:`GRACE_S` if it is still there; a second Ctrl-C ends it now."""
    signal.signal(signal.SIGINT, leave_now)
    watchdog = threading.Timer(GRACE_S, leave_now)
    watchdog.daemon = True
    watchdog.start()
    raise KeyboardInterrupt
