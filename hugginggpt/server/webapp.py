"""The HTTP routes the LangGraph server mounts beside its own (``http.app`` in
``langgraph.json``, with the server's auth applied to them):

- ``GET /artifacts/{thread_id}/{file}``: a run's output file (or a file uploaded to the
  thread, ``uploads/<id>/<name>``), streamed with its content type, to the thread's owner
  only (anyone else gets 404, as for the thread itself);
- ``POST /v1/chat/completions`` and ``GET /v1/models``: the OpenAI chat API over the
  graph (:mod:`hugginggpt.server.openai_api`).

The routes reach the server's threads and runs through ``langgraph_sdk``'s in-process
client, which skips the auth handlers: each route checks the caller's ownership itself,
against the identity the server's authentication gave the request.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from hugginggpt.graph.context import ServedContext
from hugginggpt.server import openai_api
from hugginggpt.server.owners import owned_thread
from hugginggpt.tools.artifacts import thread_folder

__all__ = ["app"]

_ARTIFACT = re.compile(r"[0-9a-f]{16}\.[A-Za-z0-9]{1,10}"
                       r"|uploads/[0-9a-f]{16}/[\w+-][\w.+-]{0,119}")
"""An output (its content id and suffix), or an upload (``uploads/<content id>/<name>``)."""


def _not_found(what: str) -> JSONResponse:
    return JSONResponse({"detail": f"{what} not found"}, status_code=404)


async def artifact(request: Request) -> Response:
    """One artifact of a thread the caller owns, streamed from the shared workspace."""
    thread_id = request.path_params["thread_id"]
    name = request.path_params["name"]
    if not _ARTIFACT.fullmatch(name):
        return _not_found("artifact")
    if await owned_thread(request, thread_id) is None:
        return _not_found("thread")
    folder = Path(ServedContext().workspace).resolve() / "artifacts" / thread_folder(thread_id)
    path = folder / name
    if not path.is_file() or not path.resolve().is_relative_to(folder.resolve()):
        return _not_found("artifact")
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return FileResponse(path, media_type=media_type,
                        headers={"Cache-Control": "private, max-age=3600"})


app = Starlette(routes=[
    Route("/artifacts/{thread_id}/{name:path}", artifact, methods=["GET"]),
    Route("/v1/models", openai_api.models, methods=["GET"]),
    Route("/v1/chat/completions", openai_api.chat_completions, methods=["POST"]),
])
"""The routes, for ``langgraph.json``'s ``http.app``."""
