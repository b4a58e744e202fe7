"""The workspace artifact store: outputs are files, state holds references.

An artifact reference is a small JSON-able dict::

    {"artifact_id": "3f2a9c1e0b7d", "kind": "image", "path": "artifacts/<thread>/3f2a9c1e0b7d.png",
     "bytes": 4213}

``path`` is relative to the workspace, so a workspace can be moved or mounted elsewhere.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

from tools.errors import ArgumentError

__all__ = ["ArtifactStore", "is_artifact_ref"]


def is_artifact_ref(value: Any) -> bool:
    return isinstance(value, dict) and "artifact_id" in value and "path" in value


class ArtifactStore:
    """Writes artifacts under ``<workspace>/artifacts/<thread_id>/`` and resolves paths
    only inside the workspace."""

    def __init__(self, workspace: str | Path, thread_id: str = "default") -> None:
        self.workspace = Path(workspace).resolve()
        safe_thread = "".join(c if c.isalnum() or c in "-_." else "_" for c in thread_id)
        self.folder = self.workspace / "artifacts" / (safe_thread or "default")

    def new_path(self, suffix: str) -> tuple[str, Path]:
        """Reserve a fresh file name; returns (artifact_id, absolute path)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        artifact_id = uuid.uuid4().hex[:12]
        return artifact_id, self.folder / f"{artifact_id}{suffix}"

    def ref(self, artifact_id: str, kind: str, path: Path, **extra: Any) -> dict[str, Any]:
        return {
            "artifact_id": artifact_id,
            "kind": kind,
            "path": path.relative_to(self.workspace).as_posix(),
            "bytes": path.stat().st_size,
            **extra,
        }

    def put_bytes(self, data: bytes, kind: str, suffix: str, **extra: Any) -> dict[str, Any]:
        artifact_id, path = self.new_path(suffix)
        path.write_bytes(data)
        return self.ref(artifact_id, kind, path, **extra)

    def put_json(self, obj: Any, kind: str, **extra: Any) -> dict[str, Any]:
        return self.put_bytes(json.dumps(obj).encode(), kind, ".json", **extra)

    def add_file(self, source: Path, kind: str) -> dict[str, Any]:
        """Take a file a tool wrote: moved in if it is not in the store already."""
        source = Path(source).resolve()
        if source.parent == self.folder:
            return self.ref(source.stem, kind, source)
        artifact_id, path = self.new_path(source.suffix)
        shutil.copyfile(source, path)
        return self.ref(artifact_id, kind, path)

    def resolve(self, ref: dict[str, Any]) -> Path:
        """The absolute path of an artifact, refusing anything outside the workspace."""
        path = (self.workspace / ref["path"]).resolve()
        if not path.is_relative_to(self.workspace):
            raise ArgumentError(f"artifact path {ref['path']!r} is outside the workspace")
        if not path.is_file():
            raise ArgumentError(f"artifact {ref['artifact_id']} is missing at {path}")
        return path

    def read_json(self, ref: dict[str, Any]) -> Any:
        return json.loads(self.resolve(ref).read_text(encoding="utf-8"))
