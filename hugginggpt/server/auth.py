"""Who may call the served graph, and what they may see and set (``auth.path`` in
``langgraph.json``).

- **API keys** come from the deployment's environment: ``HUGGINGGPT_API_KEYS`` is a
  comma-separated list of ``NAME=KEY`` (the name is the caller's identity, the owner of
  what they create). A caller sends ``Authorization: Bearer KEY`` (what the OpenAI
  clients send) or ``x-api-key: KEY`` (what ``langgraph_sdk`` sends).
- **Open dev mode**: with no keys set, only a caller on the loopback address is let in,
  as ``local``; anyone else is told to set keys. (``langgraph dev`` also lets LangGraph
  Studio in through its own local scheme; see docs/security.md.)
- **Owners**: threads, runs and crons are stamped with their creator's identity and
  filtered by it, so a caller sees only their own (another's thread is "not found").
  Assistants are the deployment's: readable by every caller, changed by none.
- **Deployment-only settings**: a run's ``context`` may hold only the caller's settings
  (:func:`hugginggpt.graph.callers.caller_settings`); one that sets ``workspace``,
  ``catalog``, an LLM endpoint or a test knob is refused with 403, naming them. (The
  served graph's :class:`~hugginggpt.graph.callers.ServedContext` refuses them too.)
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from langgraph_sdk import Auth

from hugginggpt.graph.callers import deployment_only, pinned_by_deployment
from hugginggpt.tools.env import env

__all__ = ["auth", "api_keys", "LOCAL_USER", "OWNER", "identity_of_key", "is_open"]

auth = Auth()
LOCAL_USER = "local"
"""The identity of a loopback caller of a server without API keys."""
OWNER = "owner"
"""The metadata key that holds a thread's (run's, cron's) owner."""
_FORWARDED = (b"x-forwarded-for", b"forwarded", b"x-real-ip")


def api_keys() -> dict[str, str]:
    """The deployment's keys, key -> identity (``HUGGINGGPT_API_KEYS``).

    Raises:
        Auth.exceptions.HTTPException: a malformed entry (500: the deployment's fault).
    """
    keys: dict[str, str] = {}
    for entry in (env("HUGGINGGPT_API_KEYS") or "").split(","):
        if not entry.strip():
            continue
        name, sep, key = entry.strip().partition("=")
        if not sep or not name.strip() or len(key.strip()) < 16:
            raise Auth.exceptions.HTTPException(
                status_code=500, detail="HUGGINGGPT_API_KEYS is malformed: give NAME=KEY "
                "pairs separated by commas, each key at least 16 characters")
        keys[key.strip()] = name.strip()
    return keys


def is_open() -> bool:
    """Whether the server runs in the open dev mode (no API keys set)."""
    return not api_keys()


def identity_of_key(given: str | None) -> str | None:
    """The identity whose key ``given`` is (compared in constant time), else None."""
    if not given:
        return None
    found = None
    for key, name in api_keys().items():
        if hmac.compare_digest(key.encode(), given.encode()):
            found = name
    return found


def _header(headers: dict[Any, Any], name: bytes) -> str | None:
    value = headers.get(name, headers.get(name.decode()))
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _loopback(scope: dict[str, Any]) -> bool:
    client = scope.get("client")
    if not client:
        return False
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return False


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes],
                       scope: dict[str, Any]) -> Auth.types.MinimalUserDict:
    """The caller's identity from their API key; ``local`` for a loopback caller when
    the deployment set no keys."""
    bearer = _header(headers, b"authorization")
    given = _header(headers, b"x-api-key") or (
        bearer[7:].strip() if bearer and bearer[:7].lower() == "bearer " else None)
    if not is_open():
        if given is None:
            raise Auth.exceptions.HTTPException(
                status_code=401, detail="this server needs an API key: send "
                "'Authorization: Bearer KEY' or 'x-api-key: KEY'")
        if (identity := identity_of_key(given)) is None:
            raise Auth.exceptions.HTTPException(status_code=401,
                                                detail="the API key is not valid")
        return {"identity": identity, "permissions": []}
    if _loopback(scope) and not any(_header(headers, h) for h in _FORWARDED):
        return {"identity": LOCAL_USER, "permissions": []}
    raise Auth.exceptions.HTTPException(
        status_code=403, detail="this server has no API keys and is open only to callers "
        "on its own machine: set HUGGINGGPT_API_KEYS=NAME=KEY,... in its environment")


def _refuse_pinned(context: Any) -> None:
    if isinstance(context, dict) and (pinned := pinned_by_deployment(context)):
        raise Auth.exceptions.HTTPException(status_code=403, detail="; ".join(
            f"{name}: {deployment_only(name)}" for name in pinned))


@auth.on.threads.create_run
async def on_run(ctx: Auth.types.AuthContext,
                 value: Auth.types.RunsCreate) -> Auth.types.FilterType:
    """A run: refused when its context sets a deployment's setting; else its owner."""
    kwargs = value.get("kwargs") or {}
    _refuse_pinned(kwargs.get("context"))
    config = kwargs.get("config") or {}
    _refuse_pinned(config.get("context") if isinstance(config, dict) else None)
    return await _owned(ctx, value)


@auth.on.assistants
async def on_assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Assistants are the deployment's: every caller reads them, none changes them."""
    if ctx.action in ("read", "search"):
        return None
    raise Auth.exceptions.HTTPException(
        status_code=403, detail="assistants are the deployment's: configure them in its "
        "langgraph.json; a run's own settings go in its context")


@auth.on.store
async def on_store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """The store: each caller's own namespace (its first part is their identity)."""
    namespace = tuple(value.get("namespace") or ())
    if not namespace or namespace[0] != ctx.user.identity:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="store namespaces start with your identity")


@auth.on
async def _owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Threads, runs and crons: stamped with their creator, visible to them only."""
    if isinstance(value, dict):
        metadata = value.setdefault("metadata", {})
        if isinstance(metadata, dict):
            metadata[OWNER] = ctx.user.identity
    return {OWNER: ctx.user.identity}
