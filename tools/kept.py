"""Arrays computed once and kept in the per-user cache folder
(:func:`hugginggpt.tools.env.cache_dir`): the example bank's vectors and MiniLM's
laid-out weights (langdetect's profile table is kept in SQLite instead:
:mod:`hugginggpt.tools.experts.lite.profiles`).

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

__all__ = ["read_kept", "keep"]


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

    files: list[tuple[str, Callable[[Any], Any]]] = [(".npy", lambda f: np.save(f, array))]
    if index is not None:
        files.append((".json", lambda f: f.write(json.dumps(index).encode())))
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        for suffix, write in files:
            with tempfile.NamedTemporaryFile(dir=base.parent, suffix=".tmp",
                                             delete=False) as stream:
                write(stream)
            os.replace(stream.name, base.with_suffix(suffix))
    except OSError:
        pass
