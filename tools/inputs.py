"""Which local files a plan may name as inputs, whatever the plan says.

A file argument is allowed when its real path (every symbolic link followed) is inside
the workspace, or is a file the user attached (``--file``; ``State.files``). An attached
path that is itself a symbolic link is judged by its target: the target must be inside
the workspace or attached too. Then the target must be a regular file (never a device,
a FIFO, a socket or a directory: reading ``/dev/zero`` or a FIFO would never end) and no
larger than the run's limit. Paths outside the workspace are refused before anything
looks at them, so a refusal never tells whether such a file exists.

Nothing here opens a file: the checks use ``stat`` only, which does not block on a FIFO.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hugginggpt.tools.errors import ArgumentError, Control, Fix
from hugginggpt.tools.kinds import is_url
from hugginggpt.tools.text import clip

__all__ = ["MAX_PATH_CHARS", "resolve_input_file"]

MAX_PATH_CHARS = 4096
"""Longer file arguments are refused before they reach the file system (Linux PATH_MAX)."""

_MB = 1024 * 1024
_ATTACH = Fix(say="attach it with {}, or copy it into the workspace",
              controls=[Control(kind="file")])


@dataclass(frozen=True)
class _Attachment:
    raw: str
    given: Path
    """The attached path made absolute, links not followed."""
    real: Path
    """Where it leads, every link followed."""
    is_link: bool


def _attachments(files: Iterable[str]) -> list[_Attachment]:
    found = []
    for raw in files:
        if not raw or is_url(raw) or "\x00" in raw or len(raw) > MAX_PATH_CHARS:
            continue
        given = Path(os.path.abspath(raw))
        found.append(_Attachment(raw, given, Path(os.path.realpath(raw)), os.path.islink(given)))
    return found


def _inside(path: Path, root: Path) -> bool:
    return path.is_relative_to(root)


def _through_link(path: Path, root: Path) -> bool:
    """Whether ``path`` passes through a symbolic link inside ``root``."""
    return any(os.path.islink(p) and _inside(Path(os.path.abspath(p)), root)
               for p in (path, *path.parents))


def _file_type(mode: int) -> str | None:
    """What a non-regular file is, for the refusal; None for a regular file."""
    for test, name in ((stat.S_ISDIR, "directory"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "FIFO (named pipe)"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "special file"


def resolve_input_file(
    value: str, workspace: str | Path, attached: Iterable[str], max_bytes: int
) -> Path:
    """The real path of the file a plan's argument ``value`` names, if it may be read.

    ``value`` is an attached file (as attached, or by its file name), or a path relative
    to the workspace (an absolute path must lie inside it).

    Raises:
        ArgumentError: the name is malformed, the file is outside the workspace and not
            attached, a link leads out of it, the file is missing, is not a regular file,
            or is larger than ``max_bytes``; the message says what to do instead.
    """
    root = Path(workspace).resolve()
    shown = clip(repr(value), 80)
    if not value.strip():
        raise ArgumentError("an empty file name was refused: name a file in the workspace "
                            "or an attached file")
    if "\x00" in value:
        raise ArgumentError(f"file {shown} refused: the name contains a NUL byte; name a "
                            "file in the workspace or an attached file")
    if len(value) > MAX_PATH_CHARS:
        raise ArgumentError(f"file {shown} refused: the name is {len(value)} characters "
                            f"long (at most {MAX_PATH_CHARS}); name a file in the workspace "
                            "or an attached file")
    attachments = _attachments(attached)
    plain = {a.real for a in attachments if not a.is_link}

    def allowed(real: Path) -> bool:
        return _inside(real, root) or real in plain

    candidate: Path | None = None
    absolute = Path(os.path.abspath(value))
    for a in attachments:
        if value == a.raw or absolute == a.given:
            candidate = a.given
            break
    in_workspace = root / value  # an absolute value replaces the root
    if candidate is None and (os.path.lexists(in_workspace)
                              or not allowed(Path(os.path.realpath(in_workspace)))):
        candidate = in_workspace
    if candidate is None or not os.path.lexists(candidate):
        by_name = next((a for a in attachments if a.given.name == Path(value).name), None)
        if by_name is not None:
            candidate = by_name.given
    if candidate is None:
        raise ArgumentError(f"file {shown} not found: it is not an attached file and not in "
                            f"the workspace {root}", fix=_ATTACH)

    real = Path(os.path.realpath(candidate))
    if not allowed(real):
        if _through_link(candidate, root) or any(
                a.given == candidate and a.is_link for a in attachments):
            raise ArgumentError(
                f"file {shown} refused: it is a symbolic link to {real}, which is outside "
                f"the workspace {root} and not attached", fix=Fix(
                    say="copy the file itself into the workspace, or attach it with {}",
                    controls=[Control(kind="file")]))
        raise ArgumentError(f"file {shown} refused: it is outside the workspace {root} and "
                            "was not attached", fix=_ATTACH)
    try:
        info = os.stat(real)
    except OSError as exc:
        raise ArgumentError(
            f"file {shown} not found ({exc.strerror}): it is not an attached file and not "
            f"in the workspace {root}", fix=_ATTACH) from None
    kind = _file_type(info.st_mode)
    if kind is not None:
        raise ArgumentError(f"file {shown} refused: {real} is a {kind}, not a regular "
                            "file; name a regular file")
    if info.st_size > max_bytes:
        raise ArgumentError(
            f"file {shown} refused: it is {info.st_size / _MB:.1f} MB, over the limit of "
            f"{max_bytes / _MB:g} MB", fix=Fix(
                say="use a smaller file, or raise the limit with {}",
                controls=[Control(kind="limit", name="max_file_mb")]))
    return real
