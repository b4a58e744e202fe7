"""Live progress of a run on stderr: a rich display on a terminal, plain lines otherwise.

It consumes the graph's stream (``stream_mode=["updates", "custom"]``): stage starts and
subtask events come from the nodes as custom events, stage ends as updates. On a
terminal, each subtask gets a live row (spinner, model, attempt, elapsed time) under the
log of stage results; elsewhere every event is one timestamped line. A model the local
backend downloads gets a progress bar of its own (bytes, from ``download`` events); off
a terminal, a line when it starts, at each quarter and when it ends.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, SpinnerColumn, Task, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.text import Text

__all__ = ["Progress", "download_line", "HEARTBEAT_S"]

HEARTBEAT_S = 5.0
"""Seconds without a line after which the plain display says what the run waits for
(the live display shows it at once, and counts the seconds)."""

_STAGES = ("plan", "select", "approve", "execute", "respond", "abort")
_MARKS = {"done": "[green]✓[/]", "failed": "[red]✗[/]", "skipped": "[yellow]↷[/]"}


class _DownloadBar(BarColumn):
    """A bar on download rows only (the subtask rows have a spinner and text)."""

    def render(self, task: Task) -> Any:
        return super().render(task) if task.fields.get("download") else Text("")


def download_line(event: dict[str, Any]) -> str:
    """A download's progress as text: model, MB done of MB, percent."""
    done, total = int(event.get("done", 0)), int(event.get("total", 0))
    share = 100.0 if event.get("finished") or not total else min(100.0, 100.0 * done / total)
    state = "downloaded" if event.get("finished") else "downloading"
    return (f"{state} {event['model']}: {done / 2**20:.2f} of {total / 2**20:.2f} MB "
            f"({share:.0f}%)")


class Progress:
    """Turns stream chunks into a live display or readable lines."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        stream = stream or sys.stderr
        self.live = stream.isatty()
        self.console = Console(file=stream, highlight=False, force_terminal=self.live,
                               no_color=not self.live, soft_wrap=not self.live)
        self.started = time.monotonic()
        self._rows: dict[int, TaskID] = {}
        self._said: dict[int, str] = {}
        """Why a subtask got no model, as the select line said it (not said twice)."""
        self._downloads: dict[str, TaskID] = {}
        self._quarters: dict[str, int] = {}
        """Per model downloading off a terminal: the last quarter said."""
        self._held: list[dict[str, Any]] | None = None
        """Subtask events of a streamed plan, told after the plan's lines (None: none
        held): subtasks that start while the plan streams are said under one
        ``[execute] started``, after ``[plan] N subtask(s)`` and the selections."""
        self._lock = threading.RLock()
        """The stream's events and the heartbeat come from two threads."""
        self._current = "starting"
        self._waits: dict[str, tuple[str, float]] = {}
        """What the run waits for (an LLM call, a running subtask), since when."""
        self._last_said = self.started
        self._board: RichProgress | None = None
        if self.live:
            self._board = RichProgress(
                SpinnerColumn(finished_text=" "), TextColumn("{task.description}"),
                _DownloadBar(), TimeElapsedColumn(), console=self.console, transient=False,
            )
            self._board.start()
            self._stage_row = self._board.add_task("[bold]starting", total=None)
        self._stopped = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name="progress", daemon=True)
        self._beat.start()

    def _heartbeat(self) -> None:
        """Every second, what the run has waited for longest, and for how long: in the
        live display's stage row, or as a plain line after :data:`HEARTBEAT_S` of
        silence (a hung LLM endpoint used to leave "[plan] started" alone for minutes)."""
        while not self._stopped.wait(1.0):
            with self._lock:
                if not self._waits:
                    self._stage(self._current)
                    continue
                what, since = min(self._waits.values(), key=lambda wait: wait[1])
                now = time.monotonic()
                if self._board is not None:
                    self._stage(f"{self._current}: waiting for {what} ({now - since:.0f} s)")
                elif now - self._last_said >= HEARTBEAT_S:
                    self._say(f"[{self._current}] waiting for {what}: {now - since:.0f} s")

    def _say(self, text: str, style: str = "") -> None:
        self._last_said = time.monotonic()
        stamp = f"{time.monotonic() - self.started:6.2f}s"
        if self.live:
            self.console.print(f"[dim]{stamp}[/dim] {escape(text)}", style=style)
        else:
            self.console.print(f"{stamp} {text}", markup=False)

    def handle(self, mode: str, chunk: Any) -> None:
        with self._lock:
            if mode == "custom" and isinstance(chunk, dict):
                self._custom(chunk)
            elif mode == "updates" and isinstance(chunk, dict):
                for node, update in chunk.items():
                    if node in _STAGES:
                        self._stage_done(node, update or {})

    def _wait(self, event: dict[str, Any]) -> None:
        key = str(event.get("key"))
        if event.get("event") == "start":
            self._waits[key] = (str(event.get("what")), time.monotonic())
        else:
            self._waits.pop(key, None)

    def _row(self, event: dict[str, Any], text: str, finished: bool = False) -> None:
        if self._board is None:
            return
        label = f"#{event['id']} {event['task']}: {text}"  # text may hold markup
        row = self._rows.get(event["id"])
        if row is None:
            row = self._rows[event["id"]] = self._board.add_task(label, total=1)
        self._board.update(row, description=label, completed=1 if finished else 0)
        if finished:
            self._board.stop_task(row)

    def _download(self, event: dict[str, Any]) -> None:
        model = str(event["model"])
        text = download_line(event)
        if self._board is None:
            quarter = 5 if event.get("finished") else min(4, int(
                4 * event.get("done", 0) / max(1, event.get("total", 0))))
            if self._quarters.get(model) != quarter:
                self._quarters[model] = quarter
                self._say(f"[download] {text}")
            return
        row = self._downloads.get(model)
        total = max(1, int(event.get("total", 0)))
        if row is None:
            row = self._downloads[model] = self._board.add_task(
                escape(text), total=total, download=True)
        done = total if event.get("finished") else int(event.get("done", 0))
        self._board.update(row, description=escape(text), total=total, completed=done)
        if event.get("finished"):
            self._board.stop_task(row)

    def _custom(self, event: dict[str, Any]) -> None:
        if event.get("type") == "wait":
            self._wait(event)
            return
        if event.get("type") == "download":
            self._download(event)
            return
        if event.get("type") == "stage":
            if event["stage"] == "execute" and event.get("streamed"):
                if self._held is None:
                    self._held = []
                self._stage("plan (subtasks start as it streams)")
                return
            self._current = event["stage"]
            if event["stage"] in ("execute", "respond", "abort"):
                released = self._release()
                if released and event["stage"] == "execute":
                    return  # said by the release, once
            attempt = event.get("attempt", 1)
            again = f" (attempt {attempt})" if attempt > 1 else ""
            if self._board is not None:
                self._stage(f"{event['stage']}{again}")
            else:
                self._say(f"[{event['stage']}] started{again}")
            return
        if event.get("type") == "subtask" and self._held is not None:
            self._held.append(event)
            return
        if event.get("type") != "subtask":
            return
        head = f"[execute] #{event['id']} {event['task']}"
        kind = event["event"]
        running = f"subtask {event['id']}"
        if kind == "started":
            self._waits[running] = (f"#{event['id']} {event['task']} on {event['model']}",
                                    time.monotonic())
            where = f"{event['model']} ({event['backend']}), attempt {event['attempt']}"
            where += " while the plan streams" if event.get("streamed") else ""
            self._row(event, f"running on {escape(where)}")
            if not self.live:
                self._say(f"{head}: running on {where}")
        elif kind in ("retry", "model_failed"):
            what = (f"{event['error']}; retrying in {event['delay_s']:.2f}s" if kind == "retry"
                    else f"{event['model']} failed: {event['error']}")
            self._row(event, f"[yellow]{escape(what)}[/]")
            self._say(f"{head}: {what}", "yellow")
        elif kind == "done":
            self._waits.pop(running, None)
            text = f"done in {event['latency_s']:.2f}s on {event['model']}"
            text += " (from the cache)" if event.get("cached") else ""
            self._row(event, f"{_MARKS['done']} {escape(text)}", finished=True)
            if not self.live:
                self._say(f"{head}: done in {event['latency_s']:.2f}s"
                          + (" (from the cache)" if event.get("cached") else ""))
        elif kind in ("failed", "skipped"):
            self._waits.pop(running, None)
            error = event["error"]
            if self._said.get(event["id"]) == error:
                error = "not run: no model (see select above)"
            self._row(event, f"{_MARKS[kind]} {escape(error)}", finished=True)
            self._say(f"{head}: {error}", "red")

    def _stage(self, description: str) -> None:
        if self._board is not None:
            self._board.update(self._stage_row, description=f"[bold]{escape(description)}")

    def _release(self) -> bool:
        """Say the subtask events held while the plan streamed, under one
        ``[execute] started``; False when none were held."""
        held, self._held = self._held, None
        if held is None:
            return False
        began = len({e["id"] for e in held if e["event"] == "started"})
        self._stage("execute")
        self._say(f"[execute] started ({began} subtask(s) began while the plan streamed)")
        for event in held:
            self._custom(event)
        return True

    def _stage_done(self, node: str, update: dict[str, Any]) -> None:
        if node in ("execute", "respond", "abort"):
            self._release()
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
                if s.model is None:
                    self._said[s.subtask_id] = s.reason
        elif node == "execute":
            results = (update.get("results") or {}).values()
            done = sum(r.status == "done" for r in results)
            self._say(f"[execute] {done}/{len(results)} subtask(s) done")
        elif node in ("respond", "abort"):
            self._say(f"[{node}] finished", "red" if node == "abort" else "")

    def close(self) -> None:
        self._stopped.set()
        self._beat.join()
        with self._lock:
            self._release()
            self._close_board()

    def _close_board(self) -> None:
        if self._board is not None:
            self._board.remove_task(self._stage_row)
            self._board.stop()
            self._board = None
