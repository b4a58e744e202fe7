"""How sure an engine was of its result, and when that is too little to trust.

An engine that reports a confidence passes it on: PocketSphinx's word posteriors, RapidOCR's
line scores, a classifier's probabilities, a similarity's margin, VADER's compound score.
The result carries it as a :class:`Confidence`; below the thresholds of
:data:`THRESHOLDS` the result is *uncertain*, and the answer says so and why. A later step
computed from an uncertain result is uncertain too (the executor marks it), and a step
whose input is *unusable* (below a floor) is skipped rather than run as if it were fine.

How a tool reports one: a tool that takes a :class:`~hugginggpt.tools.experts.registry.
ToolContext` sets ``ctx.confidence`` (as the ``llm`` backend sets ``ctx.endpoint``); its
return value stays its outputs, so callers that use the function directly are unchanged.
A classifier that reports nothing (a transformers pipeline, a hosted model) is judged
from its label scores by :func:`from_labels` when they are probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from hugginggpt.tools.experts.tasks import get_task_type

__all__ = ["Confidence", "Threshold", "THRESHOLDS", "from_labels",
           "from_speech", "from_ocr", "from_vader", "from_cosines", "from_lookup", "inherited",
           "not_probabilities", "MIN_MARGIN", "MIN_COSINE", "MIXED_RATIO", "MIN_WORDS_PER_S",
           "UNUSABLE_WORDS_PER_S"]


class Confidence(BaseModel):
    """An engine's confidence in a result, and what follows from it (JSON-able: it is
    checkpointed with the result and shown in ``--json``)."""

    score: float | None = None
    """The engine's own measure, 0..1 (None: it reports none, the result only inherits
    doubt from its inputs)."""
    measure: str = ""
    """What ``score`` is, in words ("PocketSphinx's mean word posterior")."""
    uncertain: str | None = None
    """Why the result may be wrong, in full (the engine's doubt, and the uncertain inputs
    it was computed from); None: sure enough."""
    reason: str | None = None
    """The engine's own doubt alone (None: it was sure enough, or reports nothing)."""
    unusable: bool = False
    """Below the floor: too unsure for a later step to run on it (its dependents are
    skipped, saying why); the result itself is still shown, marked uncertain."""
    inherited: list[int] = Field(default_factory=list)
    """Ids of the dependencies whose uncertain results this one was computed from."""


@dataclass(frozen=True)
class Threshold:
    """Below ``uncertain`` a result is marked uncertain; below ``unusable`` (when set) a
    later step does not run on it."""

    measure: str
    uncertain: float
    unusable: float | None = None
    why: str = ""


THRESHOLDS: dict[str, Threshold] = {
    "word posterior": Threshold(
        "PocketSphinx's mean word posterior (each word's lattice posterior, weighted by "
        "its length in frames)", 0.5, 0.1,
        "of 8 clear eSpeak sentences, 6 scored 0.59-0.72 and the two under 0.5 (0.41, "
        "0.12) were partly or wholly misheard; of 35 garbled recordings that gave words "
        "(sped up 1.5x or 2x, reversed, in noise, French, German, Spanish or Italian "
        "voices), 29 scored under 0.5 and 4 under 0.1"),
    "line score": Threshold(
        "RapidOCR's recognition score of the weakest line read", 0.9, None,
        "on five printed lines rendered clean, small, blurred, noisy or shrunk, lines read "
        "right scored 0.91-1.0 and misread ones 0.78-0.97: the three under 0.9 were all "
        "misread, and the lines' average stayed over 0.88 even when most were misread"),
    "probabilities": Threshold(
        "the top label's probability, and its margin over the second", 0.5, None,
        "uncertain when the top probability is under 0.5 or leads the second by under "
        "0.15 (:data:`MIN_MARGIN`)"),
    "cosine margin": Threshold(
        "the best label's cosine margin over the second", 0.08, None,
        "lite MiniLM on 7 texts: distinct labels on a topical text led by 0.12-0.32; "
        "near-synonyms (film/movies/cinema, finance/economy/money) by 0.03-0.06, "
        "finance over business 0.076, and an off-topic text ('I walked to the shop.') "
        "0.075, its best cosine 0.05 (topical texts' best: 0.14-0.44; under "
        ":data:`MIN_COSINE` no label fits)"),
    "look-up margin": Threshold(
        "the best line's cosine margin over the next line", 0.1, None,
        "on a five-line receipt, five questions with an answer line led by 0.28-0.62; "
        "three without one ('What is the price?', 'What did I buy?', 'Who is the "
        "customer?') by 0.007-0.096"),
    "compound": Threshold(
        "VADER's |compound| score", 0.5, None,
        "a single mild cue word scores about 0.44 ('good'), so under 0.5 the verdict "
        "rests on one weak cue; also uncertain when words against the verdict weigh at "
        "least half as much as those for it (VADER's own pos/neg proportions)"),
}
"""The thresholds, per engine's measure (a transcript's word posteriors, an OCR line's
score, a classifier's probabilities, zero-shot cosines, a document look-up's margin,
VADER's compound), in one place: the "Uncertain results" section of the documentation's
"How a run ends" page (docs/concepts/run-end.md) repeats them. ``probabilities`` holds for
every task type whose labels are alternatives
(:attr:`~hugginggpt.tools.experts.tasks.TaskType.picks_one`)."""

MIN_COSINE = 0.1
"""Zero-shot by cosine: a best label under this fits the text no better than unrelated
labels do."""
MIN_MARGIN = 0.15
"""A classifier's top probability must lead the second by this much."""
MIXED_RATIO = 0.5
"""VADER: the words against the verdict weigh at least this share of those for it."""

def not_probabilities(cards: Sequence[Any], model: str) -> bool:
    """Whether the model's card says its scores are not probabilities (cosines, a
    detector's scores): then they say nothing about how sure it was."""
    return any(card.id == model and "not probabilities" in f"{card.description} {card.limits}"
               for card in cards)


MIN_WORDS_PER_S = 1.5
"""Fewer words heard per second of sound than this (90 a minute; people speak 120 to 180,
eSpeak's clear speech gave 2.6-4.4) means most of the speech was not recognised."""
UNUSABLE_WORDS_PER_S = 0.5
"""A word every two seconds of sound or fewer: a whistle heard as "oh" (0.3), not speech
the recogniser knows; the transcript is not passed on."""


def from_speech(posterior: float | None, words_per_s: float | None = None,
                engine: str = "PocketSphinx") -> Confidence:
    """A transcript's confidence from the recogniser's mean word posterior, and from how
    many words it heard for the length of the sound (a word or two over seconds of sound
    comes with a high posterior, having had no rival)."""
    limit = THRESHOLDS["word posterior"]
    if posterior is None:
        return Confidence()
    score = round(posterior, 3)
    unusable = (limit.unusable is not None and posterior < limit.unusable) or (
        words_per_s is not None and words_per_s < UNUSABLE_WORDS_PER_S)
    uncertain = None
    if posterior < limit.uncertain:
        uncertain = (f"the transcript may be wrong: {engine} was unsure (confidence "
                     f"{score:.2f}, under {limit.uncertain:g})")
    elif words_per_s is not None and words_per_s < MIN_WORDS_PER_S:
        uncertain = (f"the transcript may be incomplete or wrong: {engine} heard only "
                     f"{words_per_s:.1f} words per second of sound (speech has 2 to 3)")
    if uncertain and unusable:
        uncertain += "; too unsure to use for a later step"
    return Confidence(score=score, measure=limit.measure, uncertain=uncertain,
                      reason=uncertain, unusable=unusable)


def from_ocr(scored: Sequence[tuple[str, float]], engine: str = "RapidOCR") -> Confidence:
    """The text read from an image, judged by its weakest line: RapidOCR scores the lines
    it reads well at 0.95 and over, and one misread line does not show in an average."""
    if not scored:
        return Confidence()
    text, weakest = min(scored, key=lambda line: line[1])
    score = round(weakest, 3)
    limit = THRESHOLDS["line score"]
    uncertain = (f"the text may be misread: {engine} was unsure of the line {text[:60]!r} "
                 f"(confidence {score:.2f}, under {limit.uncertain:g})"
                 ) if score < limit.uncertain else None
    return Confidence(score=score, measure=limit.measure, uncertain=uncertain, reason=uncertain)


def from_labels(task: str, labels: Any) -> Confidence | None:
    """A classifier's confidence from its labels' scores, when they are alternatives'
    probabilities (each in 0..1, summing to at most 1); None when they are not."""
    task_type = get_task_type(task)
    if task_type is None or not task_type.picks_one or not isinstance(labels, list):
        return None
    given = [item.get("score") for item in labels if isinstance(item, dict)]
    scores = [s for s in given if isinstance(s, float) and 0.0 <= s <= 1.0]
    if not scores or len(scores) != len(given):
        return None
    ranked = sorted(scores, reverse=True)
    if sum(ranked) > 1.01:  # independent (multi-label) scores: the margin means nothing
        return None
    top = ranked[0]
    margin = top - (ranked[1] if len(ranked) > 1 else 0.0)
    measure = THRESHOLDS["probabilities"].measure
    uncertain = None
    if top < THRESHOLDS["probabilities"].uncertain:
        uncertain = f"the model was unsure: its top label has a probability of {top:.2f}"
    elif margin < MIN_MARGIN:
        uncertain = (f"the model was unsure: its top two labels are close ({top:.2f} and "
                     f"{ranked[1]:.2f})")
    return Confidence(score=round(top, 3), measure=measure, uncertain=uncertain,
                      reason=uncertain)


def from_cosines(cosines: Sequence[float], engine: str) -> Confidence:
    """Labels scored by cosine similarity: how far the best leads the second."""
    ranked = sorted(cosines, reverse=True)
    if not ranked:
        return Confidence()
    margin = round(ranked[0] - ranked[1], 3) if len(ranked) > 1 else 1.0
    limit = THRESHOLDS["cosine margin"]
    uncertain = None
    if ranked[0] < MIN_COSINE:
        uncertain = (f"no label fits the text well ({engine}: the best cosine is "
                     f"{ranked[0]:.2f}, under {MIN_COSINE:g})")
    elif margin < limit.uncertain:
        uncertain = (f"{engine} could hardly tell the top labels apart (cosines "
                     f"{ranked[0]:.2f} and {ranked[1]:.2f}, a margin under "
                     f"{limit.uncertain:g})")
    return Confidence(score=margin, measure=limit.measure, uncertain=uncertain, reason=uncertain)


def from_lookup(lines: Sequence[tuple[str, float]], ocr: Confidence | None) -> Confidence:
    """A look-up's answer line: how far its cosine with the question leads the next
    line's, with the OCR's doubt (``ocr``) kept."""
    ranked = sorted(lines, key=lambda line: -line[1])
    margin = round(ranked[0][1] - ranked[1][1], 3) if len(ranked) > 1 else 1.0
    limit = THRESHOLDS["look-up margin"]
    reasons = [ocr.reason] if ocr is not None and ocr.reason else []
    if margin < limit.uncertain:
        reasons.append(f"two lines fit the question almost equally: {ranked[0][0][:60]!r} "
                       f"({ranked[0][1]:.2f}) and {ranked[1][0][:60]!r} ({ranked[1][1]:.2f})")
    reason = "; ".join(reasons) or None
    return Confidence(score=margin, measure=limit.measure, uncertain=reason, reason=reason)


def from_vader(scores: dict[str, float]) -> Confidence:
    """VADER's verdict judged on its own outputs: weak when |compound| is small (its
    percentages are not probabilities), mixed when words against the verdict weigh
    nearly as much as those for it."""
    compound = float(scores["compound"])
    pos, neg = float(scores["pos"]), float(scores["neg"])
    limit = THRESHOLDS["compound"]
    verdict = "positive" if compound >= 0.05 else "negative" if compound <= -0.05 else ""
    reasons = []
    if not verdict:
        reasons.append("VADER found none of its sentiment words in the text, so it has "
                       "nothing to go on" if max(pos, neg) == 0 else
                       f"VADER's positive and negative words cancel out (proportions: "
                       f"{pos:.2f} positive, {neg:.2f} negative), so it cannot tell which "
                       "way the text leans")
    else:
        against, for_ = (neg, pos) if compound > 0 else (pos, neg)
        if against > 0 and against >= MIXED_RATIO * for_:
            reasons.append(f"leaning {verdict}: the text has both positive and negative "
                           f"words (VADER's proportions: {pos:.2f} positive, {neg:.2f} "
                           "negative)")
        elif abs(compound) < limit.uncertain:
            reasons.append(f"leaning {verdict}: VADER's evidence is weak (compound "
                           f"{compound:+.2f}, under {limit.uncertain:g}; its percentage is "
                           "not a probability)")
    reason = "; ".join(reasons) or None
    return Confidence(score=round(abs(compound), 3), measure=limit.measure, uncertain=reason,
                      reason=reason)


def inherited(own: Confidence | None, uncertain_inputs: dict[int, str]) -> Confidence | None:
    """A result's confidence once its inputs are counted: computed from uncertain results
    (``{dependency id: what it was}``), it is uncertain too, saying from what."""
    if not uncertain_inputs:
        return own
    what = "; ".join(f"{name} (subtask {dep})" for dep, name in uncertain_inputs.items())
    reason = f"computed from an uncertain {what}"
    base = own or Confidence()
    return base.model_copy(update={
        "uncertain": f"{base.uncertain}; and {reason}" if base.uncertain else reason,
        "inherited": sorted(uncertain_inputs)})
