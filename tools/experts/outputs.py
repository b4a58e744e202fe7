"""Checking what a tool returned against its task type's declared outputs.

A tool returns its task's primary output or a dict of named outputs. Every declared
output must be there, of its kind and JSON-able (state is checkpointed): text and
numbers stay inline, files, vectors and long texts become artifact references (a
recording's with its length in ``seconds``). Anything else fails the attempt with a
:class:`~hugginggpt.tools.errors.ToolOutputError` that names the output, like an
exception would.
"""

from __future__ import annotations

import json
import math
import numbers
import reprlib
from pathlib import Path
from typing import Any

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.audio import duration_s
from hugginggpt.tools.errors import ArgumentError, ToolOutputError
from hugginggpt.tools.experts.tasks import TaskType
from hugginggpt.tools.kinds import FILE_KINDS

__all__ = ["normalize_outputs", "MAX_INLINE_TEXT"]

_LABEL_KEYS = ("label", "word", "entity", "entity_group")
MAX_INLINE_TEXT = 4000
"""Longer text outputs are stored as artifacts (state keeps a preview)."""


def _shown(value: Any) -> str:
    """A value's type and the start of its repr, for error messages."""
    try:
        text = reprlib.repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        text = "<unprintable>"
    return f"{type(value).__name__} {text}"


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _checked_ref(kind: str, ref: dict[str, Any], artifacts: ArtifactStore) -> dict[str, Any]:
    if ref.get("kind") != kind:
        raise ToolOutputError(f"expected a {kind} artifact, got a reference to a "
                              f"{ref.get('kind')} artifact ({ref.get('path')})")
    try:
        path = artifacts.resolve(ref)
    except (ArgumentError, KeyError, TypeError, ValueError) as exc:
        raise ToolOutputError(f"the {kind} artifact it names is unusable: {exc}") from exc
    if path.stat().st_size == 0:
        raise ToolOutputError(f"the {kind} artifact {ref['path']} is an empty file")
    return _with_length(ref, path)


def _with_length(ref: dict[str, Any], path: Path) -> dict[str, Any]:
    """An audio reference with the recording's length (``seconds``), when readable."""
    if ref.get("kind") != "audio" or "seconds" in ref:
        return ref
    seconds = duration_s(path)
    return ref if seconds is None else {**ref, "seconds": seconds}


def _a(kind: str) -> str:
    """A kind with its article: "an image", "a number", "labels"."""
    if kind == "labels":
        return "labels"
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def _coerce(kind: str, value: Any, artifacts: ArtifactStore) -> Any:
    """One output value checked against its declared kind and put in the form state
    keeps: text and numbers inline, everything bulky or binary as an artifact reference.

    Raises:
        ToolOutputError: the value is missing, empty, of the wrong type, malformed, or
            names a file that is not there.
    """
    if value is None:
        raise ToolOutputError(f"expected {_a(kind)}, got nothing (None)")
    if is_artifact_ref(value):
        return _checked_ref(kind, value, artifacts)
    if kind in FILE_KINDS:
        if not isinstance(value, (str, Path)):
            raise ToolOutputError(f"expected {_a(kind)} file path, got {_shown(value)}")
        path = Path(value)
        if not path.is_file():
            raise ToolOutputError(f"expected {_a(kind)} file path, got {_shown(value)}, "
                                  "which is not a file")
        path = path.resolve()
        if not path.is_relative_to(artifacts.workspace):
            raise ToolOutputError(
                f"the tool returned the file {str(value)!r:.80}, which is outside the "
                f"workspace {artifacts.workspace}: a tool writes its output files with "
                "ctx.artifacts.new_path(suffix)"
            )
        if path.stat().st_size == 0:
            raise ToolOutputError(f"the {kind} file {path.name} is empty")
        ref = artifacts.add_file(path, kind)
        return _with_length(ref, artifacts.workspace / ref["path"])
    if kind == "text":
        if not isinstance(value, str):
            raise ToolOutputError(f"expected text, got {_shown(value)}")
        if len(value) > MAX_INLINE_TEXT:
            return artifacts.put_bytes(value.encode(), "text", ".txt", preview=value[:200])
        return value
    if kind == "number":
        if not _real(value) or not math.isfinite(value):
            raise ToolOutputError(f"expected a finite number, got {_shown(value)}")
        return float(value)
    if kind == "vector":
        values = value.tolist() if hasattr(value, "tolist") else value
        if not isinstance(values, (list, tuple)) or not values:
            raise ToolOutputError(f"expected a non-empty vector of numbers, got {_shown(value)}")
        bad = next((v for v in values if not _real(v) or not math.isfinite(v)), None)
        if bad is not None:
            raise ToolOutputError(f"expected a vector of finite numbers, one is {_shown(bad)}")
        floats = [float(v) for v in values]
        return artifacts.put_json(floats, "vector", dims=len(floats))
    if kind == "labels":
        return _checked_labels(value)
    return value


def _checked_labels(value: Any) -> list[dict[str, Any]]:
    """Labels are a list of dicts, each naming its label (``label``, ``word``, ``entity``
    or ``entity_group``) with an optional score; scores become plain floats."""
    if not isinstance(value, list):
        raise ToolOutputError(f"expected a list of labels, got {_shown(value)}")
    labels = []
    for item in value:
        if not isinstance(item, dict) or not any(
            isinstance(item.get(key), str) for key in _LABEL_KEYS
        ):
            raise ToolOutputError(
                f"expected labels as {{'label': str, 'score': number}}, got {_shown(item)}")
        score = item.get("score")
        if score is not None and (not _real(score) or not math.isfinite(score)):
            raise ToolOutputError(f"label {item!r:.80} has a score that is not a finite number")
        labels.append(item if score is None else {**item, "score": float(score)})
    return labels


def normalize_outputs(
    task_type: TaskType, value: Any, artifacts: ArtifactStore
) -> dict[str, Any]:
    """Check what a tool returned against the task type's declared outputs and turn it
    into ``{output name: value or artifact ref}``.

    A tool returns its primary output, or a dict of its named outputs; every declared
    output must be there, of its kind, and JSON-able (state is checkpointed). An empty
    string is a text (a model may have nothing to say); nothing at all is an error.

    Raises:
        ToolOutputError: an output is missing, of the wrong type or malformed; the message
            names the output and what was expected.
    """
    names = [o.name for o in task_type.outputs]
    if value is None or (isinstance(value, dict) and not value):
        raise ToolOutputError(f"{task_type.name} returned no output ({_shown(value)})")
    if isinstance(value, dict) and set(value) <= set(names) \
            and not is_artifact_ref(value):
        raw = value
    elif len(names) > 1:
        raise ToolOutputError(
            f"{task_type.name} returns a dict of its outputs ({', '.join(names)}), "
            f"got {_shown(value)}")
    else:
        raw = {names[0]: value}
    outputs: dict[str, Any] = {}
    for output in task_type.outputs:
        if output.name not in raw:
            raise ToolOutputError(
                f"{task_type.name} output {output.name!r} ({output.kind}) is missing")
        try:
            outputs[output.name] = _coerce(output.kind, raw[output.name], artifacts)
        except ToolOutputError as exc:
            raise ToolOutputError(f"{task_type.name} output {output.name!r}: {exc}") from exc
    try:
        json.dumps(outputs, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolOutputError(
            f"{task_type.name} outputs cannot be saved as JSON: {exc}") from exc
    return outputs
