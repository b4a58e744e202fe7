"""The ``ray`` backend's calls: a subtask sent to the expert tier, its outputs written
into the run's artifact store, and what the tier says about its models.

The tier is reached over HTTP (``url``), or, from a worker inside the Ray cluster, through
a ``DeploymentHandle`` (``ray_address``, :mod:`.handle`; it wins when both are set). Its
address and file rules are the run's settings (``backend_settings("ray")``: ``url``,
``ray_address``, ``shared_dir``, ``inline_max_mb``); its HTTP key is a secret, read from
``HUGGINGGPT_EXPERTS_KEY`` only here, where the request is built. A tier that does not
answer, or says a retry may pass (a replica that died mid-call, a model still loading),
raises :class:`TransientToolError`, which the executor retries before it falls back.
"""

from __future__ import annotations

import functools
import ssl
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggpt.tools.env import env
from hugginggpt.tools.errors import ToolExecutionError, TransientToolError
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.ray import handle
from hugginggpt.tools.experts.ray.wire import (
    KEY_HEADER,
    decode_outputs,
    encode_inputs,
    raise_error,
)
from hugginggpt.tools.experts.registry import ToolContext, backend_settings
from hugginggpt.tools.experts.tasks import get_task_type

if TYPE_CHECKING:
    import httpx  # imported where a call is made: the command starts without it

__all__ = ["RAY_BACKEND", "KEY_VARIABLE", "call_tier", "model_status", "NO_TIER"]

RAY_BACKEND = "ray"
KEY_VARIABLE = "HUGGINGGPT_EXPERTS_KEY"
NO_TIER = "no expert tier is set (experts_url or ray_address)"
STATUS_TTL_S = 10.0
"""How long the tier's word on a model is kept: selection asks once for the task's
models, and a call updates the word on the model it ran (warm) without asking."""
CALL_TIMEOUT_S = 3600.0
"""The HTTP client's own bound; the subtask's timeout cancels the call well before."""


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS settings, made once: a client made without them builds its own
    (it reads the CA bundle), which costs more than a call to a warm tier."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _headers() -> dict[str, str]:
    key = env(KEY_VARIABLE)
    return {KEY_HEADER: key} if key else {}


def _url() -> str | None:
    url = backend_settings(RAY_BACKEND).get("url")
    return str(url).rstrip("/") if url else None


def _address() -> str | None:
    """The Ray cluster to join for a handle to the tier (None: the tier is reached over
    HTTP, when at all)."""
    address = backend_settings(RAY_BACKEND).get("ray_address")
    return str(address) if address else None


def _tier() -> str | None:
    """Where the tier is: its Ray address, else its URL."""
    return _address() or _url()


def _unreachable(url: str, exc: httpx.HTTPError) -> TransientToolError:
    return TransientToolError(f"the expert tier at {url} is not answering "
                              f"({type(exc).__name__})")


async def call_tier(task: str, model: str, args: dict[str, Any], context: ToolContext
                    ) -> dict[str, Any]:
    """Run ``model`` for ``task`` on the tier; its outputs, with artifacts written into
    the run's store, and ``context.extra["replica"]`` set to where it ran.

    Raises:
        TransientToolError: the tier did not answer, or said a retry may pass.
        ToolExecutionError: the tier is not set, refused the key, or the model failed
            (:class:`NotInstalledError`: a Ray address, and no Ray here).
    """
    settings, task_type = backend_settings(RAY_BACKEND), get_task_type(task)
    if _tier() is None or task_type is None:
        raise ToolExecutionError(NO_TIER if task_type else f"unknown task type {task}")
    shared = settings.get("shared_dir")
    plain, files = encode_inputs(
        task_type, args, shared_dir=Path(shared) if shared else None,
        inline_max_bytes=int(float(settings.get("inline_max_mb", 1.0)) * 2**20))
    body = {"task": task, "model": model, "args": plain, "files": files,
            "subtask": context.subtask_id}
    if (address := _address()) is not None:
        reply = await handle.run(address, body)
    else:
        reply = await _post_run(str(_url()), body)
    _now_warm(str(_tier()), task, model)
    context.extra["replica"] = {k: reply.get(k) for k in ("replica", "pid", "load_s", "warm",
                                                      "run_s")}
    if reply.get("confidence"):
        from hugginggpt.tools.experts.confidence import Confidence

        context.confidence = Confidence.model_validate(reply["confidence"])
    return decode_outputs(reply["outputs"], context.artifacts)


async def _post_run(url: str, body: dict[str, Any]) -> dict[str, Any]:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=CALL_TIMEOUT_S, trust_env=False,
                                     verify=_tls()) as client:
            response = await client.post(f"{url}/run", json=body, headers=_headers())
    except httpx.HTTPError as exc:
        raise _unreachable(url, exc) from exc
    reply = _json(response)
    if response.status_code != 200 or "error" in reply:
        raise_error(reply, f"the expert tier answered {response.status_code}")
    return reply


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        document = response.json()
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


_STATUS: dict[tuple[str, str, str], tuple[float, dict[str, Any]]] = {}
"""(tier, task, model) -> when the tier said it, and what it said of the model."""
_STATUS_LOCK = threading.Lock()


def _forget_status() -> None:
    with _STATUS_LOCK:
        _STATUS.clear()


def _now_warm(url: str, task: str, model: str) -> None:
    """A call just ran ``model``: it is warm now, with no need to ask. (A model the call
    evicted reads warm until its kept word expires: warm only orders near equals.)"""
    with _STATUS_LOCK:
        _STATUS[(url, task, model)] = (time.monotonic(), {"reason": None, "warm": True})


def model_status(task: str, model: str) -> dict[str, Any]:
    """What the tier says of ``model`` for ``task``: ``reason`` (why it cannot run there,
    None when it can) and ``warm`` (a replica holds it). Asked for ``model`` and all the
    catalog's models of the task at once, and kept :data:`STATUS_TTL_S`."""
    tier = _tier()
    if tier is None:
        return {"reason": NO_TIER, "warm": False}
    with _STATUS_LOCK:
        kept = _STATUS.get((tier, task, model))
        if kept is None or time.monotonic() - kept[0] > STATUS_TTL_S:
            now = time.monotonic()
            for name, said in _ask_status(task, model).items():
                _STATUS[(tier, task, name)] = (now, said)
            kept = _STATUS[(tier, task, model)]
    return kept[1]


def _ask_status(task: str, model: str) -> dict[str, dict[str, Any]]:
    catalog = backend_settings(RAY_BACKEND).get("catalog") or DEFAULT_CATALOG
    models = list(dict.fromkeys([model, *(c.id for c in load_catalog(catalog).for_task(task))]))
    asked = {"task": task, "models": models}
    if (address := _address()) is not None:
        found = handle.status(address, asked)
        if "reason" in found:  # the tier itself could not be asked
            return dict.fromkeys(models, found)
        return _words(models, found.get("models", {}))
    url = str(_url())
    import httpx

    try:
        response = httpx.post(f"{url}/status", json=asked, headers=_headers(), timeout=5.0,
                              trust_env=False, verify=_tls())
    except httpx.HTTPError as exc:
        return dict.fromkeys(models, {"reason": str(_unreachable(url, exc)), "warm": False})
    if response.status_code != 200:
        message = (_json(response).get("error") or {}).get("message")
        return dict.fromkeys(models, {
            "reason": message or f"the expert tier answered {response.status_code}",
            "warm": False})
    return _words(models, _json(response).get("models", {}))


def _words(models: list[str], said: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tier's word on each of ``models``, its reasons said as the tier's."""
    words = {}
    for name in models:
        word = said.get(name)
        if not isinstance(word, dict):
            word = {"reason": "it does not say"}
        reason = word.get("reason")
        words[name] = {"reason": reason and f"on the expert tier: {reason}",
                       "warm": bool(word.get("warm"))}
    return words
