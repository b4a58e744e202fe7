"""Arrays computed once and kept in the per-user cache folder
(:func:`hugginggpt.tools.env.cache_dir`): the example bank's vectors and MiniLM's
laid-out weights.

Each is ``<name>.npy`` (and, when it has one, its index as ``<name>.json``) under a
folder of its own, named by a key over whatever it was computed from, so a changed input
is a new file and never a stale one. Files are written whole and then moved into place:
a concurrent process reads an old file or a new one, never half of one. A folder that
cannot be written, or a file that cannot be read, costs only the work again.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["read_kept", "keep", "write_whole"]


def read_kept(base: Path, mapped: bool = False) -> tuple[Any, Any] | None:
    """The array of ``base.npy`` (memory-mapped, read-only, when ``mapped``) and the
    value of ``base.json`` (None where there is none); None when the array cannot be
    read. The caller checks that the array is the shape it expects."""
    import numpy as np

    index_file = base.with_suffix(".json")
    try:
        index = (json.loads(index_file.read_text(encoding="utf-8"))
                 if index_file.exists() else None)
        array = np.load(base.with_suffix(".npy"), mmap_mode="r" if mapped else None)
    except (OSError, ValueError):
        return None
    return np.asarray(array), index


def keep(base: Path, array: Any, index: Any = None) -> None:
    """Write ``array`` to ``base.npy`` and, if given, ``index`` to ``base.json``."""
    import numpy as np

    def save(path: Path) -> None:
        with path.open("wb") as stream:
            np.save(stream, array)

    files: list[tuple[str, Callable[[Path], Any]]] = [(".npy", save)]
    if index is not None:
        files.append((".json", lambda path: path.write_text(json.dumps(index))))
    try:
        for suffix, write in files:
            write_whole(base.with_suffix(suffix), write)
    except OSError:
        pass


def write_whole(target: Path, write: Callable[[Path], Any]) -> None:
    """Make ``target`` with ``write(path)`` on a temporary file beside it, then move that
    into place: a concurrent reader sees the old file or the new one, never half of one.
    The folder is made if needed; whatever ``write`` raises is raised, and the temporary
    file is removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(handle)
    try:
        write(Path(name))
        os.replace(name, target)
    finally:
        if os.path.exists(name):
            os.remove(name)
