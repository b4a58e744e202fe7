"""The built-in planner for runs without an LLM: retrieve a similar example, adapt it.

The example bank (:mod:`~hugginggpt.nodes.planning.bank`) holds request -> plan pairs.
For a new request the planner takes the most similar examples (MiniLM embeddings) and
adapts each in turn: the example's files are replaced by this request's files of the
same kind (attached, or named in the request), its quoted texts by this request's quoted
texts, its target language by the one the request names, its labels and questions by
this request's. The first adapted plan that the validator accepts wins. When no example
is similar enough, or none can be adapted, the planner says it cannot plan the request
offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from hugginggpt.nodes.planning.bank import BankExample, PlanBank
from hugginggpt.nodes.planning.reading import RequestFacts, read_request, split_clauses
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.kinds import DATA_KINDS, TEXT_LIKE, generated_ref

__all__ = ["CannotPlanOffline", "OfflinePlan", "adapt", "compose", "offline_plan",
           "MIN_SIMILARITY"]

MIN_SIMILARITY = 0.45
"""Below this cosine similarity no example is taken as a model for the request."""


class CannotPlanOffline(Exception):
    """No example fits the request well enough to plan it without an LLM."""


@dataclass(frozen=True)
class OfflinePlan:
    items: list[dict[str, Any]]
    example_id: str
    similarity: float


def adapt(example: BankExample, facts: RequestFacts) -> list[dict[str, Any]]:
    """The example's plan with this request's files, texts and parameters.

    Raises:
        CannotPlanOffline: the example needs something the request does not give
            (a file of some kind, candidate labels).
    """
    model = read_request(example.request)
    used: dict[str, int] = {}
    adapted = []
    for subtask in example.plan:
        task_type = get_task_type(str(subtask.get("task", "")))
        args: dict[str, str] = {}
        for name, raw in dict(subtask.get("args") or {}).items():
            value = str(raw)
            arg = task_type.arg(name) if task_type else None
            if generated_ref(value) is not None or arg is None:
                args[name] = value
            elif name in ("tgt_lang", "src_lang"):
                args[name] = (facts.target_language or value) if name == "tgt_lang" else value
            elif name == "labels":
                if not facts.labels:
                    raise CannotPlanOffline("it needs candidate labels (e.g. 'as sports, "
                                            "politics or science')")
                args[name] = facts.labels
            elif arg.kind in DATA_KINDS - {"text"}:
                kind = str(arg.kind)
                pool = facts.files.get(kind, []) + facts.files.get("url", [])
                index = used.get(kind, 0)
                if index >= len(pool):
                    raise CannotPlanOffline(f"it needs {'an' if kind[0] in 'aeiou' else 'a'} "
                                            f"{kind}: attach one with --file or name it")
                args[name] = pool[index]
                used[kind] = index + 1
            elif name == "question":
                args[name] = facts.question or facts.body
            elif value in model.quotes and model.quotes.index(value) < len(facts.quotes):
                args[name] = facts.quotes[model.quotes.index(value)]
            else:
                args[name] = facts.body
        adapted.append({**subtask, "args": args})
    return adapted


def offline_plan(
    request: str,
    files: list[str],
    bank: PlanBank,
    *,
    max_subtasks: int,
    min_similarity: float = MIN_SIMILARITY,
    candidates: int = 5,
) -> OfflinePlan:
    """Plan ``request`` from the nearest examples that adapt into a valid plan.

    Raises:
        CannotPlanOffline: nothing similar enough, or no similar example adapts.
    """
    facts = read_request(request, files)
    tried: list[str] = []
    whole: OfflinePlan | None = None
    for example, similarity in bank.nearest(request, k=candidates):
        if similarity < min_similarity:
            break
        try:
            items = adapt(example, facts)
        except CannotPlanOffline as exc:
            tried.append(f"{example.id} ({similarity:.2f}): {exc}")
            continue
        _, problems = validate_plan(items, max_subtasks=max_subtasks)
        if not problems:
            whole = OfflinePlan(items, example.id, round(similarity, 3))
            break
        tried.append(f"{example.id} ({similarity:.2f}): {problems[0]}")
    composed = compose(request, facts, bank, max_subtasks=max_subtasks)
    if composed is not None and (whole is None or len(composed.items) > len(whole.items)):
        return composed
    if whole is not None:
        return whole
    why = ("; the closest examples did not fit: " + "; ".join(tried)) if tried else (
        f"; no example of the bank is similar enough (threshold {min_similarity})")
    raise CannotPlanOffline(f"cannot plan this request offline{why}")


CLAUSE_SIMILARITY = 0.45
"""A clause is one step of a composed plan when a one-step example is this close. A
composed plan wins over the whole-request example when it has more steps."""
_BACK_REFERENCE = re.compile(r"\b(it|its|that|this|them|the result|the output|the "
                             r"(?:caption|text|transcript|summary|translation|answer))\b",
                             re.IGNORECASE)


@lru_cache(maxsize=4)
def _one_step_bank(bank: PlanBank) -> PlanBank | None:
    singles = [e for e in bank.examples if len(e.plan) == 1]
    return PlanBank(singles) if singles else None


def compose(request: str, facts: RequestFacts, bank: PlanBank, *,
            max_subtasks: int) -> OfflinePlan | None:
    """A plan built clause by clause from one-step examples, each step fed by the latest
    earlier step whose output fits its input, by a file the clause names, or by the
    request's files; None when fewer than two clauses map to a step."""
    singles = _one_step_bank(bank)
    clauses = split_clauses(request)
    if singles is None or len(clauses) < 2:
        return None
    items: list[dict[str, Any]] = []
    produced: list[set[str]] = []
    similarities: list[float] = []
    for clause in clauses:
        example, similarity = singles.nearest(clause, k=1)[0]
        if similarity < CLAUSE_SIMILARITY:
            continue
        clause_facts = read_request(clause, [])
        try:
            step = adapt(example, _fed(_merged(clause_facts, facts), produced))[0]
        except CannotPlanOffline:
            continue
        task_type = get_task_type(str(step["task"]))
        if task_type is None:
            continue
        step = _link(step, task_type, clause, clause_facts, produced, facts)
        languages = clause_facts.more_languages if "tgt_lang" in step["args"] else []
        for variant in [step, *({**step, "args": {**step["args"], "tgt_lang": lang}}
                                for lang in languages)]:
            items.append({**variant, "id": len(items)})
            produced.append({o.kind for o in task_type.outputs})
            similarities.append(similarity)
    if len(items) < 2:
        return None
    _, problems = validate_plan(items, max_subtasks=max_subtasks)
    if problems:
        return None
    return OfflinePlan(items, "composed from one-step examples",
                       round(min(similarities), 3))


def _merged(clause: RequestFacts, request: RequestFacts) -> RequestFacts:
    """The clause's own facts, completed by the whole request's."""
    return RequestFacts(
        files={k: clause.files.get(k) or v for k, v in request.files.items()} | {
            k: v for k, v in clause.files.items() if k not in request.files},
        quotes=clause.quotes or request.quotes,
        target_language=clause.target_language or request.target_language,
        labels=clause.labels or request.labels,
        question=clause.question or request.question,
        body=clause.body if clause.quotes or ": " in clause.body else request.body,
    )


def _fed(facts: RequestFacts, produced: list[set[str]]) -> RequestFacts:
    """The facts with each file kind that the request does not give but an earlier step
    makes standing for that step's output ("read it aloud, then transcribe the audio":
    the audio is the speech made before)."""
    made = {kind: [f"<GENERATED>-{i}"] for i in range(len(produced))
            for kind in produced[i] if kind in DATA_KINDS - {"text"}}
    missing = {kind: refs for kind, refs in made.items() if not facts.files.get(kind)}
    if not missing:
        return facts
    return replace(facts, files={**facts.files, **missing})


def _link(step: dict[str, Any], task_type: Any, clause: str, clause_facts: RequestFacts,
          produced: list[set[str]], facts: RequestFacts) -> dict[str, Any]:
    """Feed the step's first data argument from an earlier step when that is meant: text
    always flows on; other kinds only when the clause names no file of its own but refers
    back ("it", "the result") or the request gives no such file."""
    data_args = [a for a in task_type.args if a.is_data and a.name in step["args"]]
    if not data_args:
        return step
    arg = data_args[0]
    kind = str(arg.kind)
    source = next((i for i in range(len(produced) - 1, -1, -1)
                   if kind in produced[i] or (kind == "text" and produced[i] & TEXT_LIKE)),
                  None)
    if source is None or clause_facts.files.get(kind) or clause_facts.quotes:
        return _with_deps(step)
    refers_back = bool(_BACK_REFERENCE.search(clause))
    if kind == "text" or refers_back or not facts.files.get(kind):
        linked = {**step["args"], arg.name: f"<GENERATED>-{source}"}
        return _with_deps({**step, "args": linked})
    return _with_deps(step)


def _with_deps(step: dict[str, Any]) -> dict[str, Any]:
    """The step depending on exactly the earlier steps its arguments name."""
    refs = {ref for value in step["args"].values() if (ref := generated_ref(value)) is not None}
    return {**step, "dep": sorted(refs)}
