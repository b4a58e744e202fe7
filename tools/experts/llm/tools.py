"""The ``llm`` backend's tools: one per text task type, each a prompt to the run's LLM
and a check of its answer.

Free-text tasks (summaries, translations, answers, generated text) take the reply as
the output. Classifications and entities are asked for by structured output and held
to what the task promises: a sentiment is one of three labels with a confidence, a
zero-shot answer scores exactly the given labels, and an entity is a span of the input
(found in it, with its offsets; a name the input does not contain is dropped).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from hugginggpt.tools.errors import ToolExecutionError, ToolOutputError
from hugginggpt.tools.experts.llm import prompts
from hugginggpt.tools.experts.registry import ToolContext
from hugginggpt.tools.languages import code_of, name_of

__all__ = [
    "ControllerLLM", "controller_llm", "MAX_TEXT_CHARS", "MAX_LABELS", "EXPERTS", "expert",
    "summarization", "translation", "question_answering", "text_generation",
    "text2text_generation", "conversational", "text_classification",
    "zero_shot_classification", "token_classification",
]

MAX_TEXT_CHARS = 40_000
"""The longest input sent (about 10,000 tokens): within every current model's context,
and a bound on what one subtask can spend of the run's token budget."""
MAX_LABELS = 50
LONG_TEXT_CHARS = 8_000
"""Inputs longer than this ask for one tier more: small models lose track of long texts."""


@dataclass(frozen=True)
class Expert:
    """One text task type the run's LLM does: its tool, what the card says it does, the
    capability tier it needs (1 small, 2 medium, 3 large: translation between any two
    languages and exact entity spans are where small models slip) and its latency."""

    tool: Callable[..., Any]
    does: str
    need: int
    latency_s: float


EXPERTS: dict[str, Expert] = {}
"""Task type -> what the run's LLM does for it, as the tools below register it."""


def expert(task: str, does: str, *, need: int = 1, latency_s: float = 3.0
           ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the llm backend's tool for ``task``."""
    def register(tool: Callable[..., Any]) -> Callable[..., Any]:
        EXPERTS[task] = Expert(tool, does, need, latency_s)
        return tool
    return register


SENTIMENTS = ("POSITIVE", "NEGATIVE", "NEUTRAL")
_ENTITY_GROUPS = {"PERSON": "PER", "ORGANIZATION": "ORG", "ORGANISATION": "ORG",
                  "LOCATION": "LOC", "PLACE": "LOC", "GPE": "LOC"}


class ControllerLLM(Protocol):
    """The run's LLM as the execute stage lends it to this backend
    (:class:`hugginggpt.tools.llm.expert.SubtaskLLM`)."""

    def ask(self, messages: list[BaseMessage], *, need: int,
            schema: dict[str, Any] | None = None) -> tuple[str, str]:
        """The reply's text (with a ``schema``, the answer as JSON) and the name of the
        endpoint that gave it."""
        ...


_CONTROLLER: ContextVar[ControllerLLM | None] = ContextVar("controller_llm", default=None)


@contextmanager
def controller_llm(llm: ControllerLLM | None) -> Iterator[None]:
    """Lend the run's LLM to this backend's tools for the duration of the block (threads
    started through :func:`hugginggpt.tools.threads.in_thread` inherit it)."""
    token = _CONTROLLER.set(llm)
    try:
        yield
    finally:
        _CONTROLLER.reset(token)


# ------------------------------------------------------------------ asking

def _checked(text: str, what: str = "text") -> str:
    if not text.strip():
        raise ToolExecutionError(f"llm expert: the {what} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ToolExecutionError(
            f"llm expert: the {what} has {len(text)} characters, more than the "
            f"{MAX_TEXT_CHARS} it sends to an LLM; summarise or split it first")
    return text


def _ask(task: str, prompt: str, ctx: ToolContext, size: int,
         schema: type[BaseModel] | None = None) -> str:
    """Ask the run's LLM; the endpoint that answered goes on ``ctx``."""
    llm = _CONTROLLER.get()
    if llm is None:
        raise ToolExecutionError("llm expert: no LLM was lent to this subtask (the llm "
                                 "backend runs inside a run's execute stage)")
    need = min(3, EXPERTS[task].need + (size > LONG_TEXT_CHARS))
    text, endpoint = llm.ask(
        [SystemMessage(prompts.EXPERT_SYSTEM), HumanMessage(prompt)], need=need,
        schema=schema.model_json_schema() if schema is not None else None)
    ctx.endpoint = endpoint
    return text


_FENCE = re.compile(r"^```[a-zA-Z]*\n(.*)\n```$", re.DOTALL)


def _reply(task: str, text: str) -> str:
    """A free-text answer, with a stray code fence taken off; none at all is a failure."""
    text = text.strip()
    if fenced := _FENCE.match(text):
        text = fenced.group(1).strip()
    if not text:
        raise ToolOutputError(f"the LLM gave an empty {task} answer")
    return text


def _structured(task: str, text: str, model: type[BaseModel]) -> Any:
    """The structured answer: the reply's JSON (as a whole, else its outermost object)."""
    candidates = [text.strip()]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{"): text.rindex("}") + 1])
    problem = "it is not JSON"
    for candidate in candidates:
        try:
            return model.model_validate(json.loads(candidate))
        except ValueError as exc:  # JSONDecodeError and ValidationError alike
            problem = (f"{exc.error_count()} problem(s): {exc.errors()[0]['msg']}"
                       if isinstance(exc, ValidationError) else problem)
    raise ToolOutputError(f"the LLM's {task} answer is unusable ({problem}): {text[:200]!r}")


# ------------------------------------------------------------------ free text

@expert("summarization",
        "Abstractive summary in a few sentences, in the text's own language.")
def summarization(text: str, ctx: ToolContext) -> str:
    """An abstractive summary of the text, in its language, by the run's LLM."""
    prompt = prompts.SUMMARIZATION.format(task="summarization", text=_checked(text))
    return _reply("summarization", _ask("summarization", prompt, ctx, len(text)))


def _language(value: str | None) -> str:
    code = code_of(value) or "en"
    name = name_of(code)
    return name if name == code else f"{name} ({code})"


@expert("translation", "Translation between any two languages the LLM knows (into English "
        "when no target is given).", need=2)
def translation(text: str, ctx: ToolContext, tgt_lang: str | None = None,
                src_lang: str | None = None) -> str:
    """The text translated into ``tgt_lang`` (English when none is given) from any
    language, by the run's LLM."""
    source = f"from {_language(src_lang)} " if src_lang else ""
    prompt = prompts.TRANSLATION.format(task="translation", text=_checked(text), source=source,
                                        target=_language(tgt_lang))
    return _reply("translation", _ask("translation", prompt, ctx, len(text)))


@expert("question-answering", "A short answer to a question from the given text alone "
        "(says when the text does not say).", latency_s=2.0)
def question_answering(question: str, text: str, ctx: ToolContext) -> str:
    """A short answer to the question from the context text, by the run's LLM."""
    prompt = prompts.QUESTION_ANSWERING.format(
        task="question-answering", question=_checked(question, "question"), text=_checked(text))
    return _reply("question-answering",
                  _ask("question-answering", prompt, ctx, len(text) + len(question)))


@expert("text-generation",
        "Continues a text or answers a prompt, up to about 200 words.", latency_s=4.0)
def text_generation(text: str, ctx: ToolContext) -> str:
    """The prompt continued or answered, by the run's LLM."""
    prompt = prompts.TEXT_GENERATION.format(task="text-generation", text=_checked(text))
    return _reply("text-generation", _ask("text-generation", prompt, ctx, len(text)))


@expert("text2text-generation",
        "Rewrites a text as it asks: paraphrase, correct, shorten, answer.")
def text2text_generation(text: str, ctx: ToolContext) -> str:
    """The text rewritten as it asks, by the run's LLM."""
    prompt = prompts.TEXT2TEXT_GENERATION.format(task="text2text-generation", text=_checked(text))
    return _reply("text2text-generation",
                  _ask("text2text-generation", prompt, ctx, len(text)))


@expert("conversational", "A brief chat-assistant reply.")
def conversational(text: str, ctx: ToolContext) -> str:
    """A chat reply to the message, by the run's LLM."""
    prompt = prompts.CONVERSATIONAL.format(task="conversational", text=_checked(text))
    return _reply("conversational", _ask("conversational", prompt, ctx, len(text)))


# ------------------------------------------------------------------ structured

class Sentiment(BaseModel):
    """How the text feels."""

    label: str = Field(description="POSITIVE, NEGATIVE or NEUTRAL")
    score: float = Field(description="confidence from 0 to 1")


class LabelScore(BaseModel):
    label: str = Field(description="a candidate label, exactly as given")
    score: float = Field(description="probability from 0 to 1")


class LabelScores(BaseModel):
    """The probability of each candidate label."""

    scores: list[LabelScore]


class Entity(BaseModel):
    word: str = Field(description="the entity's words exactly as in the text")
    entity_group: str = Field(description="PER, ORG, LOC or MISC")


class Entities(BaseModel):
    """The named entities of the text, in order of appearance."""

    entities: list[Entity]


def _probability(task: str, score: float) -> float:
    if not 0.0 <= score <= 1.0:
        raise ToolOutputError(f"the LLM's {task} answer has a score of {score}, not 0 to 1")
    return round(score, 4)


@expert("text-classification", "Sentiment only: POSITIVE, NEGATIVE or NEUTRAL with the "
        "LLM's own confidence (not a calibrated probability); no topics or languages.",
        latency_s=2.0)
def text_classification(text: str, ctx: ToolContext) -> list[dict[str, Any]]:
    """The text's sentiment (POSITIVE, NEGATIVE or NEUTRAL) with the LLM's confidence."""
    prompt = prompts.TEXT_CLASSIFICATION.format(task="text-classification", text=_checked(text))
    answer = _structured("text-classification",
                         _ask("text-classification", prompt, ctx, len(text), Sentiment),
                         Sentiment)
    label = answer.label.strip().upper()
    if label not in SENTIMENTS:
        raise ToolOutputError(f"the LLM's sentiment {answer.label!r} is not one of "
                              f"{', '.join(SENTIMENTS)}")
    return [{"label": label, "score": _probability("text-classification", answer.score)}]


@expert("zero-shot-classification", "Scores the given labels by the LLM's judgement "
        "(probabilities summing to 1, not calibrated).", latency_s=2.0)
def zero_shot_classification(text: str, labels: str, ctx: ToolContext) -> list[dict[str, Any]]:
    """Every candidate label scored by the LLM (probabilities summing to 1), best first.
    A label the LLM leaves out scores 0; one it invents is ignored."""
    candidates = list(dict.fromkeys(p.strip() for p in labels.split(",") if p.strip()))
    if not candidates:
        raise ToolExecutionError("llm expert: zero-shot-classification needs labels")
    if len(candidates) > MAX_LABELS:
        raise ToolExecutionError(f"llm expert: {len(candidates)} labels, more than "
                                 f"{MAX_LABELS}")
    prompt = prompts.ZERO_SHOT_CLASSIFICATION.format(
        task="zero-shot-classification", text=_checked(text), labels=", ".join(candidates))
    answer = _structured(
        "zero-shot-classification",
        _ask("zero-shot-classification", prompt, ctx, len(text), LabelScores), LabelScores)
    by_key = {c.casefold(): c for c in candidates}
    scores = dict.fromkeys(candidates, 0.0)
    for item in answer.scores:
        if (label := by_key.get(item.label.strip().casefold())) is not None:
            scores[label] = _probability("zero-shot-classification", item.score)
    total = sum(scores.values())
    if total <= 0:
        raise ToolOutputError("the LLM's zero-shot-classification answer scores none of "
                              f"the labels {candidates}")
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    return [{"label": label, "score": round(score / total, 4)} for label, score in ranked]


def _find(text: str, word: str, start: int) -> int:
    """Where ``word`` occurs in ``text`` from ``start`` (else anywhere), exactly or
    ignoring case; -1 when nowhere."""
    for haystack, needle in ((text, word), (text.casefold(), word.casefold())):
        at = haystack.find(needle, start)
        if at < 0:
            at = haystack.find(needle)
        if at >= 0:
            return at
    return -1


@expert("token-classification", "Named entities (PER, ORG, LOC, MISC) by structured "
        "output, each checked to be a span of the text, with its offsets; no scores.", need=2)
def token_classification(text: str, ctx: ToolContext) -> list[dict[str, Any]]:
    """Named entities (PER, ORG, LOC, MISC) as spans of the text, with their offsets.
    Names the text does not contain are dropped; if the LLM named only such, the
    attempt fails."""
    prompt = prompts.TOKEN_CLASSIFICATION.format(task="token-classification", text=_checked(text))
    answer = _structured(
        "token-classification",
        _ask("token-classification", prompt, ctx, len(text), Entities), Entities)
    found, missing, position = [], [], 0
    for entity in answer.entities:
        word = entity.word.strip()
        at = _find(text, word, position) if word else -1
        if at < 0:
            missing.append(entity.word)
            continue
        group = entity.entity_group.strip().upper()
        found.append({"entity_group": _ENTITY_GROUPS.get(group, group or "MISC"),
                      "word": text[at:at + len(word)], "start": at, "end": at + len(word)})
        position = at + len(word)
    if missing and not found:
        raise ToolOutputError("none of the entities the LLM named is in the text: "
                              + ", ".join(repr(m) for m in missing[:5]))
    return found
