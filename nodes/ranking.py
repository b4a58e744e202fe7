"""Candidate models for a task type: filtered by the backends a run may use and by
availability, ranked by backend preference, then by a score from the model card.

The score (higher is better) adds these parts, each kept in ``RankedCandidate.parts`` so
a choice can be explained:

- ``popularity``: log10(downloads + 1) + 0.5 * log10(likes + 1), about 0 to 12;
- ``language``: +1 when the card lists the request's language (or "multilingual"),
  -2 when it lists languages but not that one, 0 when it lists none or the request's
  language is unknown;
- ``similarity``: 3 * cosine similarity of MiniLM embeddings of the intent (the clause
  of the request the subtask serves, its quoted or pasted texts masked: "is this text
  positive or negative?", never the text itself) and of the card's description, about
  -0.5 to 2.5; computed only when there are several candidates to tell apart;
- ``intent`` (text, audio and image classification, when the request's words say what
  is asked: sentiment, emotion, language, ...): +2 for a card of that kind, -1 for a
  related kind (a sentiment model for an emotion question), 0 when the card does not
  say; a card of another kind is not a candidate at all (a language detector never
  answers "is it positive?", not even as a fallback). See :mod:`hugginggpt.nodes.intent`
  for the cue words and what is hand-written;
- ``target`` (translation only): +2 when the card lists the target language; a model
  whose card lists languages without the target is not a candidate at all (an
  English-to-German model never translates into French, not even as a fallback);
- ``latency``: with a latency budget B, -2 * (latency - B) / B when the card's expected
  latency exceeds B (at most -4); without a budget, -0.3 * log10(1 + latency);
- ``warm``: +0.1 when the model is already loaded where the backend would run it (a
  replica of the expert tier holds it): a tie-breaker among near equals.

A model that cannot read the subtask's text is not a candidate at all: when the card
lists languages (not "multilingual") and lingua gives them together much less than the
text's likeliest language (:func:`~hugginggpt.tools.experts.lite.languages.reads`, on
``Query.text_languages``, left empty for a text of a word or two): VADER never reads a
Spanish review. A text lingua cannot place
rules nothing out; an unsure one weighs in only through ``language``.

A specialist (a card with ``subjects``, such as the lite face detector) is a candidate only
when the subtask's clause of the request uses one of its words: a request for the cars in
a photo never gets a face detector, not even as a fallback.

The language parts come from the subtask's own text (a French request may ask about an
English text); the intent from the request's words about it.

Which models can run at all is :mod:`hugginggpt.tools.experts.availability`'s job;
choosing among close candidates is the select node's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from hugginggpt.nodes.intent import focus, intent_part
from hugginggpt.tools.experts.availability import backend_order
from hugginggpt.tools.experts.availability import runnable as runnable_models
from hugginggpt.tools.experts.catalog import Catalog, ModelCard
from hugginggpt.tools.experts.lite.engines import embed, minilm_missing
from hugginggpt.tools.experts.lite.languages import reads
from hugginggpt.tools.experts.registry import ANY_TASK, Tool, registered_tools

__all__ = ["Query", "RankedCandidate", "focus", "rank_candidates", "serves_subject"]


@dataclass(frozen=True)
class Query:
    """What the ranking knows about the subtask."""

    text: str = ""
    language: str | None = None
    latency_budget_s: float | None = None
    target_language: str | None = None
    """For translation: the language the output must be in."""
    intent: str | None = None
    """For the classification task types: the kind of answer the request asks for
    (``sentiment``, ``language``, ...; :mod:`hugginggpt.nodes.intent`)."""
    text_languages: tuple[tuple[str, float], ...] = ()
    """The subtask's own text's languages by lingua, ``(code, probability)`` most likely
    first; empty when it has no literal text (or none lingua can place)."""


@dataclass(frozen=True)
class RankedCandidate:
    model: str
    backend: str
    score: float
    card: ModelCard | None
    parts: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def expected_latency_s(self) -> float:
        return self.card.expected_latency_s if self.card else 1.0


_WORD = re.compile(r"[^\W\d_]+")


def serves_subject(card: ModelCard | None, text: str) -> bool:
    """Whether ``text`` asks for what the card's model serves: always for a general model
    (no ``subjects``), else when the text uses one of the card's words."""
    if card is None or not card.subjects:
        return True
    return not set(card.subjects).isdisjoint(_WORD.findall(text.lower()))


def _language_part(card: ModelCard, language: str | None) -> float:
    if language is None or not card.languages:
        return 0.0
    return 1.0 if language in card.languages or "multilingual" in card.languages else -2.0


def _latency_part(card: ModelCard, budget: float | None) -> float:
    latency = card.expected_latency_s
    if budget:
        return -min(4.0, 2.0 * max(0.0, latency - budget) / budget)
    return -0.3 * math.log10(1 + latency)


def _score(card: ModelCard | None, query: Query, similarity: float | None) -> dict[str, float]:
    if card is None:
        return {}
    parts: dict[str, float] = {
        "popularity": math.log10(card.downloads + 1) + 0.5 * math.log10(card.likes + 1),
        "language": _language_part(card, query.language),
        "latency": _latency_part(card, query.latency_budget_s),
    }
    if query.target_language:  # a model that cannot write the target language is no use
        parts["target"] = 2 * _language_part(card, query.target_language)
    if query.intent is not None:
        parts["intent"] = intent_part(card, query.intent) or 0.0
    if similarity is not None:
        parts["similarity"] = 3.0 * similarity
    return {k: round(v, 3) for k, v in parts.items()}


def rank_candidates(
    task: str, catalog: Catalog, mode: str, query: Query | None = None
) -> list[RankedCandidate]:
    """Every available (model, backend) that can run ``task``, best first.

    Models come from the catalog and from the tools (named models and their cards); a
    model is a candidate on a backend when a tool there serves it and says it can run it
    now. Backends are ordered by the run's preference, then candidates by score.
    """
    query = query or Query()
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK)]
    order = backend_order(mode, sorted({t.backend for t in tools}))
    runnable = [
        (model, card, backends)
        for model, (card, backends) in runnable_models(task, catalog, mode).items()
        if not (card and query.target_language
                and _language_part(card, query.target_language) < 0)  # cannot write it
        if serves_subject(card, query.text)
        if card is None or reads(card.source_languages or card.languages,
                                 query.text_languages)  # can read the text
        if intent_part(card, query.intent) is not None  # answers what was asked
    ]
    described = [card for _, card, _ in runnable if card is not None and card.description]
    similarities: dict[str, float] = {}
    if query.text and len(described) > 1 and minilm_missing() is None:
        query_vec, *card_vecs = embed([query.text, *(c.description for c in described)])
        similarities = {
            card.id: sum(a * b for a, b in zip(query_vec, vec, strict=True))
            for card, vec in zip(described, card_vecs, strict=True)
        }
    found = []
    for model, card, backends in runnable:
        parts = _score(card, query, similarities.get(model))
        for backend in backends:
            with_warm = parts | ({"warm": WARM} if _warm(tools, backend, model) else {})
            found.append(RankedCandidate(model, backend, round(sum(with_warm.values()), 3),
                                         card, with_warm))
    return sorted(found, key=lambda c: (order.index(c.backend), -c.score))


WARM = 0.1
"""What a model already loaded where it would run adds to its score (a shared tier's
replica holds it): it decides between near equals, never against a clearly better
model (it is under the selection margin)."""


def _warm(tools: list[Tool], backend: str, model: str) -> bool:
    return any(t.warm is not None and t.backend == backend and t.warm(model) for t in tools)
