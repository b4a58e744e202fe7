"""Choosing a model for subtasks, shared by the select stage and the streamed plan.

Candidates are filtered by task type and by the backends this run may use, then ranked
on model-card facts. The selector LLM is asked only when the top candidates are close;
otherwise the ranking decides, and the reason says so. Subtasks with the same
:func:`signature` get the same choice (one ranking, at most one selector call), also
when they are chosen one at a time, as a streamed plan's subtasks are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables.config import ContextThreadPoolExecutor
from pydantic import BaseModel, Field, ValidationError

from hugginggpt.graph.context import Context
from hugginggpt.graph.state import Candidate, Failure, Selection, State, Subtask
from hugginggpt.nodes.demand import tier_needed
from hugginggpt.nodes.intent import Intent, card_kind, read_intent
from hugginggpt.nodes.prompts import SELECTOR_SYSTEM, SELECTOR_USER
from hugginggpt.nodes.ranking import Query, RankedCandidate, rank_candidates
from hugginggpt.nodes.reading import fits, unreadable
from hugginggpt.nodes.responding.advice import reason_and_fix
from hugginggpt.tools.errors import Fix, LLMNotConfiguredError, joined, setting
from hugginggpt.tools.experts.availability import (
    download_hint,
    explain_unavailable,
    model_cards,
)
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, Catalog, load_catalog
from hugginggpt.tools.experts.lite.languages import evidence, language_of
from hugginggpt.tools.experts.registry import find_tools, run_settings
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.kinds import generated_refs, kind_of_literal
from hugginggpt.tools.llm.client import complete
from hugginggpt.tools.llm.config import describe_llm, has_llm
from hugginggpt.tools.llm.errors import describe_llm_error, llm_call_errors, llm_error_fix
from hugginggpt.tools.llm.records import LLMCall, run_spend
from hugginggpt.tools.llm.replies import json_candidates, reply_text

__all__ = ["Selector", "ModelChoice", "signature", "risk_of", "READ_ONLY"]

READ_ONLY = "read-only"

def _selector_errors() -> tuple[type[BaseException], ...]:
    """What makes the selector LLM fall back on ranking (evaluated when matched: see
    :func:`~hugginggpt.tools.llm.errors.llm_call_errors`)."""
    return (*llm_call_errors(), LLMNotConfiguredError)


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
    state: State,
    context: Context,
    use_llm: bool,
    calls: list[LLMCall],
    spent: tuple[int, int],
) -> tuple[list[RankedCandidate], str]:
    """Order the candidates (chosen first) and say why; a selector call is recorded in
    ``calls``."""
    top = ranked[0]
    if len(ranked) == 1:
        return ranked, f"the only available model for {subtask.task}"
    runner_up = ranked[1]
    ranking = f"score {top.score:.2f} vs {runner_up.score:.2f} for {runner_up.model}"
    close = [c for c in ranked
             if c.backend == top.backend and top.score - c.score < context.selection_margin]
    if len(close) < 2:
        parts = ", ".join(f"{k} {v:+.2f}" for k, v in top.parts.items())
        return ranked, f"top-ranked on {top.backend} ({ranking}; {parts or 'no model card'})"
    if not use_llm:
        return ranked, f"close call ({ranking}); no selector LLM configured, took the top-ranked"
    prompt = SELECTOR_USER.format(
        request=state.request, id=subtask.id, task=subtask.task, args=subtask.args,
        candidates="\n".join(_describe(c) for c in close),
    )
    try:
        raw = complete(
            context, "selector", [SystemMessage(SELECTOR_SYSTEM), HumanMessage(prompt)],
            calls=calls, need=tier_needed("selector"),
            schema=ModelChoice.model_json_schema(), turn=len(state.history) // 2,
            spent=spent,
        )
        answer = _choice(reply_text(raw))
    except ValidationError as exc:
        return ranked, (f"close call ({ranking}); the selector's answer was unusable "
                        f"({exc.error_count()} problems); took the top-ranked")
    except _selector_errors() as exc:
        failure = Failure(reason=describe_llm_error(exc, "selector"), fix=llm_error_fix(exc))
        return ranked, (f"close call ({ranking}); {reason_and_fix(failure, context.caller)}; "
                        "took the top-ranked")
    picked = next((c for c in close if c.model == answer.model), None)
    if picked is None:
        return ranked, (f"close call ({ranking}); the selector named {answer.model!r}, "
                        "not a candidate; took the top-ranked")
    reordered = [picked, *(c for c in ranked if c is not picked)]
    return reordered, (
        f"chosen by the selector LLM among {len(close)} close candidates: {answer.reason}"
    )


def _choice(text: str) -> ModelChoice:
    """The selector's answer: the first JSON object in the reply that is a choice.

    Raises:
        ValidationError: no JSON object in the reply is a valid choice.
    """
    first, *others = json_candidates(text)  # the whole reply first
    for candidate in others:
        try:
            return ModelChoice.model_validate_json(candidate)
        except ValidationError:
            continue
    return ModelChoice.model_validate_json(first)


def signature(subtask: Subtask, intent: str | None = None) -> tuple[Any, ...]:
    """What makes two subtasks the same choice: the task type, the kinds of their data
    arguments, the values of their parameters (a target language matters, the text
    to translate does not) and the kind of answer asked for (a sentiment question and a
    language question are two text classifications that need two models)."""
    task_type = get_task_type(subtask.task)
    parts = []
    for name, value in sorted(subtask.args.items()):
        arg = task_type.arg(name) if task_type else None
        if arg is not None and not arg.is_data:
            parts.append((name, value))
        else:
            parts.append((name, "ref" if generated_refs(value)
                          else kind_of_literal(value)))
    key = (subtask.task, tuple(parts))
    return key if intent is None else (*key, intent)


def _query(subtask: Subtask, request: str, language: str | None, context: Context,
           catalog: Catalog) -> tuple[Query, Intent]:
    """What ranking knows: the intent (the clause of the request this subtask serves, its
    texts masked, and the kind of answer asked for), and the language of the subtask's
    own text when it has some (it beats the request's: a French request may ask about an
    English text). The text itself is never compared with the cards."""
    task_type = get_task_type(subtask.task)
    texts = [
        value for name, value in subtask.args.items()
        if not generated_refs(value) and task_type
        and (arg := task_type.arg(name)) is not None and arg.kind == "text"
    ]
    intent = read_intent(request, subtask.task, texts,
                         task_type.description if task_type else subtask.task,
                         model_cards(subtask.task, catalog))
    found = evidence(" ".join(texts)) if texts else ()
    return Query(text=intent.clause, language=language_of(" ".join(texts)) or language,
                 latency_budget_s=context.latency_budget_s,
                 target_language=subtask.args.get("tgt_lang") or None,
                 intent=intent.kind, text_languages=found), intent


def _other_kinds(task: str, catalog: Catalog, backend: str, query: Query,
                 intent: Intent) -> str:
    """Why no candidate is left when only the intent ruled them out: what the models
    that can run do instead ("" when the intent was not the cause)."""
    if intent.kind is None:
        return ""
    others = rank_candidates(task, catalog, backend,
                             replace(query, intent=None, text_languages=()))
    if not others:
        return ""
    kinds = sorted({card_kind(c.card) or "other things" for c in others})
    models = ", ".join(dict.fromkeys(c.model for c in others[:3]))
    return (f"the request asks for {intent.kind} ({intent.cue!r}); the {task} models "
            f"that can run here ({models}) do {' or '.join(kinds)}; ")


def _no_model_fix(backend: str, hint: Fix | None) -> Fix | None:
    """What to do when no model can run a subtask: another backend (or, for a dry run, a
    catalog model), and the local model to download when there is one."""
    if backend == "dry-run":
        return joined([Fix(say="add a model for it to the catalog"), hint])
    return joined([Fix(say="try another {}", controls=[setting("backend")]), hint])


class Selector:
    """One run's model choice: :meth:`select` may be called once for the whole plan (the
    select stage) or once per subtask as a streamed plan arrives; a subtask with the
    signature of one chosen before gets that choice again. Selector LLM calls are
    recorded in :attr:`calls`."""

    def __init__(self, state: State, context: Context,
                 spent: Callable[[], tuple[int, int]] | None = None) -> None:
        """``spent`` says what the run spent on LLMs besides this selector's own calls
        (default: the state's records): a streamed plan's selector shares the run's
        budget with the planner call still streaming and the subtasks already running."""
        self.state = state
        self.context = context
        turn = len(state.history) // 2
        self.spent = spent or (lambda: run_spend(state.llm_calls, turn))
        self.calls: list[LLMCall] = []  # appended from the pool's threads (atomic)
        self.catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
        self.language = language_of(state.request)
        self.use_llm = has_llm(context, "selector")
        self._chosen: dict[tuple[Any, ...], Selection] = {}

    @property
    def label(self) -> str:
        """Who selected, for the state's ``selector``."""
        if self.use_llm:
            return (f"llm: {describe_llm(self.context, 'selector')} "
                    "(asked only on close calls)")
        return "ranking only (no selector LLM)"

    def _one(self, subtask: Subtask, query: Query, intent: Intent) -> Selection:
        context, catalog = self.context, self.catalog
        ranked = rank_candidates(subtask.task, catalog, context.backend, query)
        hint = None if context.download not in (None, "no") else download_hint(
            subtask.task, catalog, context.backend, partial(fits, query))  # a local model
        if not ranked and (cannot := unreadable(subtask.task, catalog, context.backend, query)):
            why, fix = cannot
            return Selection(subtask_id=subtask.id, task=subtask.task, model=None,
                             backend=None, reason=f"no model can read the text: {why}", fix=fix)
        if not ranked:
            return Selection(
                subtask_id=subtask.id, task=subtask.task, model=None, backend=None,
                reason=(
                    f"no model can run {subtask.task} with backend {context.backend!r} "
                    f"({_other_kinds(subtask.task, catalog, context.backend, query, intent)}"
                    f"{explain_unavailable(subtask.task, catalog, context.backend)}"
                    + (f"; target language {query.target_language!r}"
                       if query.target_language else "") + ")"
                ),
                fix=_no_model_fix(context.backend, hint),
            )
        ordered, reason = _choose(subtask, ranked, self.state, context, self.use_llm,
                                  self.calls, self.spent())
        if intent.kind:
            reason += f"; the request asks for {intent.kind} ({intent.cue!r})"
        return Selection(
            subtask_id=subtask.id, task=subtask.task, model=ordered[0].model,
            backend=ordered[0].backend, reason=reason,
            candidates=[Candidate(model=c.model, backend=c.backend, score=c.score)
                        for c in ordered],
            asked=intent.kind, fix=hint if ordered[0].backend != "local" else None,
        )

    def select(self, subtasks: list[Subtask]) -> dict[int, Selection]:
        """A model, a backend and ordered fallbacks for each of ``subtasks``."""
        queries = {s.id: _query(s, self.state.request, self.language, self.context,
                                self.catalog) for s in subtasks}
        groups: dict[tuple[Any, ...], list[Subtask]] = {}
        for subtask in subtasks:
            groups.setdefault(signature(subtask, queries[subtask.id][1].kind),
                              []).append(subtask)
        new = [key for key in groups if key not in self._chosen]

        def select_in_run(subtask: Subtask) -> Selection:
            with run_settings(self.context.backend_settings()):  # availability may depend
                return self._one(subtask, *queries[subtask.id])

        if len(new) == 1:  # one at a time (a streamed plan): no pool to start
            self._chosen[new[0]] = select_in_run(groups[new[0]][0])
        elif new:  # the context-copying pool keeps the caller's tracing (LangSmith)
            with ContextThreadPoolExecutor(max_workers=min(8, len(new))) as pool:
                chosen = list(pool.map(select_in_run, [groups[k][0] for k in new]))
            self._chosen.update(zip(new, chosen, strict=True))
        selections: dict[int, Selection] = {}
        for key, members in groups.items():
            selection = self._chosen[key]
            for subtask in members:
                same = subtask.id == selection.subtask_id
                selections[subtask.id] = selection if same else selection.model_copy(update={
                    "subtask_id": subtask.id,
                    "reason": f"same choice as subtask {selection.subtask_id}: "
                              f"{selection.reason}",
                })
        return selections


def risk_of(subtask: Subtask, selection: Selection | None) -> str | None:
    """The risk level the selected tool declares, when above read-only (None: read-only,
    or nothing selected)."""
    if selection is None or selection.model is None or selection.backend is None:
        return None
    tools = find_tools(subtask.task, selection.model, [selection.backend])
    return tools[0].risk if tools and tools[0].risk != READ_ONLY else None
