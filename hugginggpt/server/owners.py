"""Whose a thread is: the identity the server's authentication gave a request, and the
owner stamped on the thread's metadata by the auth handlers."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from hugginggpt.server.auth import OWNER, is_open

__all__ = ["identity", "owned_thread"]


def identity(request: Request) -> str | None:
    """The caller's identity, as the server's authentication set it."""
    user = request.scope.get("user")
    name = getattr(user, "identity", None) or getattr(user, "display_name", None)
    return str(name) if name else None


async def owned_thread(request: Request, thread_id: str) -> dict[str, Any] | None:
    """The thread, when the caller owns it (a thread with no owner, made before the
    server had its auth handler, belongs to every caller of an open dev server)."""
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import NotFoundError

    who = identity(request)
    if who is None:
        return None
    try:
        thread = await get_client().threads.get(thread_id)
    except NotFoundError:
        return None
    owner = (thread.get("metadata") or {}).get(OWNER)
    if owner == who or (owner is None and is_open()):
        return dict(thread)
    return None
