"""Chat messages' content blocks: uploads in, artifact links out.

A chat client (LangGraph Studio's chat, Agent Chat UI, the server's A2A endpoint, an
OpenAI-compatible client) sends a request as a message whose content is text plus
blocks for images, audio and files. Those accepted are LangChain's
(``{"type": "image", "base64": ..., "mime_type": "image/png"}``, or ``"url"``; the
older ``"source_type"``/``"data"`` form) and OpenAI's (``image_url`` with a ``data:`` or
``https:`` URL, ``input_audio``, ``file`` with ``file_data``). :func:`message_inputs`
stores each uploaded file in the thread's artifact store, checked as an attached file is
(its size, and that an image or a recording is one), and passes a URL on to be fetched
as URL inputs are. :func:`output_blocks` turns a run's image, audio and video artifacts
into blocks that link them.
"""

from __future__ import annotations

import base64
import binascii
import io
import mimetypes
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.kinds import media_type_suffix

__all__ = ["message_text", "message_inputs", "output_blocks", "MEDIA_KINDS"]

MEDIA_KINDS = ("image", "audio", "video")
"""Artifact kinds a reply links as blocks of their own."""

_DATA_URL = re.compile(r"data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w=-]+)*?;base64,(?P<data>.*)",
                       re.DOTALL)
_OPENAI_AUDIO = {"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac",
                 "ogg": "audio/ogg", "m4a": "audio/mp4", "webm": "audio/webm"}
_SAFE_NAME = re.compile(r"[^\w.+-]+")


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def message_text(content: Any) -> str:
    """The text of a message's content: its string, or its text blocks joined."""
    parts = [b if isinstance(b, str) else b.get("text", "") for b in _blocks(content)
             if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")]
    return "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())


def _source(block: dict[str, Any]) -> tuple[str, str | None, str | None, str | None] | None:
    """What a media block carries: (kind, base64 data or None, URL or None, MIME type),
    or None for a block that is not media (text, reasoning, a tool call)."""
    kind = block.get("type")
    if kind == "image_url":
        raw = block.get("image_url")
        url = raw.get("url") if isinstance(raw, dict) else raw
        return "image", None, url if isinstance(url, str) else "", None
    if kind == "input_audio":
        raw = block.get("input_audio") or {}
        fmt = str(raw.get("format", "wav")).lower()
        return "audio", raw.get("data") or "", None, _OPENAI_AUDIO.get(fmt, f"audio/{fmt}")
    if kind == "file" and isinstance(block.get("file"), dict):  # OpenAI's file block
        raw = block["file"]
        return "file", None, raw.get("file_data") or raw.get("url") or "", None
    if kind not in (*MEDIA_KINDS, "file"):
        return None
    mime = block.get("mime_type") or block.get("mimeType")
    if block.get("source_type") in ("base64", "url"):  # LangChain's older form
        value = block.get("data") if block["source_type"] == "base64" else block.get("url")
        data, url = (value, None) if block["source_type"] == "base64" else (None, value)
    else:
        data = block.get("base64") or block.get("data")
        url = block.get("url")
    if isinstance(data, (bytes, bytearray)):
        data = base64.b64encode(data).decode("ascii")
    return str(kind), data, url, mime


def _filename(block: dict[str, Any]) -> str | None:
    holders = [block, block.get("extras"), block.get("metadata"), block.get("file")]
    for holder in holders:
        if not isinstance(holder, dict):
            continue
        name = holder.get("filename") or holder.get("name")
        if isinstance(name, str) and name.strip():
            safe = _SAFE_NAME.sub("_", Path(name.strip()).name).strip("._")
            if safe:
                return safe[:120]
    return None


def _check_media(what: str, kind: str, data: bytes, mime: str | None) -> None:
    """Refuse an image that is not one and a recording that does not decode: the same
    check a tool's input would fail later, said now, naming the block."""
    if kind == "image":
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(data)) as image:
                image.verify()
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
            raise ArgumentError(f"{what} ({mime or 'no type given'}, {len(data)} bytes) is "
                                "not an image that can be read: send a PNG, JPEG, GIF, WebP "
                                "or BMP") from None
    elif kind == "audio" and (mime or "").split(";")[0] in (
            "audio/wav", "audio/x-wav", "audio/wave", "audio/flac", "audio/ogg"):
        import soundfile

        try:
            soundfile.info(io.BytesIO(data))
        except (RuntimeError, soundfile.LibsndfileError):
            raise ArgumentError(f"{what} ({mime}, {len(data)} bytes) is not a recording "
                                "that can be read: send a WAV, FLAC, OGG or MP3") from None


def _suffix(mime: str | None, name: str | None, kind: str) -> str:
    if name and Path(name).suffix:
        return Path(name).suffix.lower()
    if mime:
        base = mime.split(";")[0].strip().lower()
        return media_type_suffix(base) or mimetypes.guess_extension(base) or ".bin"
    return {"image": ".png", "audio": ".wav", "video": ".mp4"}.get(kind, ".bin")


def message_inputs(content: Any, store: ArtifactStore, max_bytes: int
                   ) -> tuple[list[str], list[Any]]:
    """The files a message's content blocks carry, as ``files`` of a run: an uploaded
    file stored in the thread's artifact store (its absolute path, under the file's own
    name when the block gives one, so the request can name it), a URL as it is (fetched,
    and checked, as URL inputs are). And the content with each upload replaced by a
    block that links the stored file (:meth:`ArtifactStore.link`), so the conversation
    in the checkpoints holds references, not the bytes.

    Raises:
        ArgumentError: a block that cannot be used (not base64, larger than
            ``max_bytes``, an image that is not one, a URL that is not http(s)), naming
            the block and what to send instead.
    """
    files: list[str] = []
    kept: list[Any] = []
    for number, block in enumerate(_blocks(content), 1):
        kept.append(block)
        if not isinstance(block, dict) or (found := _source(block)) is None:
            continue
        kind, data, url, mime = found
        what = f"block {number} ({kind})"
        if url and not data and (match := _DATA_URL.fullmatch(url.strip())):
            data, url, mime = match["data"], None, mime or match["mime"]
        if data is None and url:
            if not re.match(r"https?://", url.strip(), re.IGNORECASE):
                raise ArgumentError(f"{what}: the URL {url[:80]!r} was refused: send the "
                                    "file itself (base64) or an http(s) URL")
            files.append(url.strip())
            continue
        if not data:
            raise ArgumentError(f"{what} carries no file: give base64 data or an http(s) URL")
        if len(data) > max_bytes * 4 // 3 + 4:
            raise ArgumentError(f"{what} is larger than the {max_bytes // 2**20} MB a run's "
                                "input file may be (the max_file_mb setting)")
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ArgumentError(f"{what}: its data is not valid base64") from None
        if len(raw) > max_bytes:
            raise ArgumentError(f"{what} is {len(raw) / 2**20:.1f} MB, larger than the "
                                f"{max_bytes / 2**20:g} MB a run's input file may be "
                                "(the max_file_mb setting)")
        if kind == "file" and mime and mime.split("/")[0] in MEDIA_KINDS:
            kind = mime.split("/")[0]
        _check_media(what, kind, raw, mime)
        name = _filename(block)
        path = store.put_upload(raw, name or "", _suffix(mime, name, kind))
        files.append(path)
        kept[-1] = {"type": kind, "url": store.link(path), "mime_type": mime or _mime(path),
                    "extras": {"filename": Path(path).name}}
    return files, kept


def _mime(path: str) -> str:
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def output_blocks(outputs: Iterable[Any], workspace: str | Path) -> list[dict[str, Any]]:
    """Blocks linking the image, audio and video artifacts among ``outputs`` (a run's
    output values, in order; each content once): the served URL where the reference has
    one, else the file's own ``file://`` URL."""
    blocks: list[dict[str, Any]] = []
    seen: set[str] = set()
    root = Path(workspace).resolve()
    for value in outputs:
        if not is_artifact_ref(value) or value.get("kind") not in MEDIA_KINDS:
            continue
        if value["artifact_id"] in seen:
            continue
        seen.add(value["artifact_id"])
        url = value.get("url") or (root / value["path"]).as_uri()
        blocks.append({"type": value["kind"], "url": url, "mime_type": _mime(value["path"]),
                       "id": value["artifact_id"]})
    return blocks

