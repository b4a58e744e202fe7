"""Two ways to run a request for the UI, behind one small interface (:class:`Runner`).

- :class:`EmbeddedRunner` (the default): the graph in this process through
  :mod:`hugginggpt.api`, checkpointed in the workspace's SQLite file (or another
  checkpoint URL), offline with the default settings (no LLM, backend auto or lite).
  A run goes on a worker thread with its own event loop, so the page's loop stays free
  while models load and run; its stream events cross back as they come.
- :class:`ServerRunner` (``--server URL``): a LangGraph server through ``langgraph_sdk``:
  ``threads.create``, ``runs.stream`` (``updates`` and ``custom``), ``threads.get_state``,
  and approvals answered with ``command={"resume": decision}``; an API key goes as the
  ``x-api-key`` header. The request is a chat message whose content blocks carry the
  uploads (a served run reads no file of the server's disk), and outputs are fetched from
  the server's ``/artifacts`` route.

Both take the request with its files already copied into the UI's workspace
(:func:`stage_uploads`: the graph reads only files inside the workspace or attached),
both give a :class:`~hugginggpt.ui.view.RunView`, and a failure (a missing file, a
server that refuses) is an :class:`UIError` whose message the page shows as it is.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urljoin

from hugginggpt import api
from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer, sqlite_path
from hugginggpt.graph.context import Context, SettingsError
from hugginggpt.graph.state import FINISHED
from hugginggpt.tools.artifacts import named_absolutely
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.llm.config import ConfigError
from hugginggpt.tools.redact import REDACTED, redact
from hugginggpt.ui.view import Artifact, RunView, ThreadSummary

__all__ = ["Runner", "EmbeddedRunner", "ServerRunner", "UIError", "OnEvent", "stage_uploads",
           "view_of_result", "view_of_server_state", "summary_of_server_thread",
           "MAX_THREADS"]

OnEvent = Callable[[str, Any], None]
MAX_THREADS = 50
"""Threads listed, the most recently updated first."""


class UIError(Exception):
    """A run the UI could not start or finish: the message says why, for the page."""


class Runner(Protocol):
    """What the page needs from whatever runs the graph."""

    where: str
    """Where runs go, for the page's header."""
    workspace: Path
    """Where uploads are copied before a run."""

    async def new_thread(self) -> str: ...

    async def start(self, thread_id: str, request: str, files: list[Path],
                    approval: str | None, on_event: OnEvent) -> RunView: ...

    async def resume(self, thread_id: str, decision: dict[str, Any] | None,
                     on_event: OnEvent) -> RunView: ...

    async def open(self, thread_id: str) -> RunView: ...

    async def threads(self) -> list[ThreadSummary]: ...


def stage_uploads(uploads: list[str | Path], workspace: Path, thread_id: str) -> list[Path]:
    """Copy uploaded files into ``<workspace>/uploads/<thread>/`` and return the copies.

    Gradio keeps uploads in its own temporary folder, outside the workspace, and the
    graph reads only files inside the workspace or attached; a copy also outlives
    Gradio's clean-up, so a resumed thread still finds its inputs. Two uploads with one
    name get numbered copies.

    Raises:
        UIError: an upload that is not a file (any more).
    """
    folder = workspace / "uploads" / thread_id
    staged: list[Path] = []
    for upload in uploads:
        source = Path(upload)
        if not source.is_file():
            raise UIError(f"the upload {source.name} is gone (not a file): upload it again")
        folder.mkdir(parents=True, exist_ok=True)
        target, n = folder / source.name, 1
        while target in staged or target.exists():
            target, n = folder / f"{source.stem}-{n}{source.suffix}", n + 1
        shutil.copyfile(source, target)
        staged.append(target.resolve())
    return staged


def view_of_result(result: api.RunResult) -> RunView:
    """The view of an embedded run's result, its artifacts as files in the workspace."""
    view = RunView.from_values(result.thread_id, result.document(), result.status,
                               result.approval)
    for subtask_id, ref in view.artifact_refs():
        path = (result.workspace / ref["path"]).resolve()
        view.artifacts.append(Artifact(subtask_id, str(ref.get("kind", "file")),
                                       path if path.is_file() else None, ref["path"]))
    return view


def _recorded(values: dict[str, Any], base: Context) -> Context:
    """The UI's settings with those the thread recorded on top (its backend, approval
    policy, limits...), so a thread resumes as it ran; a recorded value that lost its
    credentials, or that no longer is valid, is left to the UI's own."""
    names = set(Context.model_fields) - {"workspace", "replay", "caller"}
    recorded = {k: v for k, v in (values.get("settings") or {}).items()
                if k in names and REDACTED not in json.dumps(v)}
    try:
        return base.replace(**recorded)
    except (SettingsError, TypeError, ValueError):
        return base


class EmbeddedRunner:
    """The graph in this process, through :mod:`hugginggpt.api`."""

    def __init__(self, context: Context | None = None, checkpoint_url: str | None = None,
                 who: str = "web UI") -> None:
        try:
            self.context = api.make_context(context).replace(caller="ui")
        except (SettingsError, ConfigError, TypeError) as exc:
            raise UIError(str(exc)) from None
        self.workspace = Path(self.context.workspace)
        self.url = checkpoint_url or f"sqlite:///{self.workspace}/checkpoints.sqlite"
        if self.url == "memory":
            raise UIError("the UI keeps threads across runs and resumes them: give a "
                          "sqlite:///FILE or postgresql:// checkpoint URL, not memory")
        self.who = who
        self.where = f"embedded (workspace {self.workspace}, checkpoints {redact(self.url)})"

    async def new_thread(self) -> str:
        return uuid.uuid4().hex[:12]

    async def _in_thread(self, call: Callable[[], api.RunResult]) -> RunView:
        try:
            result = await asyncio.to_thread(call)
        except (ArgumentError, SettingsError, ConfigError, TypeError) as exc:
            raise UIError(str(exc)) from None
        return view_of_result(result)

    async def start(self, thread_id: str, request: str, files: list[Path],
                    approval: str | None, on_event: OnEvent) -> RunView:
        settings = {"approval": approval} if approval else {}
        return await self._in_thread(lambda: api.run(
            request, files, thread_id=thread_id, checkpoint_url=self.url,
            context=self.context, on_event=on_event, **settings))

    async def resume(self, thread_id: str, decision: dict[str, Any] | None,
                     on_event: OnEvent) -> RunView:
        values = await self._values(thread_id)
        if values is None:
            raise UIError(f"thread {thread_id} has no checkpoint in {redact(self.url)}")
        context = _recorded(values, self.context)
        if decision is not None:
            decision = {"who": self.who, **decision}
        return await self._in_thread(lambda: api.resume(
            thread_id, decision, checkpoint_url=self.url, context=context,
            on_event=on_event))

    async def _snapshot(self, thread_id: str) -> Any:
        async with aopen_checkpointer(self.url) as saver:
            return await build_graph(checkpointer=saver).aget_state(
                {"configurable": {"thread_id": thread_id}})

    async def _values(self, thread_id: str) -> dict[str, Any] | None:
        snapshot = await self._snapshot(thread_id)
        return dict(snapshot.values) if snapshot.values else None

    async def open(self, thread_id: str) -> RunView:
        snapshot = await self._snapshot(thread_id)
        if not snapshot.values:
            raise UIError(f"thread {thread_id} has no checkpoint in {redact(self.url)}")
        return view_of_result(api.RunResult.from_snapshot(thread_id, snapshot, self.workspace))

    def _thread_ids(self) -> list[str]:
        """The threads of a SQLite checkpoint file, the most recent first (checkpoint
        ids grow with time), read with one query instead of loading every checkpoint."""
        path = sqlite_path(self.url)
        if path is None or not path.is_file():
            return []
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            try:
                rows = db.execute("SELECT thread_id, MAX(checkpoint_id) AS latest FROM "
                                  "checkpoints GROUP BY thread_id ORDER BY latest DESC "
                                  "LIMIT ?", (MAX_THREADS,)).fetchall()
            except sqlite3.OperationalError:  # no run yet: no table
                return []
        return [str(row[0]) for row in rows]

    async def threads(self) -> list[ThreadSummary]:
        async with aopen_checkpointer(self.url) as saver:
            if sqlite_path(self.url) is not None:
                ids = await asyncio.to_thread(self._thread_ids)
            else:  # PostgreSQL: the newest checkpoints first, until enough threads
                ids = []
                async for item in saver.alist(None):
                    thread = str(item.config["configurable"]["thread_id"])
                    if thread not in ids:
                        ids.append(thread)
                    if len(ids) >= MAX_THREADS:
                        break
            app = build_graph(checkpointer=saver)
            found = []
            for thread in ids:
                snapshot = await app.aget_state({"configurable": {"thread_id": thread}})
                if not snapshot.values:
                    continue
                status = api.RunResult.from_snapshot(thread, snapshot, self.workspace).status
                found.append(ThreadSummary(thread, status, str(snapshot.values.get("request", "")),
                                           str(snapshot.created_at or "")))
        return found


# ---------------------------------------------------------------------------- a server


def _interrupts(state: dict[str, Any]) -> list[dict[str, Any]]:
    """A thread state's pending interrupts: ``interrupts`` where the server gives them,
    else those of its tasks (older servers)."""
    found = list(state.get("interrupts") or [])
    if not found:
        for task in state.get("tasks") or []:
            found.extend(task.get("interrupts") or [])
    return [i for i in found if isinstance(i, dict)]


def view_of_server_state(thread_id: str, state: dict[str, Any], server_url: str) -> RunView:
    """The view of a thread's state as ``threads.get_state`` returns it.

    The status is the graph's own when the run has ended; a thread with a pending
    interrupt is ``waiting``; one with steps still to take and none pending was cut
    short (``interrupted``). An artifact with a ``url`` (relative to the server or
    absolute) can be fetched; one without stays on the server's disk (``where``)."""
    values = state.get("values") or {}
    if not isinstance(values, dict):
        values = {}
    pending = _interrupts(state)
    approval = pending[0].get("value") if pending else None
    status = str(values.get("status") or "running")
    if status not in FINISHED or state.get("next"):
        status = "waiting" if approval is not None else "interrupted"
    view = RunView.from_values(thread_id, values, status, approval)
    for subtask_id, ref in view.artifact_refs():
        url = ref.get("url")
        where = urljoin(server_url.rstrip("/") + "/", str(url)) if url else (
            f"{ref['path']} on the server (it gives no download URL)")
        view.artifacts.append(Artifact(subtask_id, str(ref.get("kind", "file")), None, where))
        if url:  # the answer names the file by the server's path: the page, by its URL
            view.response = named_absolutely(view.response, str(url), where)
    return view


def summary_of_server_thread(thread: dict[str, Any]) -> ThreadSummary:
    """A thread of ``threads.search`` in the list: the graph's status when the thread
    has one, else the server's (``idle``, ``busy``, ``interrupted``, ``error``)."""
    values = thread.get("values") if isinstance(thread.get("values"), dict) else {}
    status = str((values or {}).get("status") or thread.get("status") or "")
    if thread.get("status") == "interrupted":
        status = "waiting"
    return ThreadSummary(str(thread["thread_id"]), status, str((values or {}).get("request", "")),
                         str(thread.get("updated_at") or ""))


def human_message(request: str, files: list[Path]) -> dict[str, Any]:
    """The request as a chat message for the server: its text, then each file as a
    content block (``image``, ``audio``, ``video`` or ``file`` by its type) with the bytes
    in base64 and the file's name."""
    import base64
    import mimetypes

    content: list[dict[str, Any]] = [{"type": "text", "text": request}]
    for path in files:
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        kind = mime.split("/")[0] if mime.split("/")[0] in ("image", "audio", "video") \
            else "file"
        content.append({"type": kind, "base64": base64.b64encode(path.read_bytes()).decode(),
                        "mime_type": mime, "extras": {"filename": path.name}})
    return {"type": "human", "content": content}


class ServerRunner:
    """A LangGraph server, through ``langgraph_sdk``."""

    def __init__(self, url: str, api_key: str | None = None, assistant: str = "hugginggpt",
                 workspace: Path | None = None, who: str = "web UI") -> None:
        from langgraph_sdk import get_client

        self.url = url.rstrip("/")
        self.api_key = api_key
        self.assistant = assistant
        self.headers = {"x-api-key": api_key} if api_key else {}
        self.client = get_client(url=self.url, api_key=api_key)
        self.workspace = (workspace or Path(Context().workspace)).resolve()
        self.who = who
        self.where = f"server {self.url} (assistant {assistant})"

    async def _call(self, call: Any) -> Any:
        """Await a client call; a refusal or an unreachable server becomes a UIError."""
        import httpx

        try:
            return await call
        except httpx.HTTPStatusError as exc:
            detail = exc.response.text[:300]
            raise UIError(f"the server at {self.url} answered {exc.response.status_code}: "
                          f"{detail}") from None
        except httpx.HTTPError as exc:
            raise UIError(f"cannot reach the server at {self.url}: {exc}") from None

    async def new_thread(self) -> str:
        thread = await self._call(self.client.threads.create())
        return str(thread["thread_id"])

    async def _stream(self, thread_id: str, on_event: OnEvent, **kwargs: Any) -> RunView:
        import httpx

        try:
            async for part in self.client.runs.stream(
                    thread_id, self.assistant, stream_mode=["updates", "custom"], **kwargs):
                if part.event in ("updates", "custom"):
                    on_event(part.event, part.data)
                elif part.event == "error":
                    data = part.data if isinstance(part.data, dict) else {"message": part.data}
                    raise UIError(f"the run failed on the server: {data.get('message') or data}")
        except httpx.HTTPStatusError as exc:
            raise UIError(f"the server at {self.url} answered {exc.response.status_code}: "
                          f"{exc.response.text[:300]}") from None
        except httpx.HTTPError as exc:
            raise UIError(f"cannot reach the server at {self.url}: {exc}") from None
        return await self.open(thread_id)

    async def start(self, thread_id: str, request: str, files: list[Path],
                    approval: str | None, on_event: OnEvent) -> RunView:
        if not request.strip():
            raise UIError("the request is empty: say what you want done")
        context = {"caller": "ui", **({"approval": approval} if approval else {})}
        # a served run reads no file of the server's disk: the uploads travel in the
        # request's chat message, as content blocks
        return await self._stream(thread_id, on_event, context=context,
                                  input={"messages": [human_message(request, files)]})

    async def resume(self, thread_id: str, decision: dict[str, Any] | None,
                     on_event: OnEvent) -> RunView:
        if decision is None:
            return await self._stream(thread_id, on_event, input=None,
                                      context={"caller": "ui"})
        return await self._stream(thread_id, on_event, context={"caller": "ui"},
                                  command={"resume": {"who": self.who, **decision}})

    async def open(self, thread_id: str) -> RunView:
        state = await self._call(self.client.threads.get_state(thread_id))
        view = view_of_server_state(thread_id, state, self.url)
        await self._fetch_artifacts(view)
        return view

    async def _fetch_artifacts(self, view: RunView) -> None:
        """Download the artifacts the server gives URLs for into the workspace, so the
        page can show them; one that fails keeps its URL as text."""
        import httpx

        folder = self.workspace / "ui-downloads" / view.thread_id
        async with httpx.AsyncClient(headers=self.headers, timeout=60) as http:
            for artifact in view.artifacts:
                if not artifact.where.startswith(("http://", "https://")):
                    continue
                name = Path(artifact.where.split("?")[0]).name or "artifact"
                try:
                    reply = await http.get(artifact.where)
                    reply.raise_for_status()
                except httpx.HTTPError as exc:
                    artifact.where += f" (download failed: {exc})"
                    continue
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(reply.content)
                artifact.path = folder / name

    async def threads(self) -> list[ThreadSummary]:
        found = await self._call(self.client.threads.search(
            limit=MAX_THREADS, sort_by="updated_at", sort_order="desc"))
        return [summary_of_server_thread(t) for t in found]
