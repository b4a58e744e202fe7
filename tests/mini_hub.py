"""A local stand-in for the Hugging Face Hub, for tests: the real ``snapshot_download``,
``hf_hub_download``, ``HfApi.model_info``/``list_models`` and ``from_pretrained(repo_id)``
run against it when ``HF_ENDPOINT`` points at it (set before huggingface_hub is imported,
with a fresh ``HF_HOME``; see DESIGN.md for what the Hub client needs).

It serves the files of folders the tests build (tiny models), under repo ids:

- ``GET /api/models`` (``list_models``: ``pipeline_tag``, ``search``, ``limit``), ``GET
  /api/models/{repo}`` and ``.../revision/{rev}``: the model's info (``id``, a 40-hex
  ``sha``, ``siblings`` and whatever extra fields the test gives: ``library_name``,
  ``pipeline_tag``, ``gated``, ``cardData``, ``inferenceProviderMapping``, ...);
- ``GET /api/models/{repo}/tree/{rev}[/{path}]``: the file list with sizes;
- ``HEAD``/``GET /{repo}/resolve/{rev}/{file}``: the file, with ``X-Repo-Commit``,
  ``ETag`` and ``Content-Length``, and ``Range`` requests (resumed downloads).

``{rev}`` is ``main`` or the repo's sha. A 404 carries ``X-Error-Code`` (``RepoNotFound``,
``RevisionNotFound``, ``EntryNotFound``). ``cut_after`` makes the next download of a file
stop after so many bytes (a connection dropped mid-download), ``stall`` makes it wait
first; every request is recorded,
and every ranged file request (``ranges``).

Example::

    hub = MiniHub().start()
    hub.add_model("tiny/captioner", folder, info={"library_name": "transformers"})
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["MiniHub", "HubRepo"]


@dataclass
class HubRepo:
    """One model repo: its files (relative path -> bytes), its commit and its info."""

    repo_id: str
    files: dict[str, bytes]
    sha: str
    info: dict[str, Any] = field(default_factory=dict)

    def oid(self, path: str) -> str:
        data = self.files[path]
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

    def siblings(self) -> list[dict[str, Any]]:
        return [{"rfilename": p, "size": len(d)} for p, d in sorted(self.files.items())]

    def model_info(self) -> dict[str, Any]:
        return {"id": self.repo_id, "modelId": self.repo_id, "sha": self.sha,
                "private": False, "disabled": False, "gated": False, "downloads": 0,
                "likes": 0, "tags": [], "siblings": self.siblings(), **self.info}


class MiniHub:
    """The server; :meth:`add_model` publishes a folder under a repo id."""

    def __init__(self) -> None:
        self.repos: dict[str, HubRepo] = {}
        self.requests: list[tuple[str, str]] = []
        """(method, path with query) of every request, in order."""
        self.ranges: list[tuple[str, int]] = []
        """(path, first byte asked for) of every file GET with a ``Range`` (a resume)."""
        self.cut_after: dict[tuple[str, str], int] = {}
        self.stall: dict[tuple[str, str], float] = {}
        """(repo, file) -> seconds the next download of it waits, its connection open,
        before its bytes come (a slow download, to stop its client mid-way)."""
        self.stalled: list[tuple[str, int]] = []
        """The client address (host, port) of each stalled download, as it starts."""
        """(repo, file) -> bytes to send before dropping the next download of it."""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --------------------------------------------------------------------- publishing

    def add_model(self, repo_id: str, folder: Path | None = None, *,
                  files: dict[str, bytes] | None = None,
                  info: dict[str, Any] | None = None) -> HubRepo:
        """Publish ``folder``'s files (and ``files``) as ``repo_id``; its sha is a hash of
        the contents, so the same files give the same commit."""
        contents = dict(files or {})
        if folder is not None:
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file():
                    contents[path.relative_to(folder).as_posix()] = path.read_bytes()
        digest = hashlib.sha1(repo_id.encode())
        for name, data in sorted(contents.items()):
            digest.update(name.encode() + b"\0" + hashlib.sha1(data).digest())
        repo = HubRepo(repo_id, contents, digest.hexdigest(), dict(info or {}))
        with self._lock:
            self.repos[repo_id] = repo
        return repo

    def downloads(self, repo_id: str | None = None) -> list[str]:
        """Paths of the file GETs so far (of one repo, if given)."""
        prefix = f"/{repo_id}/resolve/" if repo_id else ""
        return [p for m, p in self.requests if m == "GET" and "/resolve/" in p
                and p.startswith(prefix)]

    # --------------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the hub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> MiniHub:
        hub = self

        class Handler(_Handler):
            owner = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> MiniHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    owner: MiniHub
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    # --------------------------------------------------------------------- routing

    def _serve(self, head: bool) -> None:
        hub = self.owner
        with hub._lock:
            hub.requests.append((self.command, self.path))
        parts = urlsplit(self.path)
        path, query = unquote(parts.path), parse_qs(parts.query)
        if path == "/api/models":
            return self._json(self._list(query))
        if path.startswith("/api/models/"):
            return self._api(path.removeprefix("/api/models/"))
        if "/resolve/" in path:
            repo_id, _, rest = path.lstrip("/").partition("/resolve/")
            rev, _, filename = rest.partition("/")
            return self._file(repo_id, rev, filename, head)
        return self._missing("RepoNotFound", f"no route {path}")

    def _list(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        tag = query.get("pipeline_tag", [None])[0]
        search = query.get("search", [""])[0]
        limit = int(query.get("limit", ["1000"])[0])
        found = [r.model_info() for r in self.owner.repos.values()
                 if (tag is None or r.info.get("pipeline_tag") == tag)
                 and search in r.repo_id]
        found.sort(key=lambda i: -int(i.get("downloads") or 0))
        return found[:limit]

    def _api(self, rest: str) -> None:
        for marker in ("/tree/", "/revision/"):
            if marker in rest:
                repo_id, _, tail = rest.partition(marker)
                break
        else:
            repo_id, marker, tail = rest, "", ""
        repo = self.owner.repos.get(repo_id)
        if repo is None:
            return self._missing("RepoNotFound", f"repository {repo_id} not found")
        rev, _, sub = tail.partition("/")
        if marker and rev not in ("main", repo.sha):
            return self._missing("RevisionNotFound", f"revision {rev} not found")
        if marker != "/tree/":
            return self._json(repo.model_info())
        entries = [{"type": "file", "path": p, "size": len(d), "oid": repo.oid(p)}
                   for p, d in sorted(repo.files.items())
                   if not sub or p.startswith(sub.rstrip("/") + "/")]
        return self._json(entries)

    def _file(self, repo_id: str, rev: str, filename: str, head: bool) -> None:
        repo = self.owner.repos.get(repo_id)
        if repo is None:
            return self._missing("RepoNotFound", f"repository {repo_id} not found")
        if rev not in ("main", repo.sha):
            return self._missing("RevisionNotFound", f"revision {rev} not found")
        if filename not in repo.files:
            return self._missing("EntryNotFound", f"{filename} not in {repo_id}")
        data = repo.files[filename]
        start = 0
        ranged = self.headers.get("Range", "")
        if ranged.startswith("bytes=") and not head:
            start = int(ranged.removeprefix("bytes=").split("-")[0] or 0)
            with self.owner._lock:
                self.owner.ranges.append((self.path, start))
        self.send_response(206 if start else 200)
        self.send_header("X-Repo-Commit", repo.sha)
        self.send_header("ETag", f'"{repo.oid(filename)}"')
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if head:
            return
        with self.owner._lock:
            cut = self.owner.cut_after.pop((repo_id, filename), None)
            stall = self.owner.stall.pop((repo_id, filename), 0.0)
            if stall:
                self.owner.stalled.append(self.client_address[:2])
        time.sleep(stall)
        if cut is not None:  # a connection dropped mid-download
            with contextlib.suppress(OSError):
                self.wfile.write(data[start:start + cut])
                self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        self.wfile.write(data[start:])

    # --------------------------------------------------------------------- replies

    def _json(self, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _missing(self, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(404)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
