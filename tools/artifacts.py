"""The workspace artifact store: inputs and outputs are files, state holds references.

Artifacts are content-addressed: the id is the start of the SHA-256 of the bytes, so the
same output stored twice is one file, and an id names exactly one content. A reference
is a small JSON-able dict::

    {"artifact_id": "3f2a9c1e0b7d4a51", "kind": "image",
     "path": "artifacts/<thread>/3f2a9c1e0b7d4a51.png", "bytes": 4213}

``path`` is relative to the workspace, so a workspace can be moved or mounted elsewhere.
A served run's references also carry ``url``, where the server's ``/artifacts`` route
serves the file to the thread's owner.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hugginggpt.tools.errors import ArgumentError

__all__ = ["ArtifactStore", "is_artifact_ref", "content_id", "thread_folder", "where_shown",
           "shown_refs", "named_absolutely"]

_ID_LENGTH = 16


def is_artifact_ref(value: Any) -> bool:
    return isinstance(value, dict) and "artifact_id" in value and "path" in value


def where_shown(ref: dict[str, Any], workspace: str | Path) -> str:
    """Where an answer says an output file is: its download URL when the run is served
    (the caller cannot open the server's disk), else its absolute path (a path relative to
    a workspace the answer does not name leads nowhere).

    Blocking when ``workspace`` is relative (it reads the working directory): call it
    off an event loop.
    """
    if ref.get("url"):
        return str(ref["url"])
    return str((Path(workspace) / str(ref["path"])).resolve())


def shown_refs(outputs: dict[str, Any], workspace: str | Path) -> dict[str, Any]:
    """``outputs`` with each file reference's ``path`` replaced by :func:`where_shown`,
    for the sentences that name it."""
    return {name: {**value, "path": where_shown(value, workspace)}
            if is_artifact_ref(value) else value for name, value in outputs.items()}


def named_absolutely(text: str, relative: str, absolute: str) -> str:
    """``text`` with each mention of a server path (``/artifacts/t/f.wav``) as the
    absolute URL (a path already inside a URL is left alone)."""
    if relative == absolute:
        return text
    return re.sub(rf"(?<![\w/:.]){re.escape(relative)}(?![\w/.-])", absolute, text)


def thread_folder(thread_id: str) -> str:
    """The folder name of a thread's artifacts: its id with anything but letters,
    digits, ``-``, ``_`` and ``.`` replaced."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in thread_id)
    return safe if safe.strip(".") else "default"


def content_id(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:_ID_LENGTH]


class ArtifactStore:
    """Writes artifacts under ``<workspace>/artifacts/<thread_id>/`` and resolves paths
    only inside the workspace."""

    def __init__(self, workspace: str | Path, thread_id: str = "default",
                 url: str | None = None) -> None:
        """``url``: the prefix of the route that serves artifacts (``.../artifacts``);
        references then carry ``url`` too."""
        self.workspace = Path(workspace).resolve()
        self.folder = self.workspace / "artifacts" / thread_folder(thread_id)
        self.url = f"{url.rstrip('/')}/{quote(thread_id, safe='')}" if url else None

    def new_path(self, suffix: str) -> tuple[str, Path]:
        """A fresh file for a tool to write; returning it from the tool stores it under
        its content id. Returns (a provisional id, the absolute path)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        provisional = uuid.uuid4().hex[:_ID_LENGTH]
        return provisional, self.folder / f".new-{provisional}{suffix}"

    def _ref(self, kind: str, path: Path, **extra: Any) -> dict[str, Any]:
        ref = {
            "artifact_id": path.stem,
            "kind": kind,
            "path": path.relative_to(self.workspace).as_posix(),
            "bytes": path.stat().st_size,
            **extra,
        }
        if self.url:
            ref["url"] = f"{self.url}/{path.name}"
        return ref

    def _settle(self, source: Path, suffix: str, move: bool) -> Path:
        """Put ``source`` at its content address; the same content is stored once."""
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / f"{content_id(source)}{suffix.lower()}"
        if target.exists():
            if move:
                source.unlink()
        elif move:
            os.replace(source, target)
        else:
            partial = self.folder / f".copy-{uuid.uuid4().hex}{suffix}"
            shutil.copyfile(source, partial)
            os.replace(partial, target)
        return target

    def put_bytes(self, data: bytes, kind: str, suffix: str, **extra: Any) -> dict[str, Any]:
        _, scratch = self.new_path(suffix)
        scratch.write_bytes(data)
        return self._ref(kind, self._settle(scratch, suffix, move=True), **extra)

    def put_upload(self, data: bytes, name: str, suffix: str) -> str:
        """Store a file a user uploaded (a chat message's image, say) and return its
        absolute path, in this thread's ``uploads/<content id>/<name>``: under its own name,
        so the request can name it (without one, the content id and ``suffix``)."""
        digest = hashlib.sha256(data).hexdigest()[:_ID_LENGTH]
        folder = self.folder / "uploads" / digest
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (name or f"{digest}{suffix.lower()}")
        if not target.exists():
            partial = folder / f".new-{uuid.uuid4().hex}"
            partial.write_bytes(data)
            os.replace(partial, target)
        return str(target)

    def link(self, path: str | Path) -> str:
        """Where a file of this store can be downloaded: its served URL when the store
        has one, else the file's own ``file://`` URL."""
        real = Path(path).resolve()
        if self.url and real.is_relative_to(self.folder):
            return f"{self.url}/{real.relative_to(self.folder).as_posix()}"
        return real.as_uri()

    def put_json(self, obj: Any, kind: str, **extra: Any) -> dict[str, Any]:
        return self.put_bytes(json.dumps(obj).encode(), kind, ".json", **extra)

    def add_file(self, source: Path, kind: str, **extra: Any) -> dict[str, Any]:
        """Take a file: one a tool wrote in the store is moved to its content address,
        any other is copied."""
        source = Path(source).resolve()
        move = source.parent == self.folder and source.name.startswith(".new-")
        return self._ref(kind, self._settle(source, source.suffix, move=move), **extra)

    def resolve(self, ref: dict[str, Any]) -> Path:
        """The absolute path of an artifact of this store (this thread's folder), refusing
        anything else: a path outside the workspace (``..``, absolute, or a symbolic link
        leading out) or elsewhere in it (checkpoints, settings, other threads' artifacts),
        and anything that is not a regular file."""
        raw = ref.get("path")
        if not isinstance(raw, str) or not raw or "\x00" in raw or len(raw) > 4096:
            raise ArgumentError(f"artifact reference refused: its path {raw!r:.80} is not a "
                                "file name; artifacts are files the artifact store wrote")
        path = Path(os.path.realpath(self.workspace / raw))
        if not path.is_relative_to(self.workspace):
            raise ArgumentError(f"artifact path {raw!r:.80} refused: it is outside the "
                                f"workspace {self.workspace}; artifacts are files the "
                                "artifact store wrote")
        if not path.is_relative_to(self.folder.resolve()):
            raise ArgumentError(f"artifact path {raw!r:.80} refused: it is outside the "
                                f"artifact store {self.folder}; artifacts are files the "
                                "artifact store wrote")
        if not path.is_file():  # follows no further links: the path is already real
            raise ArgumentError(f"artifact {ref.get('artifact_id')!r:.40} is missing, or not "
                                f"a regular file, at {path}")
        return path

    def read_json(self, ref: dict[str, Any]) -> Any:
        return json.loads(self.resolve(ref).read_text(encoding="utf-8"))
