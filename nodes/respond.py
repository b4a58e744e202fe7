"""Stage 4, response generation: the responder LLM explains what happened.

The LLM sees a digest of the results (text outputs, artifact paths, errors), never the
bytes of an image or audio file. With no responder LLM configured, or when it fails, a
template writes the same facts plainly and says so.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import ChatTurn, State
from hugginggpt.nodes.demand import tier_needed
from hugginggpt.nodes.prompts import RESPONDER_SYSTEM, RESPONDER_USER
from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.errors import LLMNotConfiguredError
from hugginggpt.tools.llm.client import complete
from hugginggpt.tools.llm.errors import LLM_CALL_ERRORS, describe_llm_error
from hugginggpt.tools.llm.records import LLMCall, run_spend
from hugginggpt.tools.llm.replies import reply_text
from hugginggpt.tools.text import clip

__all__ = ["respond", "abort", "results_digest", "template_response"]

_MAX_INLINE = 600
_MAX_ARG = 300
"""Argument values are shown cut to this length: the plan may carry long texts."""


def _show(value: Any) -> str:
    """An output as the LLM sees it: a file as its reference (id, kind, path, size and a
    short preview), never its bytes; long text cut to its beginning."""
    if is_artifact_ref(value):
        preview = f", preview {str(value['preview'])[:200]!r}" if "preview" in value else ""
        size = f", {value['bytes']} bytes" if "bytes" in value else ""
        return (f"{value['kind']} file {value['path']} "
                f"(artifact {value['artifact_id']}{size}{preview})")
    text = value if isinstance(value, str) else json.dumps(value)
    if len(text) <= _MAX_INLINE:
        return text
    return f"{text[:_MAX_INLINE]} ...(truncated: {len(text)} characters in all)"


def results_digest(state: State) -> str:
    """What ran, with which model and why, what came out, what failed: one block per
    subtask, in plan order."""
    if not state.plan:
        return "No expert subtasks were needed for this request."
    lines = []
    for st in state.plan:
        selection = state.selections.get(st.id)
        result = state.results.get(st.id)
        args = {name: clip(value, _MAX_ARG) for name, value in st.args.items()}
        lines.append(f"Subtask {st.id}: {st.task} args={json.dumps(args)} dep={st.dep}")
        if selection and selection.model:
            lines.append(f"  model: {selection.model} on {selection.backend} ({selection.reason})")
        if result is None:
            reason = selection.reason if selection else "not run"
            lines.append(f"  status: not run ({reason})")
            continue
        if result.status == "done":
            if result.model and selection and result.model != selection.model:
                lines.append(f"  ran on fallback model {result.model} ({result.backend})")
            lines.append(f"  status: done in {result.latency_s:.2f}s, {result.attempts} attempt(s)")
            for name, value in result.outputs.items():
                lines.append(f"  output {name}: {_show(value)}")
        else:
            lines.append(f"  status: {result.status}: {result.error}")
    return "\n".join(lines)


def template_response(state: State, note: str) -> str:
    """A plain answer from the results, used without a responder LLM."""
    done = sum(r.status == "done" for r in state.results.values())
    header = (
        f"{note}\nRequest: {state.request}\n"
        f"{done} of {len(state.plan)} subtasks finished.\n"
    )
    return header + results_digest(state)


def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer and mark the run completed."""
    context = context_of(runtime)
    get_stream_writer()({"type": "stage", "stage": "respond", "event": "start"})
    calls: list[LLMCall] = []
    failures = sum(r.status != "done" for r in state.results.values())
    try:
        reply = complete(
            context, "responder",
            [SystemMessage(RESPONDER_SYSTEM),
             HumanMessage(RESPONDER_USER.format(request=state.request,
                                                results=results_digest(state)))],
            calls=calls,
            need=tier_needed("responder", plan_size=len(state.plan), failures=failures),
            turn=len(state.history) // 2,
            spent=run_spend(state.llm_calls, len(state.history) // 2),
        )
        text = reply_text(reply)
        responder = f"llm: {calls[-1].llm}"
    except LLMNotConfiguredError:
        responder = "template (no LLM configured)"
        text = template_response(state, "No responder LLM is configured; these are the results.")
    except LLM_CALL_ERRORS as exc:
        responder = "template (responder LLM failed)"
        text = template_response(state, describe_llm_error(exc, "responder").capitalize() + ".")
    return {
        "response": text,
        "responder": responder,
        "llm_calls": calls,
        "status": "completed",
        "plan_attempts": 0,
        "history": [ChatTurn(role="user", content=state.request),
                    ChatTurn(role="assistant", content=text)],
    }


def abort(state: State) -> dict[str, Any]:
    """End the run with the reason, keeping everything computed so far."""
    text = f"The run was aborted: {state.abort_reason}"
    return {
        "response": text,
        "status": "aborted",
        "plan_attempts": 0,
        "history": [ChatTurn(role="user", content=state.request),
                    ChatTurn(role="assistant", content=text)],
    }
