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
import os
import re
from pathlib import Path

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from hugginggpt.graph.callers import ServedContext
from hugginggpt.server import openai_api
from hugginggpt.server.owners import owned_thread
from hugginggpt.tools.artifacts import thread_folder

__all__ = ["app"]

_ARTIFACT = re.compile(r"[0-9a-f]{16}\.[A-Za-z0-9]{1,10}"
                       r"|uploads/[0-9a-f]{16}/[\w+-][\w.+-]{0,119}")
"""An output (its content id and suffix), or an upload (``uploads/<content id>/<name>``)."""


def _not_found(what: str) -> JSONResponse:
    return JSONResponse({"detail": f"{what} not found"}, status_code=404)


def _artifact_file(thread_id: str, name: str) -> tuple[Path, os.stat_result] | None:
    """The file of a thread's artifact and its status, or None when there is none (or the
    name leads out of the thread's folder).

    Blocking: the workspace may be relative (the default is), and resolving it reads the
    server's working directory; the checks touch the disk. The route runs it in a
    thread, since ``langgraph dev`` refuses any blocking call on its event loop.
    """
    folder = (Path(ServedContext().workspace) / "artifacts" / thread_folder(thread_id)).resolve()
    path = (folder / name).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
        return None
    return path, path.stat()


async def artifact(request: Request) -> Response:
    """One artifact of a thread the caller owns, streamed from the shared workspace."""
    thread_id = request.path_params["thread_id"]
    name = request.path_params["name"]
    if not _ARTIFACT.fullmatch(name):
        return _not_found("artifact")
    if await owned_thread(request, thread_id) is None:
        return _not_found("thread")
    found = await anyio.to_thread.run_sync(_artifact_file, thread_id, name)
    if found is None:
        return _not_found("artifact")
    path, stat = found
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return FileResponse(path, media_type=media_type, stat_result=stat,
                        headers={"Cache-Control": "private, max-age=3600"})


app = Starlette(routes=[
    Route("/artifacts/{thread_id}/{name:path}", artifact, methods=["GET"]),
    Route("/v1/models", openai_api.models, methods=["GET"]),
    Route("/v1/chat/completions", openai_api.chat_completions, methods=["POST"]),
])
"""The routes, for ``langgraph.json``'s ``http.app``."""
