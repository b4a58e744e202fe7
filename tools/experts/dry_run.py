"""Simulated experts for ``--dry-run``: check a plan end to end without loading models.

Each simulated expert sleeps for its model's expected latency (times a scale) and returns
typed placeholders: text that says it is simulated, a real 8x8 PNG, a real silent WAV,
a small vector, labels. The files are valid, so downstream tools and viewers accept them.

With the run setting ``dry_run_faults`` they also misbehave on purpose: raise, hang,
return empty, malformed or wrongly typed outputs (see :mod:`hugginggpt.tools.experts.faults`).
"""

from __future__ import annotations

import asyncio
import io
import struct
import wave
import zlib
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.faults import RAISING, WAITING, FaultSpec, raise_or_wait, spoil
from hugginggpt.tools.experts.registry import ANY_TASK, ToolContext, backend_settings, register_tool
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.threads import in_thread

__all__ = ["DRY_RUN_BACKEND", "simulate"]

DRY_RUN_BACKEND = "dry-run"


def _png(width: int = 8, height: int = 8) -> bytes:
    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80\x80\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _wav(seconds: float = 0.25, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * int(seconds * rate))
    return buffer.getvalue()


def _placeholder(kind: str, ctx: ToolContext) -> Any:
    tag = f"[dry-run: {ctx.task} by {ctx.model}, subtask {ctx.subtask_id}]"
    if kind == "text":
        return f"{tag} simulated text"
    if kind == "image":
        return ctx.artifacts.put_bytes(_png(), "image", ".png", simulated=True)
    if kind == "audio":
        return ctx.artifacts.put_bytes(_wav(), "audio", ".wav", simulated=True)
    if kind == "video":
        return ctx.artifacts.put_bytes(tag.encode(), "video", ".txt", simulated=True)
    if kind == "table":
        return ctx.artifacts.put_bytes(b"column\nsimulated\n", "table", ".csv", simulated=True)
    if kind == "number":
        return 0.5
    if kind == "vector":
        return [0.0] * 8
    if kind == "labels":
        return [{"label": "SIMULATED", "score": 1.0}]
    return {"simulated": True}


def _placeholders(ctx: ToolContext) -> dict[str, Any]:
    task_type = get_task_type(ctx.task)
    if task_type is None:  # validated plans only name known task types
        raise ValueError(f"unknown task type {ctx.task!r}")
    return {o.name: _placeholder(o.kind, ctx) for o in task_type.outputs}


def _fault_spec() -> FaultSpec | None:
    try:
        return FaultSpec.parse(backend_settings(DRY_RUN_BACKEND).get("faults"))
    except (TypeError, ValueError) as exc:
        raise ToolExecutionError(str(exc)) from exc


async def simulate(ctx: ToolContext, **args: Any) -> dict[str, Any]:
    """Sleep for the model's expected latency and return typed placeholders, or inject
    the fault the run's ``dry_run_faults`` choose for this call."""
    spec = _fault_spec()
    fault = spec.choose(ctx) if spec is not None else None
    if spec is not None and fault in RAISING | WAITING:
        await raise_or_wait(fault, ctx, spec.hang_s)
    await asyncio.sleep(ctx.expected_latency_s * ctx.latency_scale)
    outputs = await in_thread(_placeholders, ctx)  # file writes off the event loop
    if fault is None or fault in WAITING:
        return outputs
    return await in_thread(spoil, fault, outputs, ctx)


def _deterministic() -> bool:
    """The placeholders depend on the task alone, so a dry run's results may be reused
    (the result cache); not when the run injects faults, which are drawn per call."""
    return not backend_settings(DRY_RUN_BACKEND).get("faults")


register_tool(simulate, ANY_TASK, backend=DRY_RUN_BACKEND, simulated=True, name="simulate",
              deterministic=_deterministic)
