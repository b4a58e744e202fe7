"""The ``ray`` backend: subtasks run on the expert tier, a Ray Serve application of the
local backend's adapters shared by every graph worker (``hugginggpt experts serve``).

It offers the task types the local backend runs, for the catalog's models; whether a
model can run, and whether a replica already holds it (warm: it ranks first among near
equals), is the tier's word (:func:`.client.model_status`). Each result names the replica
that ran it, the model's load time there (0 when it was warm) and the call's time. The
graph worker needs nothing beyond the core (the calls are HTTP, through httpx: no Ray, no
torch); the tier needs the ``ray`` and ``local`` extras.

:mod:`.client` makes the calls, :mod:`.wire` says what travels, :mod:`.config` reads the
tier's settings, :mod:`.loopback` starts a local Ray that stays on 127.0.0.1, and
:mod:`.tier` is the Serve application (the only module that imports Ray).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hugginggpt.tools.experts.local.models import ADAPTERS
from hugginggpt.tools.experts.ray.client import KEY_VARIABLE, RAY_BACKEND, call_tier, model_status
from hugginggpt.tools.experts.registry import ToolContext, register_tool

__all__ = ["RAY_BACKEND", "KEY_VARIABLE", "is_warm", "unavailable_reason"]


def unavailable_reason(task: str, model: str) -> str | None:
    """Why ``model`` cannot run ``task`` on the tier now (None: it can)."""
    return model_status(task, model).get("reason")


def is_warm(task: str, model: str) -> bool:
    """Whether a replica of the tier holds ``model`` for ``task`` now."""
    return bool(model_status(task, model).get("warm"))


def _tool(task: str) -> Callable[..., Any]:
    async def on_tier(model: str, context: ToolContext, **args: Any) -> dict[str, Any]:
        return await call_tier(task, model, args, context)

    on_tier.__name__ = on_tier.__qualname__ = f"ray:{task}"
    on_tier.__doc__ = f"{task} on the expert tier (Ray Serve)."
    return on_tier


for _task, _adapter in ADAPTERS.items():
    register_tool(_tool(_task), _task, backend=RAY_BACKEND,
                  unavailable=functools.partial(unavailable_reason, _task),
                  warm=functools.partial(is_warm, _task),
                  deterministic=_adapter.deterministic)
