"""What travels between a graph worker and the expert tier, as JSON over HTTP.

A request names the task type, the model and the arguments. A file argument travels as
its bytes (base64) when it is small (at most ``inline_max_bytes``), or, when both sides
see a shared folder, as the name of a copy of it there (``{"shared": NAME}``): content
addressed, so the same input is copied once. Outputs come back with their artifacts'
bytes; the worker writes them into the run's own artifact store, as a local tool's
would be. Errors come back as their type, message, fix and whether a retry may pass.
Both sides use this module; it imports neither Ray nor torch.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import (
    ArgumentError,
    Fix,
    HuggingGPTError,
    ToolExecutionError,
    TransientToolError,
)
from hugginggpt.tools.experts.tasks import TaskType
from hugginggpt.tools.kinds import FILE_KINDS

__all__ = ["KEY_HEADER", "encode_inputs", "decode_inputs", "encode_outputs", "decode_outputs",
           "error_document", "raise_error", "model_key", "split_key", "inline_size"]

KEY_HEADER = "x-hugginggpt-experts-key"
"""The header that carries the tier's shared key."""

_REF_FIELDS = ("artifact_id", "kind", "path", "bytes", "url")
"""A reference's fields that belong to the store that wrote it (the rest, such as an
audio's ``seconds``, travel with the bytes)."""


def model_key(task: str, model: str) -> str:
    """The multiplexed model id of ``model`` for ``task``: the tier loads per task type."""
    return f"{task}|{model}"


def split_key(key: str) -> tuple[str, str]:
    task, _, model = key.partition("|")
    if not task or not model:
        raise ArgumentError(f"{key!r} is not a task type and a model id ('TASK|MODEL')")
    return task, model


def _file_args(task_type: TaskType) -> list[str]:
    return [a.name for a in task_type.args if a.kind in FILE_KINDS]


def encode_inputs(task_type: TaskType, args: dict[str, Any], *, inline_max_bytes: int,
                  shared_dir: Path | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments as JSON: (plain arguments, file arguments). A file larger than
    ``inline_max_bytes`` is copied into ``shared_dir`` (when there is one) and named."""
    plain = {k: v for k, v in args.items() if k not in _file_args(task_type)}
    files: dict[str, Any] = {}
    for name in _file_args(task_type):
        if args.get(name) is None:
            continue
        path = Path(args[name])
        size = path.stat().st_size
        if shared_dir is not None and size > inline_max_bytes:
            files[name] = {"shared": _shared_copy(path, shared_dir)}
        else:
            files[name] = {"data": base64.b64encode(path.read_bytes()).decode(),
                           "suffix": path.suffix}
    return plain, files


def _shared_copy(path: Path, shared_dir: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    name = f"{digest}{path.suffix.lower()}"
    target = shared_dir / name
    if not target.exists():
        shared_dir.mkdir(parents=True, exist_ok=True)
        partial = shared_dir / f".new-{uuid.uuid4().hex}"
        shutil.copyfile(path, partial)
        os.replace(partial, target)
    return name


def inline_size(request: dict[str, Any]) -> int:
    """The size of the files a request carries inline, as they travel (base64)."""
    files = request.get("files")
    return sum(len(sent.get("data") or "") for sent in files.values()
               if isinstance(sent, dict)) if isinstance(files, dict) else 0


def decode_inputs(files: dict[str, Any], folder: Path, shared_dir: Path | None
                  ) -> dict[str, Path]:
    """The file arguments as paths: inline bytes written into ``folder``, shared names
    resolved inside ``shared_dir`` (a name that leads out of it is refused)."""
    paths: dict[str, Path] = {}
    for name, sent in files.items():
        if "data" in sent:
            suffix = str(sent.get("suffix", ""))[:16].replace("/", "")
            target = folder / f"{name}{suffix}"
            target.write_bytes(base64.b64decode(sent["data"], validate=True))
        elif shared_dir is not None and isinstance(sent.get("shared"), str):
            target = Path(os.path.realpath(shared_dir / sent["shared"]))
            if not target.is_relative_to(shared_dir.resolve()) or not target.is_file():
                raise ArgumentError(f"input {name!r} names no file of the shared folder")
        else:
            raise ArgumentError(f"input {name!r} came as a shared file, and the tier has "
                                "no shared folder: send it inline")
        paths[name] = target
    return paths


def encode_outputs(outputs: dict[str, Any], store: ArtifactStore) -> dict[str, Any]:
    """Checked outputs (artifact references into ``store``) with each artifact's bytes."""
    sent: dict[str, Any] = {}
    for name, value in outputs.items():
        if is_artifact_ref(value):
            path = store.resolve(value)
            sent[name] = {"artifact": {k: v for k, v in value.items() if k not in _REF_FIELDS},
                          "kind": value["kind"], "suffix": path.suffix,
                          "data": base64.b64encode(path.read_bytes()).decode()}
        else:
            sent[name] = value
    return sent


def decode_outputs(sent: dict[str, Any], store: ArtifactStore) -> dict[str, Any]:
    """The tier's outputs with their artifacts written into the run's ``store``."""
    outputs: dict[str, Any] = {}
    for name, value in sent.items():
        if isinstance(value, dict) and "artifact" in value and "data" in value:
            outputs[name] = store.put_bytes(base64.b64decode(value["data"]), value["kind"],
                                            value["suffix"], **value["artifact"])
        else:
            outputs[name] = value
    return outputs


def error_document(exc: BaseException, *, transient: bool | None = None) -> dict[str, Any]:
    """An error as the tier sends it."""
    fix = getattr(exc, "fix", None)
    return {"error": {"type": type(exc).__name__, "message": str(exc),
                      "transient": isinstance(exc, TransientToolError)
                      if transient is None else transient,
                      "fix": fix.model_dump(mode="json") if fix is not None else None}}


def raise_error(document: dict[str, Any], fallback: str) -> None:
    """Raise the error the tier sent (``fallback`` when its body says none)."""
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        raise TransientToolError(fallback)
    fix = Fix.model_validate(error["fix"]) if error.get("fix") else None
    kind: type[HuggingGPTError] = (TransientToolError if error.get("transient")
                                   else ArgumentError if error.get("type") == "ArgumentError"
                                   else ToolExecutionError)
    raise kind(str(error.get("message") or fallback), fix=fix)
