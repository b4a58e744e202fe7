"""Turning a subtask's plan arguments into tool arguments: dependency outputs, files
inside the workspace or attached, URL inputs downloaded within the run's limits.

A whole ``<GENERATED>-k`` value passes subtask k's output as it is (a file as its path);
a text argument that names a text file (``notes.txt``, attached or in the workspace) is
that file's text;
references embedded in a text argument are each filled in with the text form of the
output they name, and the text that results is held to the plan's argument limit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hugginggpt.nodes.execution.board import Board
from hugginggpt.nodes.execution.jobs import Job, finite, remaining_s, run_time_limit
from hugginggpt.nodes.planning.validation import MAX_ARG_CHARS
from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import ArgumentError, TransientToolError
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.fetch import DownloadBudget, FetchLimits, fetch_url
from hugginggpt.tools.inputs import resolve_input_file
from hugginggpt.tools.kinds import (
    FILE_KINDS,
    REF_RE,
    as_text,
    fill_refs,
    generated_ref,
    generated_refs,
    is_text_file,
    is_url,
)
from hugginggpt.tools.threads import in_thread

__all__ = ["resolve_args", "resolve_inputs", "fill_text", "file_text"]



def _resolve_file(value: str, job: Job, store: ArtifactStore) -> Path:
    """A literal file argument: an attached file or a regular file inside the workspace,
    within the size limit (see :func:`hugginggpt.tools.inputs.resolve_input_file`)."""
    return resolve_input_file(value, store.workspace, job.files, job.max_file_bytes)


def resolve_args(job: Job, deps: dict[int, dict[str, Any]], store: ArtifactStore,
                 downloads: DownloadBudget | None = None) -> dict[str, Any]:
    """Turn plan arguments into tool arguments: text as ``str``, files as ``Path``; URL
    inputs are downloaded within ``downloads``, the run's budget.

    Raises:
        ArgumentError: an input cannot be resolved (said why).
        LimitExceededError: the run's download budget is spent.
        TransientToolError: a download failed in a way that may pass.
    """
    task_type = get_task_type(job.task)
    assert task_type is not None, "validated plans name known task types"
    resolved: dict[str, Any] = {}
    for name, value in job.args.items():
        arg = task_type.arg(name)
        kind = str(arg.kind) if arg else "param"
        ref = generated_ref(value)
        if ref is not None:
            if ref not in deps:
                raise ArgumentError(f"argument {name!r} refers to subtask {ref}, which is not "
                                    "among this subtask's dependencies")
            source = deps[ref]
            source_type = get_task_type(source["task"])
            output = source_type.output_for(kind) if source_type else None
            if output is None or output.name not in source["outputs"]:
                raise ArgumentError(f"subtask {ref} produced no {kind} output for {name!r}")
            produced = source["outputs"][output.name]
            if is_artifact_ref(produced):
                path = store.resolve(produced)
                resolved[name] = _read_text(path, ref) if kind == "text" else path
            elif kind in FILE_KINDS:
                raise ArgumentError(f"subtask {ref} gave no {kind} file for {name!r}, only "
                                    f"a {type(produced).__name__}")
            else:
                resolved[name] = as_text(produced) if kind == "text" else produced
        elif generated_refs(value):
            if kind != "text":  # validated plans embed references in text arguments only
                raise ArgumentError(f"argument {name!r} ({kind}) embeds a <GENERATED>-k "
                                    "reference in other text; only a text argument can")
            resolved[name] = fill_text(name, value, deps, store)
        elif kind in FILE_KINDS:
            if is_url(value):
                fetched = fetch_url(value, kind, store, FetchLimits(**job.fetch), downloads)
                resolved[name] = store.resolve(fetched)
            else:
                resolved[name] = _resolve_file(value, job, store)
        elif kind == "text" and is_text_file(value):
            resolved[name] = file_text(value, _resolve_file(value, job, store))
        else:
            resolved[name] = value
    return resolved


def file_text(value: str, path: Path, max_chars: int = MAX_ARG_CHARS) -> str:
    """The text of the file a text argument names (``"text": "notes.txt"``): what the
    user attached is what a text task works on, not its name. UTF-8 (a byte-order mark
    dropped), at most ``max_chars`` characters, the limit a plan's own text has.

    Raises:
        ArgumentError: the file is too long, or is not UTF-8 text (said where).
    """
    size = path.stat().st_size
    if size > 4 * max_chars:  # no UTF-8 text of that many bytes fits: refused unread
        raise ArgumentError(
            f"{value!r} is {size:,} bytes, more text than a text argument holds "
            f"({max_chars:,} characters): split the file, or attach the part to work on")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArgumentError(
            f"{value!r} is not UTF-8 text (byte {exc.start} cannot be decoded): save it "
            "as UTF-8, or attach a text file") from None
    if len(text) > max_chars:
        raise ArgumentError(
            f"{value!r} holds {len(text):,} characters, over the limit of {max_chars:,} "
            "for a text argument: split the file, or attach the part to work on")
    if not text.strip():
        raise ArgumentError(f"{value!r} is empty: attach a file with the text to work on")
    return text


def fill_text(name: str, value: str, deps: dict[int, dict[str, Any]], store: ArtifactStore,
              max_chars: int = MAX_ARG_CHARS) -> str:
    """The text argument ``value`` with each ``<GENERATED>-k`` replaced, where it stands,
    by the text form of subtask k's output (text as it is, labels as "dog (0.97), ...",
    a number with three decimals: :func:`~hugginggpt.tools.kinds.as_text`).

    Raises:
        ArgumentError: a reference names no dependency or an output with no text form,
            or the filled-in text is longer than ``max_chars`` (the limit a plan's own
            argument values have: outputs cannot smuggle in more).
    """
    texts = {ref: _text_output(name, ref, deps, store) for ref in generated_refs(value)}
    length = len(value) + sum(len(texts[int(match.group(1))]) - len(match.group(0))
                              for match in REF_RE.finditer(value))  # before it is built
    if length > max_chars:
        sizes = ", ".join(f"<GENERATED>-{ref}: {len(text)}" for ref, text in texts.items())
        raise ArgumentError(
            f"argument {name!r} is {length} characters long once its references are "
            f"filled in ({sizes}), over the limit of {max_chars}: summarise the long "
            "outputs first")
    return fill_refs(value, texts.__getitem__)


def _text_output(name: str, ref: int, deps: dict[int, dict[str, Any]],
                 store: ArtifactStore) -> str:
    if ref not in deps:
        raise ArgumentError(f"argument {name!r} refers to subtask {ref}, which is not among "
                            "this subtask's dependencies")
    source = deps[ref]
    source_type = get_task_type(source["task"])
    output = source_type.output_for("text") if source_type else None
    if output is None or output.name not in source["outputs"]:
        raise ArgumentError(f"subtask {ref} produced no output with a text form for {name!r}")
    produced = source["outputs"][output.name]
    if is_artifact_ref(produced):
        return _read_text(store.resolve(produced), ref)
    return as_text(produced)


def _read_text(path: Path, source: int) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentError(f"the text output of subtask {source} cannot be read from "
                            f"{path.name}: {exc}") from exc


async def resolve_inputs(job: Job, deps: dict[int, dict[str, Any]],
                          store: ArtifactStore) -> dict[str, Any]:
    """:func:`resolve_args` in a thread, retrying transient download failures, within
    the run's deadline.

    Raises:
        ArgumentError, LimitExceededError, TransientToolError (its retries spent).
    """
    downloads = Board.get(job.board).downloads
    attempt = 0
    while True:
        try:
            async with asyncio.timeout(finite(remaining_s(job))) as limit:
                return await in_thread(resolve_args, job, deps, store, downloads)
        except TimeoutError as exc:
            if limit.expired():
                raise run_time_limit(job, "while its inputs were being resolved") from exc
            raise
        except TransientToolError:
            delay = job.backoff_s * 2**attempt
            if attempt == job.retries or delay >= remaining_s(job):
                raise
        await asyncio.sleep(delay)
        attempt += 1


