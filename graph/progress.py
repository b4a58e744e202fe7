"""Live progress of a run on stderr: a rich display on a terminal, plain lines otherwise.

It consumes the graph's stream (``stream_mode=["updates", "custom"]``): stage starts and
subtask events come from the nodes as custom events, stage ends as updates.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from rich.console import Console

__all__ = ["Progress"]

_STAGES = ("plan", "select", "execute", "respond", "abort")


class Progress:
    """Turns stream chunks into readable lines."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        stream = stream or sys.stderr
        self.live = stream.isatty()
        self.console = Console(file=stream, highlight=False, force_terminal=self.live,
                               no_color=not self.live, soft_wrap=True)
        self.started = time.monotonic()
        self._status: Any = None

    def _say(self, text: str, style: str = "") -> None:
        stamp = f"{time.monotonic() - self.started:6.2f}s"
        if self.live:
            self.console.print(f"[dim]{stamp}[/dim] {text}", style=style)
        else:
            self.console.print(f"{stamp} {text}", markup=False)

    def handle(self, mode: str, chunk: Any) -> None:
        if mode == "custom" and isinstance(chunk, dict):
            self._custom(chunk)
        elif mode == "updates" and isinstance(chunk, dict):
            for node, update in chunk.items():
                if node in _STAGES:
                    self._stage_done(node, update or {})

    def _custom(self, event: dict[str, Any]) -> None:
        if event.get("type") == "stage":
            attempt = event.get("attempt", 1)
            again = f" (attempt {attempt})" if attempt > 1 else ""
            self._spin(f"{event['stage']}{again} ...")
            self._say(f"[{event['stage']}] started{again}")
            return
        if event.get("type") != "subtask":
            return
        head = f"[execute] #{event['id']} {event['task']}"
        kind = event["event"]
        if kind == "started":
            self._say(f"{head}: running on {event['model']} ({event['backend']}), "
                      f"attempt {event['attempt']}")
        elif kind == "retry":
            self._say(f"{head}: {event['error']}; retrying in {event['delay_s']:.2f}s", "yellow")
        elif kind == "model_failed":
            self._say(f"{head}: {event['model']} failed: {event['error']}", "yellow")
        elif kind == "done":
            self._say(f"{head}: done in {event['latency_s']:.2f}s", "green")
        elif kind in ("failed", "skipped"):
            self._say(f"{head}: {event['error']}", "red")

    def _stage_done(self, node: str, update: dict[str, Any]) -> None:
        if node == "plan":
            if update.get("plan_errors") and update.get("status") != "aborted":
                self._say(f"[plan] rejected: {'; '.join(update['plan_errors'])[:300]}", "yellow")
            elif update.get("plan"):
                steps = ", ".join(f"#{s.id} {s.task}" for s in update["plan"])
                self._say(f"[plan] {len(update['plan'])} subtask(s): {steps}")
            elif update.get("status") != "aborted":
                self._say("[plan] no expert needed")
        elif node == "select":
            for s in (update.get("selections") or {}).values():
                model = s.model or "none"
                self._say(f"[select] #{s.subtask_id} {s.task}: {model} ({s.reason})")
        elif node == "execute":
            results = (update.get("results") or {}).values()
            done = sum(r.status == "done" for r in results)
            self._say(f"[execute] {done}/{len(results)} subtask(s) done")
        elif node in ("respond", "abort"):
            self._say(f"[{node}] finished", "red" if node == "abort" else "")
        self._spin(None)

    def _spin(self, text: str | None) -> None:
        if not self.live:
            return
        if self._status is None and text:
            self._status = self.console.status(text)
            self._status.start()
        elif self._status is not None and text:
            self._status.update(text)
        elif self._status is not None:
            self._status.stop()
            self._status = None

    def close(self) -> None:
        self._spin(None)
