"""Stage 2, model selection: one model (and its fallbacks) per subtask.

Candidates are filtered by task type and by the backends this run may use, then ranked
on model-card facts. The selector LLM is asked only when the top candidates are close;
otherwise the ranking decides, and the reason says so.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, ValidationError

from graph.context import Context, context_of
from graph.llms import chat_model
from graph.state import Candidate, Selection, State, Subtask
from nodes.llm_errors import LLM_CALL_ERRORS, describe_llm_error
from nodes.prompts import SELECTOR_SYSTEM, SELECTOR_USER
from tools.catalog import DEFAULT_CATALOG, load_catalog
from tools.errors import LLMNotConfiguredError
from tools.selection import RankedCandidate, rank_candidates

__all__ = ["select", "route_after_select", "ModelChoice"]


class ModelChoice(BaseModel):
    """The selector's pick among close candidates."""

    model: str = Field(description="the chosen model id, exactly as listed")
    reason: str = Field(description="one sentence: why this model fits best")


def _describe(candidate: RankedCandidate) -> str:
    card = candidate.card
    if card is None:
        return f"- {candidate.model} (backend {candidate.backend}; no model card)"
    langs = ",".join(card.languages) or "any"
    return (
        f"- {candidate.model} (backend {candidate.backend}): {card.description} "
        f"downloads={card.downloads} likes={card.likes} languages={langs} "
        f"license={card.license} expected_latency={card.expected_latency_s}s"
    )


def _choose(
    subtask: Subtask,
    ranked: list[RankedCandidate],
    request: str,
    context: Context,
    selector: BaseChatModel | None,
) -> tuple[list[RankedCandidate], str]:
    """Order the candidates (chosen first) and say why."""
    top = ranked[0]
    if len(ranked) == 1:
        return ranked, f"the only available model for {subtask.task}"
    runner_up = ranked[1]
    ranking = f"score {top.score:.2f} vs {runner_up.score:.2f} for {runner_up.model}"
    close = [c for c in ranked if top.score - c.score < context.selection_margin]
    if len(close) < 2:
        return ranked, f"top-ranked by downloads, likes and latency ({ranking})"
    if selector is None:
        return ranked, f"close call ({ranking}); no selector LLM configured, took the top-ranked"
    prompt = SELECTOR_USER.format(
        request=request, id=subtask.id, task=subtask.task, args=subtask.args,
        candidates="\n".join(_describe(c) for c in close),
    )
    try:
        choice = selector.with_structured_output(
            ModelChoice.model_json_schema(), method=context.structured_output
        )
        answer = ModelChoice.model_validate(
            choice.invoke([SystemMessage(SELECTOR_SYSTEM), HumanMessage(prompt)])
        )
    except ValidationError as exc:
        return ranked, (f"close call ({ranking}); the selector's answer was unusable "
                        f"({exc.error_count()} problems); took the top-ranked")
    except LLM_CALL_ERRORS as exc:
        failure = describe_llm_error(exc, "selector")
        return ranked, f"close call ({ranking}); {failure}; took the top-ranked"
    picked = next((c for c in close if c.model == answer.model), None)
    if picked is None:
        return ranked, (f"close call ({ranking}); the selector named {answer.model!r}, "
                        "not a candidate; took the top-ranked")
    reordered = [picked, *(c for c in ranked if c is not picked)]
    return reordered, (
        f"chosen by the selector LLM among {len(close)} close candidates: {answer.reason}"
    )


def select(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Assign a model, a backend and ordered fallbacks to every subtask."""
    context = context_of(runtime)
    get_stream_writer()({"type": "stage", "stage": "select", "event": "start"})
    catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
    try:
        selector: BaseChatModel | None = chat_model(context, "selector")
    except LLMNotConfiguredError:
        selector = None

    def select_one(subtask: Subtask) -> Selection:
        ranked = rank_candidates(subtask.task, catalog, context.backend)
        if not ranked:
            return Selection(
                subtask_id=subtask.id, task=subtask.task, model=None, backend=None,
                reason=(
                    f"no model can run {subtask.task} on backend {context.backend!r}: "
                    "use --dry-run to simulate it, or register a tool for it"
                ),
            )
        ordered, reason = _choose(subtask, ranked, state.request, context, selector)
        return Selection(
            subtask_id=subtask.id, task=subtask.task, model=ordered[0].model,
            backend=ordered[0].backend, reason=reason,
            candidates=[Candidate(model=c.model, backend=c.backend, score=c.score)
                        for c in ordered],
        )

    with ThreadPoolExecutor(max_workers=min(8, max(1, len(state.plan)))) as pool:
        selections = list(pool.map(select_one, state.plan))
    return {"selections": {s.subtask_id: s for s in selections}}


def route_after_select(state: State) -> Literal["execute", "respond"]:
    """Skip execution when no subtask got a model: there is nothing to run."""
    runnable = any(s.model for s in state.selections.values())
    return "execute" if runnable else "respond"
