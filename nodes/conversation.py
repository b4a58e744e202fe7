"""A run as a chat turn: the request read from the thread's last human message, and the
answer added to the conversation as an AI message.

The ``messages`` channel is how chat clients talk to the graph (LangGraph Studio's chat,
Agent Chat UI, the server's A2A endpoint, the OpenAI-compatible route). A message turn
is a human message that no run has taken yet (``State.message_id`` names the last one
taken): its text becomes the request and its blocks the files. A run given ``request``
instead still adds both sides to the conversation, so the thread reads as one chat
whichever way its turns came in.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.config import get_config

from hugginggpt.graph.callers import ServedContext
from hugginggpt.graph.context import Context
from hugginggpt.graph.state import ChatTurn, State
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.blocks import message_inputs, message_text, output_blocks
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.kinds import is_url

__all__ = ["message_turn", "pending_message", "reply_messages", "thread_id",
           "check_served_files"]


def thread_id() -> str:
    """The run's thread (``default`` outside one)."""
    return str(get_config().get("configurable", {}).get("thread_id", "default"))


def pending_message(state: State) -> HumanMessage | None:
    """The human message this run answers: the conversation's last message, when it is a
    human's that no earlier run took."""
    last = state.messages[-1] if state.messages else None
    if isinstance(last, HumanMessage) and last.id != state.message_id:
        return last
    return None


def _turns(messages: list[AnyMessage]) -> list[ChatTurn]:
    turns = []
    for message in messages:
        role = {"human": "user", "ai": "assistant"}.get(message.type)
        text = message_text(message.content)
        if role and text:
            turns.append(ChatTurn(role=role, content=text))  # type: ignore[arg-type]
    return turns


def message_turn(state: State, context: Context) -> dict[str, Any] | None:
    """The update that makes the pending human message this run's request: its text,
    its uploads stored in the thread's artifact store as the files (the message keeps
    links to them instead of their bytes), and the earlier
    messages as the history when the thread has none yet (a client that sends the whole
    conversation at once). None when the run was given a request instead.

    Raises:
        ArgumentError: a block that cannot be used, saying which and why.
    """
    message = pending_message(state)
    if message is None:
        return None
    store = ArtifactStore(context.workspace, thread_id(), context.artifact_url)
    files, content = message_inputs(message.content, store, int(context.max_file_mb * 2**20))
    update: dict[str, Any] = {"request": message_text(message.content), "files": files,
                              "message_id": message.id}
    if files:  # the same message (by id), its uploads now links to the stored files
        update["messages"] = [HumanMessage(content=content, id=message.id)]
    if not state.history:
        update["history"] = _turns(state.messages[:-1])
    return update


def check_served_files(files: list[str], context: Context) -> None:
    """On the server, a run's local files are its thread's own (uploads and outputs in
    its artifact folder): a caller's ``files`` cannot name another file the server can
    read, nor another thread's. URLs are fetched, and checked, as always.

    Raises:
        ArgumentError: a file outside the thread's folder, saying how to send one.
    """
    if not isinstance(context, ServedContext):
        return
    folder = ArtifactStore(context.workspace, thread_id()).folder
    for name in files:
        if is_url(name):
            continue
        real = Path(os.path.realpath(Path(context.workspace).resolve() / name))
        if not real.is_relative_to(folder):
            raise ArgumentError(
                f"file {name[:80]!r} refused: a served run reads only files sent with it "
                "(a message's image, audio or file blocks) and http(s) URLs")


def reply_messages(state: State, text: str, workspace: str) -> list[AnyMessage]:
    """The conversation's new messages for an answer ``text``: an AI message whose
    content is the text and a block for each image, audio and video output (by URL);
    after a human message with the request when the run was not a message turn."""
    outputs = [value for st in state.plan
               if (result := state.results.get(st.id)) is not None and result.status == "done"
               for value in result.outputs.values()]
    blocks = output_blocks(outputs, workspace)
    reply = AIMessage(content=[{"type": "text", "text": text}, *blocks] if blocks else text)
    last = state.messages[-1] if state.messages else None
    if isinstance(last, HumanMessage) and last.id == state.message_id:
        return [reply]
    return [HumanMessage(content=state.request), reply]

