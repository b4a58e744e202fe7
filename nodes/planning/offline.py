"""The built-in planner for runs without an LLM: read the request, else adapt an example.

The planner reads the request clause by clause (:mod:`~hugginggpt.nodes.planning.steps`:
cue words in five languages, the files, texts, languages, labels and questions each
clause names, and which earlier output it refers back to). A clause that no cue covers
takes the task of the example bank's nearest one-step example. Only when no clause asks
for a step does the planner look at whole-request examples (:mod:`.bank`): an empty plan
for small talk, or the nearest example adapted to this request (its files, quoted texts,
target language, labels and questions replaced by this request's). When nothing fits,
the planner says it cannot plan the request offline, and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from hugginggpt.nodes.planning.bank import BankExample, PlanBank
from hugginggpt.nodes.planning.clauses import planning
from hugginggpt.nodes.planning.cues import cues_in
from hugginggpt.nodes.planning.declared import read_as
from hugginggpt.nodes.planning.reading import (
    PLACEHOLDER,
    RequestFacts,
    mask,
    read_request,
    told_before,
)
from hugginggpt.nodes.planning.steps import Clause, PlanReader, clauses_of
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.errors import ATTACH, HuggingGPTError
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from hugginggpt.tools.kinds import DATA_KINDS, REF_RE, generated_ref

__all__ = ["CannotPlanOffline", "OfflinePlan", "adapt", "offline_plan", "MIN_SIMILARITY",
           "asked_tasks", "only_asked"]

MIN_SIMILARITY = 0.45
"""Below this cosine similarity no example is taken as a model for the request."""


class CannotPlanOffline(HuggingGPTError):
    """No example fits the request well enough to plan it without an LLM (the fix: a file
    to attach, when the request lacks one)."""


@dataclass(frozen=True)
class OfflinePlan:
    items: list[dict[str, Any]]
    example_id: str
    """The bank example adapted, or how the plan was read ("read from the request")."""
    similarity: float

    def describe(self) -> str:
        """How the plan was made, for the run's ``planner`` field."""
        if self.example_id.startswith("read from"):
            return f"offline: {self.example_id}"
        what = "small talk like" if not self.items else "adapted"
        return f"offline: {what} bank example {self.example_id} (similarity {self.similarity:.2f})"


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
            elif name == "tgt_lang":
                args[name] = facts.target_language or value
            elif name == "src_lang":  # the example's source language is not this text's
                if facts.source_language:
                    args[name] = facts.source_language
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
                                            f"{kind}: attach one or name it", fix=ATTACH)
                args[name] = pool[index]
                used[kind] = index + 1
            elif name == "question":
                args[name] = facts.question or facts.body
            elif value in model.quotes and model.quotes.index(value) < len(facts.quotes):
                args[name] = facts.quotes[model.quotes.index(value)]
            elif not facts.quotes and facts.text_files:
                args[name] = facts.text_files[0]
            elif not facts.quotes and not planning(str(subtask.get("task"))).generative:
                raise CannotPlanOffline(  # the request's own words are not its text
                    f"{subtask.get('task')} needs a text to work on: quote it, paste it after "
                    "a colon, or attach a text file", fix=ATTACH)
            else:
                args[name] = facts.body
        adapted.append({**subtask, "args": args})
    return adapted


def _told_before() -> set[str]:
    """The task types whose text may be told before its question, as they declare."""
    return {t.name for t in task_types() if t.planning.told_before}
"""The steps a question may ask about the text told before it ("... is that positive?",
"... say that in French"): a summary of the sentence before "summarize this" is no
summary, and the user more likely forgot to attach the text."""


def offline_plan(
    request: str,
    files: list[str],
    bank: PlanBank,
    *,
    max_subtasks: int,
    min_similarity: float = MIN_SIMILARITY,
    candidates: int = 5,
) -> OfflinePlan:
    """Plan ``request`` (:func:`_read_plan`); a request whose text comes before its
    question ("the soup was cold and the waiter rude. good or bad review?"), read as
    asking for a text it does not quote, is read again with that text quoted after the
    question (:func:`~hugginggpt.nodes.planning.reading.told_before`), and that reading is
    kept when one of its steps works on that text and its cue words name every step.

    Raises:
        CannotPlanOffline: as :func:`_read_plan`, with the first reading's reason.
    """
    def read(text: str) -> OfflinePlan:
        return _read_plan(text, files, bank, max_subtasks=max_subtasks,
                          min_similarity=min_similarity, candidates=candidates)

    try:
        return read(request)
    except CannotPlanOffline as error:
        retold = told_before(request)
        if retold is None:
            raise
        try:
            plan = read(retold)
        except CannotPlanOffline:
            raise error from None
        text = mask(retold).texts[0]
        works_on_it = any(text in str(value) for item in plan.items
                          for value in (item.get("args") or {}).values())
        tasks = {i["task"] for i in plan.items}
        if not works_on_it or not tasks <= asked_tasks(retold) & _told_before():
            raise  # not a question about the text before it, or not a step it names
        return plan


def _read_plan(
    request: str,
    files: list[str],
    bank: PlanBank,
    *,
    max_subtasks: int,
    min_similarity: float,
    candidates: int,
) -> OfflinePlan:
    """Plan ``request`` by reading it clause by clause (:mod:`.steps`); when no clause
    asks for a step, take the nearest whole-request example of the bank (an empty plan
    for small talk, or an example adapted to this request).

    Embedding is done only when its result is used: when no clause has a cue word, the
    instruction (the request without its quoted and pasted texts) and the clauses are
    embedded in one batch; when cue words read a plan, nothing is embedded (the planner
    does not load its embedding model for such a request).

    Raises:
        CannotPlanOffline: nothing in the request asks for a step, and no example is
            similar enough or adapts into a valid plan.
    """
    masked = mask(request)
    clauses = clauses_of(masked)
    reader = PlanReader(masked, list(files))
    uncued = []
    cued = [bool(cues_in(c.plain)) for c in clauses]  # any kind of input might be at hand
    for clause in clauses:
        plain = PLACEHOLDER.sub(" ", clause.text)
        if not any(cued) and not clause.question and not clause.files and len(
                re.findall(r"\w+", plain)) >= 2:  # a word or two matches any example
            uncued.append(clause)
    whole: tuple[BankExample | None, float] | None = None
    by_clause: dict[int, tuple[BankExample | None, float]] = {}
    if uncued:
        nearest = _nearest_steps(bank, [masked.instruction, *(c.text for c in uncued)])
        whole, by_clause = nearest[0], dict(zip(map(id, uncued), nearest[1:], strict=True))
    from_bank: list[str] = []
    for position, clause in enumerate(clauses):
        plain = clause.plain
        clause.matches = cues_in(plain, reader.available(clause))
        if _answered_by_next(clause, clauses[position + 1:position + 2], reader):
            continue
        reader.problems += [
            f"{m.task} in {masked.restore(clause.text)!r} needs {_article(m.cue.needs)}: attach "
            "one or name it" for m in cues_in(plain)
            if m.cue.needs and m.cue.needs not in reader.available(clause)
            and not any(c.start < m.end and m.start < c.end for c in clause.matches)]
        fallback = None
        if id(clause) in by_clause:
            example, similarity = by_clause[id(clause)]
            if example is not None and similarity >= CLAUSE_SIMILARITY:
                fallback = str(example.plan[0]["task"])
                from_bank.append(f"{example.id} ({similarity:.2f})")
        for task, intent in reader.tasks(clause, fallback):
            reader.add(clause, task, intent)
    items = reader.finish()
    if items:
        items = items[:max_subtasks]
        _, problems = validate_plan(items, max_subtasks=max_subtasks)
        if not problems:
            how = "read from the request" + (
                f" (clauses matched to bank examples {', '.join(from_bank)})" if from_bank else "")
            return OfflinePlan(items, how, 1.0)
        raise CannotPlanOffline("cannot plan this request offline; the plan read from it is "
                                "invalid: " + "; ".join(problems[:3]))
    if not reader.problems and not masked.texts and not reader.files:
        whole_example, similarity = whole or _nearest_steps(bank, [masked.instruction])[0]
        if whole_example is None or not whole_example.plan or similarity < min_similarity:
            return OfflinePlan([], "read from the request: nothing in it needs an expert "
                               "model", 1.0)
    return _from_whole_request(request, files, bank, reader.problems,
                               max_subtasks=max_subtasks, min_similarity=min_similarity,
                               candidates=candidates)


def _answered_by_next(clause: Clause, following: list[Clause], reader: PlanReader) -> bool:
    """Whether the next clause says what to do with what this one names: a question asked
    again as an instruction ("did they name any competitors? list every company they
    mention"; "what's the difference between a.jpg and b.jpg? just describe each one"), or
    a file introduced for the next clause's question ("notice.png is a scanned notice.
    Who gets free entry?"). Then only the next clause is planned, with this one's files."""
    if clause.matches or not following or not (clause.question or clause.files):
        return False
    after = following[0]
    if after.files or (clause.question and after.question):
        return False
    ask = reader.tasks(clause, None)
    answer = [m.task for m in cues_in(after.plain, reader.available(after))]
    if not answer and after.question:  # "notice.png is a scanned notice. Who gets in free?"
        answer = [t for t, _ in reader.tasks(
            replace(after, files=clause.files, matches=[]), None)]
    needs = _needs_of([t for t, _ in ask])
    if not ask or not answer or not needs & _needs_of(answer):
        return False
    after.files = {**clause.files, **after.files}
    return True


def _needs_of(tasks: list[str]) -> set[str]:
    kinds = set()
    for task in tasks:
        task_type = get_task_type(task)
        kinds |= {str(a.kind) for a in task_type.args if a.required and a.is_data} if (
            task_type) else set()
    return kinds


def _article(kind: str | None) -> str:
    kind = kind or "input"
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _nearest_steps(bank: PlanBank, texts: list[str]) -> list[tuple[BankExample | None, float]]:
    """For the instruction (first) its nearest example; for each clause after it, its
    nearest one-step example; all embedded in one call."""
    singles = _one_step_bank(bank)
    found = bank.nearest_many(texts[:1], k=1) + (
        singles.nearest_many(texts[1:], k=1) if singles and texts[1:] else [
            [] for _ in texts[1:]])
    return [(hits[0] if hits else (None, 0.0)) for hits in found]


def _from_whole_request(request: str, files: list[str], bank: PlanBank, problems: list[str],
                        *, max_subtasks: int, min_similarity: float,
                        candidates: int) -> OfflinePlan:
    facts = read_request(request, files)
    asked = asked_tasks(request)
    tried: dict[str, list[str]] = {}  # why an example did not fit -> the examples
    for example, similarity in bank.nearest(request, k=candidates):
        if similarity < min_similarity:
            break
        if not example.plan:
            if facts.files or facts.text_files or problems:
                continue
            return OfflinePlan([], example.id, round(similarity, 3))
        seen = f"{example.id} ({similarity:.2f})"
        try:
            items = adapt(example, facts)
        except CannotPlanOffline as exc:
            tried.setdefault(str(exc), []).append(seen)
            continue
        steps = ", ".join(str(i["task"]) for i in items)
        if asked:
            items = only_asked(items, asked)
            if not items:
                tried.setdefault(f"it does {steps}, which the request does not ask for",
                                 []).append(seen)
                continue
        elif len(items) > 1 and similarity < CLAUSE_SIMILARITY:
            tried.setdefault(f"it does {steps}, more than the request says, and is not "
                             "close enough to take as it is", []).append(seen)
            continue
        _, invalid = validate_plan(items, max_subtasks=max_subtasks)
        if not invalid:
            return OfflinePlan(items, example.id, round(similarity, 3))
        tried.setdefault(invalid[0], []).append(seen)
    understood = (f"I read it as asking for {', '.join(sorted(_cued(request)))}"
                  if asked else "I found no step it asks for by name")
    if files:
        understood += f" (with {', '.join(files)})"
    why = [understood, *problems[:3]]
    if tried and problems:  # the problems say why; the examples only that none fits
        why.append("the closest examples did not fit (" + ", ".join(
            name for seen in tried.values() for name in seen) + ")")
    elif tried:
        why.append("the closest examples did not fit: " + "; ".join(
            f"{', '.join(seen)}: {reason}" for reason, seen in tried.items()))
    elif not problems:
        why.append(f"no example of the bank is similar enough (threshold {min_similarity})")
    raise CannotPlanOffline(
        f"cannot plan this request offline: {'; '.join(why)}. Rather than guess, I ask you "
        "to rephrase it (say what to do with which quoted text or attached file, one step "
        "per clause) or to plan it with an LLM", fix=ATTACH)


def _cued(request: str) -> set[str]:
    return {m.task for clause in clauses_of(mask(request)) for m in cues_in(clause.plain)}


def asked_tasks(request: str) -> set[str]:
    """The task types the request's cue words ask for, with what the reader may make of
    each; empty when no cue word names a step."""
    cued = _cued(request)
    return cued | {task for cue in cued for task in read_as(cue)}


def only_asked(items: list[dict[str, Any]], asked: set[str]) -> list[dict[str, Any]]:
    """An adapted example's plan without the steps the request does not ask for: a step
    whose output no other step uses, and whose task is not ``asked``, goes (then again,
    for the steps it used); ids and references are renumbered. An example that reads a
    text aloud or embeds it after the summary asked for gives the summary alone."""
    kept = list(items)
    while True:
        used = {ref for step in kept for ref in _sources(step)}
        dropped = [s for s in kept if s["id"] not in used and s["task"] not in asked]
        if not dropped:
            break
        kept = [s for s in kept if s not in dropped]
    number = {step["id"]: new for new, step in enumerate(kept)}
    return [{**step, "id": number[step["id"]],
             "dep": sorted(number[d] for d in _sources(step)),
             "args": {name: REF_RE.sub(lambda m: f"<GENERATED>-{number[int(m.group(1))]}",
                                       str(value))
                      for name, value in dict(step.get("args") or {}).items()}}
            for step in kept]


def _sources(step: dict[str, Any]) -> set[int]:
    return {int(d) for d in step.get("dep") or ()} | {
        int(k) for value in dict(step.get("args") or {}).values()
        for k in REF_RE.findall(str(value))}


CLAUSE_SIMILARITY = 0.6
"""A clause that no cue word covers is one step of the plan when a one-step example of
the bank is this close to it."""


@lru_cache(maxsize=4)
def _one_step_bank(bank: PlanBank) -> PlanBank | None:
    singles = [e for e in bank.examples if len(e.plan) == 1]
    return PlanBank(singles) if singles else None
