"""Kinds of data that flow between subtasks, and how to tell a value's kind.

Also how an argument names other subtasks' outputs: ``<GENERATED>-k`` as the whole value
(any kind; a file passes as an artifact), or embedded, any number of times, in the text of
a text argument ("Describe the scene from <GENERATED>-0 and <GENERATED>-1"), where each is
filled in with the text form of that output (:func:`as_text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, Literal

__all__ = [
    "Kind",
    "DATA_KINDS",
    "FILE_KINDS",
    "TEXT_LIKE",
    "as_text",
    "GENERATED_RE",
    "REF_RE",
    "generated",
    "generated_ref",
    "generated_refs",
    "fill_refs",
    "kind_of_literal",
    "is_url",
    "TEXT_FILE_SUFFIXES",
    "media_type_suffix",
    "is_text_file",
]

Kind = Literal["text", "image", "audio", "video", "table", "vector", "number", "labels", "json"]
"""What a value is. The first five are the data kinds a user can attach or a plan can
name as arguments; the others are structured outputs of experts."""

DATA_KINDS: frozenset[str] = frozenset({"text", "image", "audio", "video", "table"})

FILE_KINDS: frozenset[str] = DATA_KINDS - {"text"}
"""Data kinds whose values are files (paths, URLs or artifact references)."""

TEXT_LIKE: frozenset[str] = frozenset({"labels", "number"})
"""Output kinds that can feed a text argument, written out by :func:`as_text`."""

GENERATED_RE = re.compile(r"^<GENERATED>-([0-9]+)$")
"""A whole argument value that names another subtask's output, as in HuggingGPT."""

REF_RE = re.compile(r"<GENERATED>-([0-9]+)")
"""A reference anywhere in a value (ASCII digits only: ``<GENERATED>-\uff10`` is text)."""

_SUFFIX_KINDS: dict[str, Kind] = {
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff"), "image"),
    **dict.fromkeys((".wav", ".mp3", ".flac", ".ogg", ".m4a", ".opus"), "audio"),
    **dict.fromkeys((".mp4", ".avi", ".mov", ".mkv", ".webm"), "video"),
    **dict.fromkeys((".csv", ".tsv", ".parquet", ".xlsx"), "table"),
}

_MEDIA_TYPE_SUFFIXES: dict[str, str] = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
    "image/bmp": ".bmp", "image/tiff": ".tif",
    **dict.fromkeys(("audio/wav", "audio/x-wav", "audio/wave"), ".wav"),
    **dict.fromkeys(("audio/mpeg", "audio/mp3"), ".mp3"),
    "audio/flac": ".flac", **dict.fromkeys(("audio/ogg", "application/ogg"), ".ogg"),
    "video/mp4": ".mp4", "video/webm": ".webm", "video/x-msvideo": ".avi",
    "text/csv": ".csv", "text/plain": ".txt",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
}


def media_type_suffix(media_type: str) -> str:
    """The file suffix of a media type (``"audio/x-wav; rate=16000"``: ``.wav``), ``""``
    for one not known here."""
    return _MEDIA_TYPE_SUFFIXES.get(media_type.split(";")[0].strip().lower(), "")


TEXT_FILE_SUFFIXES: frozenset[str] = frozenset({
    ".txt", ".text", ".md", ".markdown", ".rst", ".json", ".jsonl", ".ndjson", ".log",
    ".yaml", ".yml", ".xml", ".html", ".htm", ".srt", ".vtt", ".tex", ".csv", ".tsv"})
"""Suffixes of files whose content is text a text task can work on: an attached
``notes.txt`` is the text to summarise. A CSV or TSV is a table as well; it is read as
text only where a text argument names it (no table task asked for it)."""


def as_text(value: Any) -> str:
    """An output as text for a text argument: labels as "label (score), ...", numbers
    with three decimals."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(
            f"{item.get('label', item.get('word', item))} ({item['score']:.2f})"
            if isinstance(item, dict) and "score" in item
            else str(item.get("label", item) if isinstance(item, dict) else item)
            for item in value
        )
    return str(value)


def generated_ref(value: str) -> int | None:
    """Return k when ``value`` is exactly ``<GENERATED>-k``, else None."""
    match = GENERATED_RE.match(value.strip())
    return int(match.group(1)) if match else None


def generated_refs(value: str) -> list[int]:
    """Every k that ``value`` names as ``<GENERATED>-k``, whole or embedded in text, in
    the order of first appearance, each once: the subtasks whose outputs it needs."""
    return list(dict.fromkeys(int(k) for k in REF_RE.findall(value)))


def generated(k: int) -> str:
    """The reference to subtask ``k``'s output, ``<GENERATED>-k``, for a planner to write
    as a whole value or inside a text argument."""
    return f"<GENERATED>-{k}"


def fill_refs(value: str, text_of: Callable[[int], str]) -> str:
    """``value`` with each ``<GENERATED>-k`` replaced, in place, by ``text_of(k)``.

    The replacement text is inserted as is (a ``<GENERATED>-j`` inside an output is not
    filled in again)."""
    return REF_RE.sub(lambda match: text_of(int(match.group(1))), value)


def is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def kind_of_literal(value: str) -> Kind:
    """The kind a literal argument value denotes: a file or URL by its suffix, else text.

    Only a value that is one token (or an absolute path, spaces and all) and ends in a
    known media suffix counts as a file; a sentence that happens to end in ".png" stays
    text.
    """
    stripped = value.strip()
    if not _one_name(stripped):
        return "text"
    path = stripped.split("?", 1)[0].split("#", 1)[0] if is_url(stripped) else stripped
    return _SUFFIX_KINDS.get(PurePosixPath(path).suffix.lower(), "text")


def is_text_file(value: str) -> bool:
    """Whether ``value`` names a file (one token, not a URL) whose content is text:
    ``notes.txt``, ``data/report.md``, ``rows.csv``."""
    stripped = value.strip()
    if not _one_name(stripped) or is_url(stripped):
        return False
    path = PurePosixPath(stripped)
    return path.stem != "" and path.suffix.lower() in TEXT_FILE_SUFFIXES


def _one_name(value: str) -> bool:
    """Whether ``value`` may name one file: one token, or an absolute path whose only
    white space is plain spaces (an attached "/home/me/Screenshot 2026-12-01 at 10.02.png":
    attached files are absolute paths, and a sentence does not start with "/")."""
    if not value:
        return False
    if value.startswith("/"):
        return not any(ch.isspace() and ch != " " for ch in value)
    return not any(ch.isspace() for ch in value)
