"""The built-in planner for runs without an LLM: retrieve a similar example, adapt it.

The example bank (:mod:`tools.plan_bank`) holds request -> plan pairs. For a new request
the planner takes the most similar examples (MiniLM embeddings) and adapts each in turn:
the example's files are replaced by this request's files of the same kind (attached, or
named in the request), its quoted texts by this request's quoted texts, its target
language by the one the request names, its labels and questions by this request's. The
first adapted plan that the validator accepts wins. When no example is similar enough,
or none can be adapted, the planner says it cannot plan the request offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from graph.validation import validate_plan
from tools.kinds import DATA_KINDS, generated_ref, is_url, kind_of_literal
from tools.plan_bank import FILE_RE, QUOTE_RE, BankExample, PlanBank, url_kind
from tools.tasks import get_task_type

__all__ = ["CannotPlanOffline", "OfflinePlan", "RequestFacts", "read_request", "adapt",
           "offline_plan", "MIN_SIMILARITY"]

MIN_SIMILARITY = 0.45
"""Below this cosine similarity no example is taken as a model for the request."""

LANGUAGES = {
    "english": "en", "french": "fr", "german": "de", "spanish": "es", "italian": "it",
    "portuguese": "pt", "dutch": "nl", "russian": "ru", "chinese": "zh", "mandarin": "zh",
    "japanese": "ja", "korean": "ko", "arabic": "ar", "hindi": "hi", "turkish": "tr",
    "polish": "pl", "swedish": "sv", "danish": "da", "norwegian": "no", "finnish": "fi",
    "romanian": "ro", "greek": "el", "czech": "cs", "ukrainian": "uk", "vietnamese": "vi",
    "indonesian": "id", "hebrew": "he", "hungarian": "hu", "thai": "th", "catalan": "ca",
}
_TARGET_RE = re.compile(
    r"\b(?:to|into|in)\s+(" + "|".join(LANGUAGES) + r")\b", re.IGNORECASE)
_LABELS_RE = re.compile(
    r"\b(?:labels?|categories|classes|topics|as|into|between|among|one of|about)\s*:?\s+"
    r"([\w -]+(?:\s*,\s*[\w -]+)+|[\w-]+\s+or\s+[\w-]+)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class CannotPlanOffline(Exception):
    """No example fits the request well enough to plan it without an LLM."""


@dataclass(frozen=True)
class OfflinePlan:
    items: list[dict[str, Any]]
    example_id: str
    similarity: float


@dataclass
class RequestFacts:
    """What adaptation takes from a request."""

    files: dict[str, list[str]] = field(default_factory=dict)
    quotes: list[str] = field(default_factory=list)
    target_language: str | None = None
    labels: str | None = None
    question: str | None = None
    body: str = ""


def _quotes(text: str) -> list[str]:
    return [next(g for g in m.groups() if g).strip() for m in QUOTE_RE.finditer(text)]


def read_request(request: str, attached: Sequence[str] = ()) -> RequestFacts:
    """Files (attached first, then named in the request, in order), quoted texts, the
    target language, candidate labels, a question and the text to work on."""
    facts = RequestFacts(quotes=_quotes(request))
    unquoted = QUOTE_RE.sub(" ", request)
    for value in [*attached, *(m.group(0).rstrip(".") for m in FILE_RE.finditer(unquoted))]:
        kind = kind_of_literal(value) if not is_url(value) else url_kind(value)
        names = facts.files.setdefault(kind, [])
        if kind in DATA_KINDS - {"text"} and value not in names and not any(
            PurePosixPath(value).name == PurePosixPath(n).name for n in names
        ):
            names.append(value)
    if match := _TARGET_RE.search(unquoted):
        facts.target_language = LANGUAGES[match.group(1).lower()]
    if match := _LABELS_RE.search(unquoted):
        words = re.split(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+", match.group(1))
        labels = [w.strip() for w in words if w.strip()]
        facts.labels = ", ".join(labels) if len(labels) > 1 else None
    questions = [q for q in facts.quotes if q.endswith("?")] or [
        s for s in _SENTENCE_END.split(unquoted) if s.strip().endswith("?")]
    facts.question = questions[0].strip() if questions else None
    parts = re.split(r":\s+", request, maxsplit=1)  # "Summarise this: <text>"
    after = parts[1].strip() if len(parts) == 2 else ""
    facts.body = (" ".join(facts.quotes) or (after if len(after) > 20 else request)).strip()
    return facts


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
            return OfflinePlan(items, example.id, round(similarity, 3))
        tried.append(f"{example.id} ({similarity:.2f}): {problems[0]}")
    why = ("; the closest examples did not fit: " + "; ".join(tried)) if tried else (
        f"; no example of the bank is similar enough (threshold {min_similarity})")
    raise CannotPlanOffline(f"cannot plan this request offline{why}")
