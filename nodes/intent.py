"""What a subtask is asked to find out: the clause of the request it serves, with the text
to process masked, and, for the classification task types, the kind of answer asked for.

Why: ``text-classification`` covers sentiment, emotion, language identification and
more, and ``audio-classification`` covers keywords, sounds, a speaker's emotion or
language; the task type does not say which, the request's words do ("is it positive or
negative?"). Model cards must be compared with those words, never with the text to be
classified: a Dutch review is not a question about languages.

:func:`read_intent` gives the clause and the kind; ranking compares the cards with the
clause and keeps only the candidates whose kind fits (:func:`intent_part`).

What is hand-written, and what comes from the cards:

- hand-written: the lexicon's kinds (:data:`~hugginggpt.tools.lexicon.KINDS`: a few
  stems per kind, the choices a question offers for it, which kinds are related: an
  emotion question may fall back to a sentiment model), the kinds each task type serves
  (its declaration's ``kinds``), the words that start a negation, a question or an
  instruction, and a few stop words;
- from the cards: a card's kind is the kind whose stems its id and description use most,
  outside negated phrases (the language detector's card "says nothing about
  sentiment"); and a kind's cue words grow by the words of the descriptions' first
  sentences (what the model does) that two or more cards of that kind share and no
  card of another kind uses (with the shipped cards, "neutral" for sentiment);
- a kind counts only when some card of the task type has it or a related kind:
  "keyword" means nothing for a text classifier, but an emotion question keeps the
  sentiment models (and loses the language detector) where no card does emotion.

Words are matched without accents, so "négatif" and "emoción" count; a few Chinese stems
match inside a run of characters (正面, 情绪, 语言); other unspaced scripts get no cue
words (the embedding still compares the clause). A clause that holds
the subtask's text and another text ("is 'A' positive, and which language is 'B'?") is
narrowed to its part around the subtask's text, cut at commas and "and"/"but".
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from hugginggpt.nodes.planning.reading import PLACEHOLDER, mask, split_clauses
from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.lite.engines import embed, minilm_missing
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.languages import BY_NAME
from hugginggpt.tools.lexicon import KINDS

__all__ = ["ASKED_ONLY", "asks_a_kind", "KIND_WORDS", "RELATED", "Intent", "card_kind",
           "cue_words", "focus", "intent_clause", "intent_part", "read_intent"]

def asks_a_kind(task: str) -> bool:
    """Whether the task type's name does not say what is classified, as it declares
    (its :attr:`~hugginggpt.tools.experts.tasks.TaskType.kinds`)."""
    declared = get_task_type(task)
    return declared is not None and bool(declared.kinds)


def _served(task: str) -> frozenset[str]:
    declared = get_task_type(task)
    return frozenset(declared.kinds) if declared else frozenset()


KIND_WORDS: dict[str, tuple[str, ...]] = {name: kind.stems for name, kind in KINDS.items()}
"""Stems per kind (:data:`~hugginggpt.tools.lexicon.KINDS`)."""
ASKED_ONLY = frozenset(name for name, kind in KINDS.items() if kind.asked_only)
"""Kinds a model serves only when the request asks for them by name."""
RELATED = frozenset(frozenset({name, other}) for name, kind in KINDS.items()
                    for other in kind.related)
"""Kinds close enough that a model of one may answer a question about the other."""

MATCH, CLOSE = 2.0, -1.0
"""The ``intent`` part of a card of the kind asked for, and of a related kind."""

TEXT, THIS = "PASTEDTEXT", "OWNTEXT"
"""Placeholders: another quoted or pasted text, and the subtask's own text."""
_READABLE = {TEXT: "a text", THIS: "this text"}
_MAX_CLAUSES, _CLAUSE_CHARS = 12, 240
_WORD = re.compile(r"[^\W\d_]+")
_NEGATED = re.compile(r"\b(?:no|not|nothing about|never|cannot|without)\b[^.;:!?]*",
                      re.IGNORECASE)
_ASKS = re.compile(
    r"\?|^(?:please|can|could|would|will|tell|what|which|who|how|is|are|does|do|did|"
    r"classify|detect|identify|determine|find|say|give|analy[sz]e|check|recogni[sz]e|"
    r"label|guess|rate|est|quel|quelle|cual|welche|welcher)\b", re.IGNORECASE)
"""A clause that asks for something (a question, or an instruction's first word), as
against a sentence of a pasted text."""
_PARTS = re.compile(r"[,;]\s*(?:and\s+|but\s+)?|\s+(?:and|but)\s+", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP = frozenset({"only", "with", "from", "that", "this", "which", "their", "text",
                   "texts", "model", "labels", "label", "scores", "score", "classifies",
                   *BY_NAME})


@dataclass(frozen=True)
class Intent:
    """What the request asks of one subtask."""

    clause: str
    """The clause it serves, the texts masked ("Is this text positive or negative?")."""
    kind: str | None = None
    """The kind of answer asked for (a key of :data:`KIND_WORDS`), None when unclear."""
    cue: str | None = None
    """The request word that decided ``kind``."""


def focus(clauses: list[str], task_description: str) -> str:
    """The clause of a request that a subtask of this task type serves (the one closest
    in meaning to the task's description), so that ranking compares model cards with
    "tell me the sentiment of the text" rather than with the whole request."""
    if len(clauses) < 2:
        return clauses[0] if clauses else ""
    if minilm_missing() is not None:  # without MiniLM: the clause sharing most words
        described = set(_words(task_description))
        scores = [float(len(described.intersection(_words(c)))) for c in clauses]
        return clauses[scores.index(max(scores))]
    target, *vectors = embed([task_description, *clauses])
    scores = [sum(a * b for a, b in zip(target, v, strict=True)) for v in vectors]
    return clauses[scores.index(max(scores))]


def _plain(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    return [_plain(w) for w in _WORD.findall(text) if w not in (TEXT, THIS)]



def _matches(word: str, stem: str) -> bool:
    if _CJK.match(stem):  # no spaces between words: anywhere in the run
        return stem in word
    return word.startswith(stem) and len(word) - len(stem) <= 4


def _kind_counts(words: Iterable[str], cues: dict[str, frozenset[str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for word in words:
        for kind, stems in cues.items():
            if any(_matches(word, stem) for stem in stems):
                counts[kind] += 1
    return counts


def _unique_best(counts: Counter[str]) -> str | None:
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


@lru_cache(maxsize=512)
def _card_kind(model: str, description: str) -> str | None:
    said = _NEGATED.sub(" ", f"{model.replace('/', ' ')} {description}")
    seeds = {kind: frozenset(stems) for kind, stems in KIND_WORDS.items()}
    return _unique_best(_kind_counts(_words(said), seeds))


def card_kind(card: ModelCard | None) -> str | None:
    """The kind of answer the card's model gives, from its id and description; None
    when they do not tell (a general image classifier, a card without a description)."""
    return None if card is None else _card_kind(card.id, card.description)


@lru_cache(maxsize=64)
def _cues(cards: tuple[tuple[str, str], ...]) -> dict[str, frozenset[str]]:
    kinds = {model: _card_kind(model, text) for model, text in cards}
    seen: dict[str | None, Counter[str]] = {}
    for model, text in cards:
        what = _NEGATED.sub(" ", _SENTENCE.split(text, maxsplit=1)[0])  # what it does
        words = {w for w in _words(what) if len(w) >= 4 and w not in _STOP}
        seen.setdefault(kinds[model], Counter()).update(words)
    found = {}
    for kind in sorted({k for k in kinds.values() if k is not None}):
        others = {w for k, counter in seen.items() if k != kind for w in counter}
        shared = {w for w, n in seen[kind].items() if n >= 2 and w not in others}
        found[kind] = frozenset(KIND_WORDS[kind]) | shared
    return found


def cue_words(cards: Sequence[ModelCard]) -> dict[str, frozenset[str]]:
    """The kinds the task type's cards offer, each with the words (stems) that ask for
    it: the hand-written stems and the description words its cards share."""
    return _cues(tuple(sorted({(c.id, c.description) for c in cards})))


def _replace_whole(text: str, old: str, new: str) -> str:
    """``text`` with each occurrence of ``old`` that is not part of a longer word
    replaced ("hi" is not masked inside "which"); linear in the text's length."""
    found, start = [], 0
    while (at := text.find(old, start)) >= 0:
        end = at + len(old)
        inside = (at > 0 and text[at - 1].isalnum() and old[0].isalnum()) or (
            end < len(text) and text[end].isalnum() and old[-1].isalnum())
        if not inside:
            found.append((at, end))
        start = end if not inside else at + 1
    if not found:
        return text
    pieces, last = [], 0
    for at, end in found:
        pieces += [text[last:at], new]
        last = end
    return "".join([*pieces, text[last:]])


def _mask(request: str, literals: Sequence[str]) -> str:
    """The request with the subtask's own texts as :data:`THIS` and every other quoted
    or pasted text as :data:`TEXT`, as the planner masks them (:func:`mask`); a short
    question that ends a pasted text stays ("Review: <text> Is it positive?")."""
    masked = mask(request)
    own = {t.strip() for t in literals if t.strip()}

    def is_own(text: str) -> bool:
        return any(text == t or (min(len(text), len(t)) >= 20 and (t in text or text in t))
                   for t in own)

    instruction = PLACEHOLDER.sub(
        lambda m: f" {THIS if is_own(masked.texts[int(m.group(1))]) else TEXT} ",
        masked.instruction)
    for literal in sorted(own, key=len, reverse=True):  # a text the planner saw unquoted
        instruction = _replace_whole(instruction, literal, f" {THIS} ")
    if masked.pasted is not None:
        question = _SENTENCE.split(masked.texts[masked.pasted].rstrip())[-1]
        if question.endswith(("?", "？")) and len(question) < 200:
            instruction = f"{instruction.rstrip(' .')}. {question}"
    return instruction


def _bare(clause: str) -> bool:
    return not _words(clause)


def intent_clause(request: str, literals: Sequence[str], description: str,
                  prefer: Callable[[str], bool] | None = None) -> str:
    """The clause of ``request`` that a subtask serves, its texts masked: the clause that
    holds the subtask's own text (``literals``) when the request quotes or pastes it,
    else the clause nearest in meaning to the task's ``description`` (among those that
    ``prefer`` accepts, if any do: those with cue words, since MiniLM reads English only).

    A clause that is nothing but a text joins the one before it ("Is it positive? 'The
    food was cold.'"). Clauses that ask (a question, an instruction) come before the
    sentences of a pasted text. At most the first and last few clauses are read, each
    clipped, so that a long pasted text costs no more than a short one.
    """
    clauses: list[str] = []
    for clause in split_clauses(_mask(request, literals)):
        if clauses and (_bare(clause) or _bare(clauses[-1])):
            clauses[-1] = f"{clauses[-1]} {clause}"
        else:
            clauses.append(clause)
    if len(clauses) > _MAX_CLAUSES:
        clauses = clauses[: _MAX_CLAUSES - 4] + clauses[-4:]
    clauses = [c[:_CLAUSE_CHARS] for c in clauses]
    asking = [c for c in clauses if _ASKS.search(c)] or clauses
    own = next((c for c in asking if THIS in c), None)
    if own and TEXT in own:  # another subtask's text too: the part around this one's
        part = next(p for p in _PARTS.split(own) if THIS in p)
        own = part if len(_words(part)) >= 3 else own
    chosen = own or focus([c for c in asking if prefer and prefer(c)] or asking,
                          description)
    for placeholder, readable in _READABLE.items():
        chosen = chosen.replace(placeholder, readable)
    return re.sub(r"\s+(?=[?.!,;:])", "", " ".join(chosen.split()))


def _related(a: str, b: str) -> bool:
    return frozenset({a, b}) in RELATED


def _asked(counts: Counter[str], offered: set[str]) -> str | None:
    """The kind the clause's cue words ask for: the one counted most (a tie between
    related kinds goes to one the cards offer; any other tie tells nothing), if the
    cards offer it or a related kind ("keyword" means nothing to text classifiers)."""
    if not counts:
        return None
    top = max(counts.values())
    best = sorted(k for k, n in counts.items() if n == top)
    if any(not _related(a, b) for a in best for b in best if a != b):
        return None
    kind = next((k for k in best if k in offered), best[0])
    return kind if kind in offered or any(_related(kind, k) for k in offered) else None


def _choices(text: str) -> Counter[str]:
    """The kinds a question's offered choices ask for: languages ("afrikaans or dutch?")
    and opposite judgements ("good or bad?", "buena o mala"), whatever words surround
    them."""
    plain = PLACEHOLDER.sub(" ", text)
    return Counter({name: len(kind.choice.findall(plain)) for name, kind in KINDS.items()
                    if kind.choice}) + Counter()


def _first_cue(words: list[str], stems: frozenset[str]) -> str | None:
    """The first word that matches a stem (for Chinese, the first stem in the run)."""
    for word in words:
        if hits := sorted((word.find(s), s) for s in stems if _matches(word, s)):
            return hits[0][1] if _CJK.match(hits[0][1]) else word
    return None


def read_intent(request: str, task: str, literals: Sequence[str], description: str,
                cards: Sequence[ModelCard]) -> Intent:
    """The clause a subtask serves and, for :func:`asks_a_kind`, the kind asked for
    (:func:`_asked`; None when the words do not tell)."""
    if not asks_a_kind(task):
        return Intent(intent_clause(request, literals, description))
    offered = {kind: words for kind, words in cue_words(cards).items()
               if kind in _served(task)}  # as the task type declares: no sounds in texts
    cues = {kind: frozenset(stems) for kind, stems in KIND_WORDS.items()} | offered

    def asked(text: str) -> str | None:
        return _asked(_kind_counts(_words(text), cues) + _choices(text), set(offered))

    clause = intent_clause(request, literals, description, prefer=lambda c: bool(asked(c)))
    words = _words(clause)
    kind = asked(clause)
    if kind is None:
        return Intent(clause)
    choice = KINDS[kind].choice
    chosen = choice.search(PLACEHOLDER.sub(" ", clause)) if choice else None
    return Intent(clause, kind, _first_cue(words, cues[kind]) or (
        chosen.group(0) if chosen else None))


def intent_part(card: ModelCard | None, kind: str | None) -> float | None:
    """The ``intent`` part of a card's score: :data:`MATCH` for a card of the kind asked
    for, :data:`CLOSE` for a related kind, 0 when either kind is unknown, and None for a
    card of another kind: it is no candidate (a language detector never answers "is it
    positive?", not even as a fallback). A language detector answers only a question
    about languages: when the words ask for no kind it is no candidate either, since its
    answer (a language's name) would pass for what was asked."""
    own = card_kind(card)
    if kind is None:
        return None if own in ASKED_ONLY and card is not None \
            and asks_a_kind(card.task) else 0.0
    if own is None:
        return 0.0
    if own == kind:
        return MATCH
    return CLOSE if frozenset({own, kind}) in RELATED else None
