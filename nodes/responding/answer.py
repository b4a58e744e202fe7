"""The answer without a responder LLM: what came out of each step, in words.

One line (or paragraph) per planned subtask, in plan order, with a short lead when
there are several: a done step says what it produced (:mod:`.words`), and when its
result is uncertain why (the engine was unsure, or it was computed from an uncertain
step); a failed one says why, shortened, and what to do; a skipped one which step it
waited for, or that step's result was too unsure to use. Small talk (an
empty plan) gets a short reply naming what an LLM would add. The answer says once, in
its last line, that no responder LLM wrote it, and why. Ranking scores, candidates and
arguments are left to :func:`details` (``--verbose``) and ``--json``.
"""

from __future__ import annotations

import re

from hugginggpt.graph.context import Caller
from hugginggpt.graph.state import Failure, Selection, Subtask, SubtaskResult
from hugginggpt.nodes.intent import asks_a_kind, card_kind
from hugginggpt.nodes.responding.advice import said
from hugginggpt.tools.artifacts import shown_refs
from hugginggpt.tools.errors import Control, Fix, setting
from hugginggpt.tools.experts.registry import find_tools
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.experts.words import Finished, listed, say
from hugginggpt.tools.text import MAX_MESSAGE, clip

__all__ = ["template_answer", "small_talk", "details", "NO_RESPONDER"]

NO_RESPONDER = "written without a responder LLM"
_MAX_ERROR = MAX_MESSAGE
_MAX_ARG = 120


_GREETING = re.compile(r"^\W*(hi|hello|hey|hiya|good (morning|afternoon|evening)|bonjour|"
                       r"salut|hola|hallo|guten (tag|morgen)|ciao)\b|你好", re.IGNORECASE)
_THANKS = re.compile(r"\b(thanks|thank you|cheers|merci|gracias|danke)\b|谢谢", re.IGNORECASE)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _noun(task: str) -> str:
    """What a step is called in a sentence ("the translation" failed), as its task type
    declares it."""
    declared = get_task_type(task)
    return declared.noun if declared and declared.noun else f"the {task} step"


def _probabilities(task: str, model: str | None, backend: str | None) -> bool:
    """Whether the model's label scores are probabilities: its card says when not
    (cosines, a detector's scores)."""
    if not model or not backend:
        return True
    for tool in find_tools(task, model, [backend]):
        for card in tool.cards:
            if card.id == model and "not probabilities" in f"{card.description} {card.limits}":
                return False
    return True


def _limits(task: str, model: str | None, backend: str | None) -> str:
    if not model or not backend:
        return ""
    return next((card.limits for t in find_tools(task, model, [backend]) for card in t.cards
                 if card.id == model and card.task == task and card.limits), "")


def _looks_for(task: str, model: str | None, backend: str | None) -> str:
    """What a detector looks for: a specialist card's first subject ("faces"), else
    "objects"."""
    if not model or not backend:
        return "objects"
    return next((card.subjects[0] for t in find_tools(task, model, [backend])
                 for card in t.cards if card.id == model and card.subjects), "objects")


def _unasked(st: Subtask, result: SubtaskResult, selection: Selection | None) -> str:
    """What a classifier's result is, when the request did not say what to classify by
    ("classify this ticket"): the sentiment model that answered reads only sentiment,
    which is not a ticket's category; "" when the request asked for a kind."""
    if not asks_a_kind(st.task) or selection is None or selection.asked is not None:
        return ""
    cards = [card for tool in find_tools(st.task, result.model or "", [result.backend or ""])
             for card in tool.cards if card.id == result.model]
    kind = card_kind(cards[0]) if cards else None
    if kind is None:
        return ""
    return (f"That is its {kind}: the request does not say what to classify it by, so I "
            f"could not sort it by anything else; to sort it into categories, name them "
            "(as in 'is it about billing, shipping or login?').")


def _done(st: Subtask, result: SubtaskResult, request: str, steps: dict[int, int],
          plan: dict[int, Subtask], workspace: str | None,
          selection: Selection | None = None) -> str:
    outputs = shown_refs(result.outputs, workspace) if workspace else result.outputs
    declared = get_task_type(st.task)
    sentence = say(Finished(
        task=st.task, outputs=outputs, args=st.args, request=request,
        model=result.model or "",
        probabilities=_probabilities(st.task, result.model, result.backend),
        looks_for=_looks_for(st.task, result.model, result.backend)),
        declared.say if declared else None)
    if result.cached:
        sentence = _from_cache(sentence)
    if doubt := _uncertain(result, steps, plan):  # beside the claim it doubts
        sentence += ("\n" if "\n" in sentence else " ") + doubt
    if unasked := _unasked(st, result, selection):
        sentence += ("\n" if "\n" in sentence else " ") + unasked
    if limits := _limits(st.task, result.model, result.backend):
        sentence += f"\nNote: {limits}"
    return sentence


def _uncertain(result: SubtaskResult, steps: dict[int, int], plan: dict[int, Subtask]) -> str:
    """Why a done step's result may be wrong (the engine was unsure, or it was computed
    from an uncertain step), or "" when nothing says so."""
    confidence = result.confidence
    if confidence is None or not confidence.uncertain:
        return ""
    why = [confidence.reason] if confidence.reason else []
    why += [f"computed from the uncertain result of step {steps.get(dep, dep + 1)}"
            + (f" ({_noun(plan[dep].task)})" if dep in plan else "")
            for dep in confidence.inherited]
    return f"Uncertain. {_capital('; '.join(why) or confidence.uncertain)}."


def _from_cache(sentence: str) -> str:
    """The step's sentence saying its outputs came from the result cache (on its first
    line, before the full stop)."""
    first, newline, rest = sentence.partition("\n")
    first = first.rstrip()
    marked = (f"{first[:-1]} (from the cache)." if first.endswith(".")
              else f"{first} (from the cache)")
    return marked + newline + rest


def _failure(result: SubtaskResult) -> Failure:
    """The result's failure in fields (a result saved before it had them: its error,
    whole)."""
    return result.failure or Failure(reason=result.error or result.status)


def _short(reason: str) -> str:
    """A failure's reason as one sentence, whole."""
    return clip(" ".join(reason.split()).rstrip("."), _MAX_ERROR)


def _what_to_do(failure: Failure, task: str) -> Fix:
    """The failure's own fix, else what helps with its kind of failure."""
    types = set(failure.tried_types) | ({failure.error_type} if failure.error_type else set())
    if "ToolTimeoutError" in types:
        return Fix(say="raise the time a model may take with {}, or try a faster model or "
                       "another {}", controls=[Control(kind="limit", name="subtask_timeout_s"),
                                               setting("backend")])
    if failure.fix is not None:
        return failure.fix
    models = Control(kind="models", name="list", value=task)
    if types == {"CannotRead"}:  # an earlier step's text, in a language no candidate reads
        return Fix(say="use a model that reads its language ({} shows each model's "
                       "languages), or an LLM, which reads most languages: {}",
                   controls=[models, Control(kind="llm")])
    if failure.error_type == "ArgumentError":
        return Fix(say="check the input it names")
    return Fix(say="try another {}, or another model ({})", controls=[setting("backend"), models])


def _failed(st: Subtask, result: SubtaskResult, steps: dict[int, int], caller: Caller) -> str:
    what = _capital(_noun(st.task))
    failure = _failure(result)
    if result.status == "skipped":
        if (dep := failure.dependency) is not None:
            if failure.dependency_ended == "unusable":
                return (f"{what} was skipped because the result of step "
                        f"{steps.get(dep, dep + 1)} is too unsure to use: "
                        f"{_short(failure.reason)}.")
            return (f"{what} was skipped because step {steps.get(dep, dep + 1)} "
                    f"{failure.dependency_ended}.")
        fix = f" To fix it, {said(failure.fix, caller)}." if failure.fix else ""
        return f"{what} did not run: {_short(failure.reason)}.{fix}"
    models = len(failure.tried)
    after = f" (after trying {models} models)" if models > 1 else ""
    hint = said(_what_to_do(failure, st.task), caller)
    return f"{what} failed{after}: {_short(failure.reason)}. To fix it, {hint}."


def _step(st: Subtask, results: dict[int, SubtaskResult], steps: dict[int, int],
          request: str, plan: dict[int, Subtask], workspace: str | None,
          selection: Selection | None, caller: Caller) -> str:
    result = results.get(st.id)
    if result is None:
        return f"{_capital(_noun(st.task))} did not run."
    if result.status == "done":
        return _done(st, result, request, steps, plan, workspace, selection)
    return _failed(st, result, steps, caller)


def _lead(plan: list[Subtask], results: dict[int, SubtaskResult]) -> str:
    counts = {status: sum(1 for st in plan if (r := results.get(st.id)) is not None
                          and r.status == status) for status in ("done", "failed", "skipped")}
    if counts["done"] == len(plan):
        return f"I ran {len(plan)} steps:"
    parts = [f"{counts['done']} finished"] if counts["done"] else ["none finished"]
    parts += [f"{counts['failed']} failed"] if counts["failed"] else []
    skipped = counts["skipped"] + len(plan) - sum(counts.values())
    parts += [f"{skipped} {'was' if skipped == 1 else 'were'} skipped"] if skipped else []
    return f"I planned {len(plan)} steps; {listed(parts)}:"


def small_talk(request: str, caller: Caller = "cli") -> str:
    """The reply to a request that needs no expert, without an LLM to write it: what
    this can do without one, and how to add one (said for ``caller``)."""
    if _GREETING.search(request):
        opening = "Hello! "
    elif _THANKS.search(request):
        opening = "You're welcome! "
    else:
        opening = "I cannot answer that myself. "
    return (f"{opening}Without a language model configured I can run expert models "
            "(caption or read a photo, translate, summarise, transcribe speech, read a text "
            f"aloud, ...) but not chat or answer general questions; {said(_ADD_AN_LLM, caller)}.")


_ADD_AN_LLM = Fix(say="to add that, {}", controls=[Control(kind="llm")])


def template_answer(plan: list[Subtask], results: dict[int, SubtaskResult], request: str,
                    notes: list[str], workspace: str | None = None,
                    selections: dict[int, Selection] | None = None,
                    caller: Caller = "cli") -> str:
    """The answer from the results, with ``notes`` (why no responder LLM wrote it, a
    planner fallback, ...) as last lines in parentheses. Output files are named where
    the caller finds them (:func:`~hugginggpt.tools.artifacts.where_shown` in
    ``workspace``: a download URL, or an absolute path); without ``workspace``, by their
    reference's path. Each failure's fix is said for ``caller``."""
    steps = {st.id: number for number, st in enumerate(plan, 1)}
    by_id = {st.id: st for st in plan}
    lines = [_step(st, results, steps, request, by_id, workspace,
                   (selections or {}).get(st.id), caller) for st in plan]
    if len(plan) == 1:
        body = lines[0]
    else:
        numbered = [f"{n}. " + text.replace("\n", "\n   ") for n, text in enumerate(lines, 1)]
        body = "\n".join([_lead(plan, results), *numbered])
    if any(r.backend == "dry-run" for r in results.values()):
        notes = ["A dry run: the experts were simulated, so their outputs are placeholders.",
                 *notes]
    return "\n\n".join([body, "\n".join(f"({note})" for note in notes)]) if notes else body


def details(plan: list[Subtask], selections: dict[int, Selection],
            results: dict[int, SubtaskResult]) -> str:
    """What ran, readably and in full (``--verbose``): each step's arguments, the model
    chosen and why, the candidates with their ranking scores, and how it ended."""
    lines = []
    for number, st in enumerate(plan, 1):
        args = ", ".join(f"{k}={clip(v, _MAX_ARG)!r}" for k, v in st.args.items())
        after = f" after step(s) {', '.join(str(d + 1) for d in st.dep)}" if st.dep else ""
        lines.append(f"step {number}: {st.task}({args}){after}")
        selection, result = selections.get(st.id), results.get(st.id)
        if selection is not None:
            chosen = f"{selection.model} on {selection.backend}" if selection.model else "none"
            fix = f"; {said(selection.fix, 'cli')}" if selection.fix else ""
            lines.append(f"  model: {chosen} ({selection.reason}{fix})")
            if selection.candidates:
                lines.append("  candidates: " + ", ".join(
                    f"{c.model} ({c.backend}) {c.score:.2f}" for c in selection.candidates))
        if result is None:
            lines.append("  not run")
            continue
        ran = f" by {result.model} ({result.backend})" if result.model else ""
        if result.endpoint:
            ran += f" at {result.endpoint}"
        if result.cached:
            ran += " from the cache"
        lines.append(f"  {result.status}{ran} in {result.latency_s:.2f} s, "
                     f"{result.attempts} attempt(s)")
        if (confidence := result.confidence) is not None and confidence.score is not None:
            lines.append(f"  confidence: {confidence.score:g} ({confidence.measure})")
        for attempt in result.attempt_log:
            if not attempt.ok:
                lines.append(f"  attempt {attempt.model}: {attempt.error_type}: "
                             f"{clip(attempt.error or '', _MAX_ERROR)}")
        if result.error:
            lines.append(f"  error: {result.error}")
    return "\n".join(lines) or "No expert steps were planned."

