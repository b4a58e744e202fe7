"""The prompts and replies of a thread's LLM calls, kept beside the checkpoints.

A checkpoint stores every channel of the state again, so text in the state is paid for
once per checkpoint: with each call's prompt and reply in ``llm_calls`` a thread's
checkpoints grew with the square of its turns (issue 16). The state keeps each call's
accounting record (:class:`~hugginggpt.tools.llm.records.LLMCall` without ``request``
and ``reply``); the text goes once into the LangGraph Store, keyed by thread and call
id: the store the graph was compiled with (``open_checkpointer`` opens one beside every
checkpointer: a table in the same SQLite file, or PostgreSQL's), or the LangGraph
server's own (``get_store()`` gives it to the nodes there).

Without a store (a graph compiled without one, as in a notebook with a bare
``InMemorySaver``) the text stays in the record, as before: there is nowhere else that
lives as long as the checkpoint, and dropping it would leave ``trace --full`` and
``replay`` without it. Records written before this change hold their text too; reading
(:func:`hydrate`) keeps what a record holds and fills in only what the store has.
"""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore, GetOp, PutOp

from hugginggpt.tools.llm.records import LLMCall

__all__ = ["namespace", "keep", "akeep", "hydrate", "ahydrate", "node_store"]

_TEXT = ("request", "reply")


def namespace(thread_id: str) -> tuple[str, ...]:
    """Where a thread's texts are: a namespace label may not hold a period, so the
    thread id's periods (and the escape itself) are percent-escaped."""
    return ("hugginggpt", "llm_calls", thread_id.replace("%", "%25").replace(".", "%2E"))


def node_store() -> tuple[BaseStore | None, str | None]:
    """The running graph's store and thread, or None where there is none (a graph
    compiled without a store, or a call outside a graph)."""
    from langgraph.config import get_config, get_store

    try:
        store = get_store()
        thread = (get_config().get("configurable") or {}).get("thread_id")
    except (RuntimeError, KeyError, AttributeError):
        return None, None
    return store, str(thread) if thread is not None else None


def _split(calls: list[LLMCall], thread_id: str) -> tuple[list[PutOp], list[LLMCall]]:
    puts = [PutOp(namespace(thread_id), c.call_id, {k: getattr(c, k) for k in _TEXT}, index=False)
            for c in calls if c.request or c.reply is not None]
    return puts, [c.model_copy(update={"request": [], "reply": None}) for c in calls]


def keep(calls: list[LLMCall]) -> list[LLMCall]:
    """In a (sync) node: the calls' texts put in the store, the records without them
    returned for the state; with no store, the records as they are."""
    store, thread = node_store()
    if store is None or thread is None or not calls:
        return calls
    puts, records = _split(calls, thread)
    if puts:
        store.batch(puts)
    return records


async def akeep(calls: list[LLMCall]) -> list[LLMCall]:
    """:func:`keep` in an async node (an async store must not be called synchronously
    on its own loop)."""
    store, thread = node_store()
    if store is None or thread is None or not calls:
        return calls
    puts, records = _split(calls, thread)
    if puts:
        await store.abatch(puts)
    return records


def _filled(calls: list[LLMCall], found: list[Any]) -> list[LLMCall]:
    out = []
    for call, item in zip(calls, found, strict=True):
        if item is not None and not call.request and call.reply is None:
            call = call.model_copy(update={k: item.value.get(k) or v for k, v in
                                           (("request", []), ("reply", None))})
        out.append(call)
    return out


def hydrate(store: BaseStore | None, thread_id: str, calls: list[LLMCall]) -> list[LLMCall]:
    """The records with their prompts and replies from the store (records that hold
    their own, as before this change or without a store, are kept as they are)."""
    if store is None or not calls:
        return list(calls)
    found = store.batch([GetOp(namespace(thread_id), c.call_id) for c in calls])
    return _filled(calls, found)


async def ahydrate(store: BaseStore | None, thread_id: str,
                   calls: list[LLMCall]) -> list[LLMCall]:
    """:func:`hydrate` for async callers."""
    if store is None or not calls:
        return list(calls)
    found = await store.abatch([GetOp(namespace(thread_id), c.call_id) for c in calls])
    return _filled(calls, found)
