"""Faults the simulated experts can inject, to prove that every failure is explained.

A :class:`FaultSpec` comes from a run's ``dry_run_faults`` setting (or
``HUGGINGGPT_DRY_RUN_FAULTS`` as JSON) and says, per call of a simulated expert, which
fault to inject:

- ``rates``: kind -> probability per call (their sum at most 1), e.g.
  ``{"transient": 0.1, "hang": 0.05}``;
- ``script``: subtask id -> the kinds of its successive calls (``"ok"`` for none),
  e.g. ``{"0": ["transient", "ok"]}``: the first call of subtask 0 fails transiently, the
  retry succeeds; calls past the end of a script fall back to the rates;
- ``seed``: with a seed, the choice is a function of (seed, thread, subtask, call), so a
  run can be replayed; without one it is random;
- ``hang_s``: how long ``hang`` and ``block`` last (make it longer than the subtask
  timeout).

The kinds, and what a faulty expert does:

==============  ====================================================================
transient       raises :class:`~hugginggpt.tools.errors.TransientToolError` (retried)
permanent       raises :class:`~hugginggpt.tools.errors.ToolExecutionError` (next model)
crash           raises a ``RuntimeError`` with no message (a bug in a plugin)
hang            awaits for ``hang_s`` (a remote call that does not answer), then answers
block           blocks a pool thread for ``hang_s`` (inference that cannot be
                interrupted), then answers
empty           returns nothing: ``None``, or an empty dict of outputs
malformed       returns broken values: bytes for text, labels without a label, NaN,
                a vector of strings, an empty file
wrong_type      returns plausible values of the wrong type: an int for text, a dict
                that looks like a file reference, a string for a number, a file of
                another kind
missing_file    returns a reference to an artifact that does not exist
==============  ====================================================================
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError, TransientToolError
from hugginggpt.tools.experts.registry import ToolContext
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.kinds import FILE_KINDS
from hugginggpt.tools.threads import in_thread

__all__ = ["FAULT_KINDS", "FaultSpec", "fault_spec", "spoil", "raise_or_wait"]

FAULT_KINDS: tuple[str, ...] = (
    "transient", "permanent", "crash", "hang", "block",
    "empty", "malformed", "wrong_type", "missing_file",
)
RAISING = frozenset({"transient", "permanent", "crash"})
WAITING = frozenset({"hang", "block"})
RETURNING = frozenset({"empty", "malformed", "wrong_type", "missing_file"})


@dataclass(frozen=True)
class FaultSpec:
    """Which faults to inject, per call (see the module's docstring)."""

    rates: Mapping[str, float] = field(default_factory=dict)
    script: Mapping[int, Sequence[str]] = field(default_factory=dict)
    seed: int | None = None
    hang_s: float = 30.0

    @classmethod
    def parse(cls, data: Mapping[str, Any] | None) -> FaultSpec | None:
        """The spec from a run setting; None when there is none.

        Raises:
            ValueError: an unknown key or fault kind, or rates that are not
                probabilities; the message says what is allowed.
        """
        if not data:
            return None
        unknown = set(data) - {"rates", "script", "seed", "hang_s"}
        if unknown:
            raise ValueError(f"dry_run_faults: unknown keys {sorted(unknown)} "
                             "(known: rates, script, seed, hang_s)")
        rates = {str(k): float(v) for k, v in dict(data.get("rates") or {}).items()}
        script = {int(k): [str(kind) for kind in v]
                  for k, v in dict(data.get("script") or {}).items()}
        kinds = set(rates) | {kind for kinds in script.values() for kind in kinds} - {"ok"}
        if bad := sorted(kinds - set(FAULT_KINDS)):
            raise ValueError(f"dry_run_faults: unknown fault kinds {bad} "
                             f"(known: {', '.join(FAULT_KINDS)}, and 'ok' in scripts)")
        if any(r < 0 for r in rates.values()) or sum(rates.values()) > 1 + 1e-9:
            raise ValueError("dry_run_faults: rates are probabilities per call, each at "
                             f"least 0 and together at most 1; got {rates}")
        seed = data.get("seed")
        return cls(rates=rates, script=script, seed=None if seed is None else int(seed),
                   hang_s=float(data.get("hang_s", 30.0)))

    def choose(self, ctx: ToolContext) -> str | None:
        """The fault for this call (None: behave), from the script, else the rates."""
        call = int(ctx.extra.get("call", 0))
        scripted = self.script.get(ctx.subtask_id)
        if scripted is not None and call < len(scripted):
            return None if scripted[call] == "ok" else scripted[call]
        if not self.rates:
            return None
        if self.seed is None:
            draw = random.random()
        else:
            key = f"{self.seed}:{ctx.artifacts.folder.name}:{ctx.subtask_id}:{ctx.model}:{call}"
            draw = random.Random(key).random()
        for kind, rate in self.rates.items():
            if draw < rate:
                return kind
            draw -= rate
        return None


async def raise_or_wait(kind: str, ctx: ToolContext, hang_s: float) -> None:
    """Inject a raising or waiting fault; waiting faults return afterwards."""
    where = f"subtask {ctx.subtask_id}, {ctx.model}, call {int(ctx.extra.get('call', 0)) + 1}"
    if kind == "transient":
        raise TransientToolError(f"injected transient fault ({where})")
    if kind == "permanent":
        raise ToolExecutionError(f"injected permanent fault ({where})")
    if kind == "crash":
        raise RuntimeError()
    if kind == "hang":
        await asyncio.sleep(hang_s)
    elif kind == "block":
        await in_thread(time.sleep, hang_s)


def _bad_value(fault: str, kind: str, ctx: ToolContext, rng: random.Random) -> Any:
    """One output of ``kind`` spoiled by ``fault``."""
    missing = {"artifact_id": "0" * 16, "kind": kind, "bytes": 64,
               "path": f"artifacts/{ctx.artifacts.folder.name}/{'0' * 16}.bin"}
    if fault == "missing_file":
        return missing
    if fault == "empty":  # one output missing
        return None
    if fault == "malformed":
        if kind in FILE_KINDS:  # an empty file
            _, path = ctx.artifacts.new_path(".bin")
            path.write_bytes(b"")
            return path
        broken: dict[str, list[Any]] = {
            "text": [b"\xff\xfe\x00garbage", ["not", "a", "text"]],
            "labels": [[{"lbl": "x", "score": 0.5}], [{"label": "x", "score": "high"}], [1, 2]],
            "number": [float("nan"), float("inf")],
            "vector": [["a", "b"], [], [1.0, float("nan")]],
        }
        return rng.choice(broken.get(kind, [object()]))
    # wrong_type: plausible values of another type
    if kind in FILE_KINDS:
        variant = rng.randrange(3)
        if variant == 0:  # looks like a reference, is not one
            return {"path": f"output.{kind}", "kind": kind}
        if variant == 1:  # a file of another kind
            other = "audio" if kind == "image" else "image"
            return ctx.artifacts.put_bytes(b"not this kind", other, ".bin")
        return f"[dry-run] a description of the {kind} instead of the file"
    wrong: dict[str, list[Any]] = {
        "text": [42, {"text": "nested"}, 0.5],
        "labels": ["POSITIVE", {"label": "POSITIVE", "score": 0.9}],
        "number": ["0.5", True, [0.5]],
        "vector": [{"values": [0.1, 0.2]}, "0.1 0.2", 0.1],
    }
    return rng.choice(wrong.get(kind, [object()]))


def spoil(fault: str, outputs: dict[str, Any], ctx: ToolContext) -> Any:
    """What a faulty expert returns instead of ``outputs``: nothing (``empty``), or the
    outputs with one of them (chosen at random among several) spoiled by the fault."""
    task_type = get_task_type(ctx.task)
    if task_type is None:
        raise ValueError(f"unknown task type {ctx.task!r}")
    rng = random.Random(f"{ctx.artifacts.folder.name}:{ctx.subtask_id}:{ctx.extra.get('call')}")
    if fault == "empty" and len(task_type.outputs) == 1:
        return rng.choice([None, {}])
    target = rng.choice(task_type.outputs)
    return {**outputs, target.name: _bad_value(fault, target.kind, ctx, rng)}


def fault_spec(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """The faults setting as given, once :meth:`FaultSpec.parse` accepts it (the setting's
    check: the ValueError says what is allowed)."""
    FaultSpec.parse(data)
    return data
