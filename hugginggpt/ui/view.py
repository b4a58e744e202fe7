"""What the page shows of one run, whichever way it ran.

A :class:`RunView` is filled in two ways: live, event by event, from the graph's stream
(:meth:`RunView.handle`: the ``custom`` events of :mod:`hugginggpt.progress`'s shapes and
the stages' ``updates``), and at the end (or when a thread is opened) from the thread's
state, which is the authority. The embedded runner's stream carries pydantic objects, a
server's carries their JSON; :func:`plain` makes both the same plain data, so nothing
past this module cares which it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from hugginggpt.graph.state import FINISHED
from hugginggpt.tools.artifacts import is_artifact_ref

__all__ = ["Row", "Artifact", "RunView", "ThreadSummary", "plain", "rows_of", "text_outputs"]

ROW_STATES = ("waiting", "running", "retrying", "done", "failed", "skipped")
"""A subtask's state on the page: waiting for its turn (or its dependencies), running,
retrying after a transient error or a failed model, or how it ended."""


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: pydantic models dumped, containers walked."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@dataclass
class Row:
    """One subtask's line in the progress table."""

    id: int
    task: str
    dep: list[int] = field(default_factory=list)
    state: str = "waiting"
    model: str = ""
    backend: str = ""
    attempt: int = 0
    note: str = ""
    latency_s: float | None = None


@dataclass
class Artifact:
    """An output file to show inline: ``kind`` is the artifact's (``image``, ``audio``,
    ...), ``path`` a local file the page can serve, or None when the file stays out of
    reach (a server that gives no download URL): ``where`` then says where it is."""

    subtask_id: int
    kind: str
    path: Path | None
    where: str


@dataclass
class ThreadSummary:
    """A thread in the list of threads."""

    thread_id: str
    status: str
    request: str
    updated: str = ""

    def label(self) -> str:
        """The dropdown's text: id, status and the request's start."""
        request = self.request if len(self.request) <= 60 else self.request[:59] + "…"
        return f"{self.thread_id} · {self.status} · {request or '(no request)'}"


@dataclass
class RunView:
    """A run as the page shows it."""

    thread_id: str
    status: str = "running"
    request: str = ""
    stage: str = ""
    response: str = ""
    plan: list[dict[str, Any]] = field(default_factory=list)
    rows: dict[int, Row] = field(default_factory=dict)
    results: dict[int, dict[str, Any]] = field(default_factory=dict)
    approval: dict[str, Any] | None = None
    abort_reason: str | None = None
    plan_errors: list[str] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    error: str | None = None
    """Why the UI could not run it (a missing file, a server that refused): shown as is."""
    log: list[str] = field(default_factory=list)
    """Stage lines, newest last (what the terminal's progress prints)."""

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    # ------------------------------------------------------------------ the live stream

    def handle(self, mode: str, chunk: Any) -> None:
        """Take one ``(mode, chunk)`` of the graph's stream."""
        chunk = plain(chunk)
        if not isinstance(chunk, dict):
            return
        if mode == "custom":
            self._custom(chunk)
        elif mode == "updates":
            for node, update in chunk.items():
                if isinstance(update, dict):
                    self._update(node, update)

    def _custom(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "stage":
            self.stage = str(event.get("stage", ""))
            self.log.append(f"{self.stage} started")
        elif kind == "download":
            self.log.append(f"downloading {event.get('model')}: {event.get('done', 0)} of "
                            f"{event.get('total', 0)} bytes")
        elif kind == "subtask" and isinstance(event.get("id"), int):
            row = self.rows.get(event["id"]) or self.rows.setdefault(
                event["id"], Row(event["id"], str(event.get("task", ""))))
            what = event.get("event")
            if what == "started":
                row.state, row.attempt = "running", int(event.get("attempt", 1))
                row.model, row.backend = str(event.get("model", "")), str(event.get("backend", ""))
                row.note = ""
            elif what in ("retry", "model_failed"):
                row.state, row.note = "retrying", str(event.get("error", ""))
            elif what == "done":
                row.state, row.note = "done", ""
                row.latency_s = float(event.get("latency_s", 0.0))
            elif what in ("failed", "skipped"):
                row.state, row.note = str(what), str(event.get("error", ""))

    def _update(self, node: str, update: dict[str, Any]) -> None:
        if "plan" in update and isinstance(update["plan"], list):
            self.plan = update["plan"]
            self.results = {}  # a new plan (or an edited one) starts afresh
            self.rows = rows_of(self.plan, {})
            if self.plan:
                self.log.append(f"plan: {len(self.plan)} subtask(s)")
        for key, value in (update.get("selections") or {}).items():
            row = self.rows.get(int(key))
            if row is not None and isinstance(value, dict):
                row.model, row.backend = value.get("model") or "", value.get("backend") or ""
                if not value.get("model"):
                    row.note = str(value.get("reason", ""))
        for key, value in (update.get("results") or {}).items():
            if isinstance(value, dict):
                self.results[int(key)] = value
        if self.results:
            self.rows = rows_of(self.plan, self.results, self.rows)
        if update.get("status"):
            self.status = str(update["status"])
        if update.get("response"):
            self.response = str(update["response"])
        if update.get("abort_reason"):
            self.abort_reason = str(update["abort_reason"])
        if update.get("plan_errors"):
            self.plan_errors = list(update["plan_errors"])
        if node in ("respond", "abort"):
            self.log.append(f"{node} finished")

    # ------------------------------------------------------------------ a thread's state

    @classmethod
    def from_values(cls, thread_id: str, values: dict[str, Any], status: str,
                    approval: dict[str, Any] | None) -> RunView:
        """The view of a thread's state values (plain data), with its outcome."""
        values = plain(values)
        plan = values.get("plan") or []
        results = {int(k): v for k, v in (values.get("results") or {}).items()}
        view = cls(thread_id=thread_id, status=status, request=values.get("request", ""),
                   response=values.get("response", ""), plan=plan,
                   results=results, approval=approval,
                   abort_reason=values.get("abort_reason"),
                   plan_errors=list(values.get("plan_errors") or []))
        view.rows = rows_of(plan, results)
        for key, value in (values.get("selections") or {}).items():
            row = view.rows.get(int(key))
            if row is not None and not row.model and isinstance(value, dict):
                row.model, row.backend = value.get("model") or "", value.get("backend") or ""
        return view

    def artifact_refs(self) -> list[tuple[int, dict[str, Any]]]:
        """The artifact refs of the results, in plan order, each once."""
        seen: set[str] = set()
        found = []
        for subtask_id in sorted(self.results):
            for value in (self.results[subtask_id].get("outputs") or {}).values():
                if is_artifact_ref(value) and value["path"] not in seen:
                    seen.add(value["path"])
                    found.append((subtask_id, value))
        return found


def rows_of(plan: list[dict[str, Any]], results: dict[int, dict[str, Any]],
            live: dict[int, Row] | None = None) -> dict[int, Row]:
    """The progress rows of a plan: each subtask's result where it has one, else what the
    live stream said of it (``live``), else waiting."""
    rows: dict[int, Row] = {}
    for step in plan:
        subtask_id = int(step.get("id", 0))
        before = (live or {}).get(subtask_id)
        row = before or Row(subtask_id, str(step.get("task", "")))
        row.dep = [int(d) for d in step.get("dep") or []]
        result = results.get(subtask_id)
        if result is not None:
            row.state = str(result.get("status", row.state))
            row.model = result.get("model") or row.model
            row.backend = result.get("backend") or row.backend
            row.attempt = int(result.get("attempts") or row.attempt)
            row.latency_s = result.get("latency_s")
            doubt = (result.get("confidence") or {}).get("uncertain")
            row.note = result.get("error") or (f"uncertain: {doubt}" if doubt else "")
        rows[subtask_id] = row
    return rows


def text_outputs(result: dict[str, Any]) -> str:
    """A result's outputs that are not files, as short readable text: a text as it is,
    labels with their scores, anything else as JSON."""
    parts = []
    for name, value in (result.get("outputs") or {}).items():
        if is_artifact_ref(value):
            continue
        if isinstance(value, str):
            parts.append(f"{name}: {value}")
        elif isinstance(value, list) and value and all(
                isinstance(v, dict) and "label" in v for v in value):
            parts.append(f"{name}: " + ", ".join(
                f"{v['label']} ({float(v.get('score', 0)):.0%})" for v in value[:5]))
        else:
            parts.append(f"{name}: {json.dumps(value, ensure_ascii=False)[:400]}")
    return "; ".join(parts)
