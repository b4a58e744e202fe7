"""Cue words: which task types a clause asks for, in English, French, Spanish, German,
Portuguese, Dutch, Italian and Chinese (the first five most fully).

The bundled MiniLM only knows English, so the offline planner reads what a clause asks
for from these words first, and falls back on the example bank's nearest one-step
example for a clause they do not cover. The table is hand-written; each entry is a task
type, the kind of input it needs (a cue for a caption means nothing without an image to
caption), and a pattern. A clause is matched against every entry; where two matches
overlap, the one earlier in the table wins ("detect the language" is language
identification, not object detection), and a *weak* cue ("write", "tell me") counts only
when nothing else matched. A cue may also read what the clause asks about: the words its
``labels`` group matches are the step's labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from hugginggpt.tools.experts.tasks import task_types

__all__ = ["Cue", "cues", "Match", "cues_in", "DOCUMENT_NAME", "EVERY_KIND", "GENERIC_LOOK"]


@dataclass(frozen=True)
class Cue:
    task: str
    pattern: re.Pattern[str]
    needs: str | None = None
    """The kind of input the task needs (image, audio, table); None for a text task."""
    weak: bool = False
    intent: str = ""
    """What was asked, where one task type serves several asks (sentiment, language)."""


@dataclass(frozen=True)
class Match:
    task: str
    start: int
    end: int
    cue: Cue
    labels: str = ""
    """The clause's words its cue's ``labels`` group matched ("find the red mug in":
    "red mug"), as written; "" for a cue without one."""


@cache
def cues() -> tuple[Cue, ...]:
    """Every task type's cues (its declaration's), in order of precedence."""
    found = [(declared.rank, Cue(task.name, re.compile(declared.pattern, re.IGNORECASE),
                                 declared.needs, declared.weak, declared.intent))
             for task in task_types() for declared in task.cues]
    return tuple(cue for _, cue in sorted(found, key=lambda ranked: ranked[0]))

DOCUMENT_NAME = re.compile(
    r"receipt|invoice|scan|form|document|doc|page|letter|contract|bill|statement|ticket"
    r"|menu|certificate|passport|licen[cs]e|report|memo|factura|rechnung|facture", re.IGNORECASE)
"""A file name that says an image is a document (questions about it go to document QA)."""
GENERIC_LOOK = re.compile(
    r"\bwhat(?:'s| is) (?:in|on) (?:it|this|that|the (?:image|photo|picture|pic))\b|^\W*(?:"
    r"what(?:'s| is) (?:in|on|this)|what do you see|describe|qu'y a-t-il|qu[ée] hay|"
    r"was ist (?:auf|in)|图片里有什么)|里有什么|中有什么|上有什么", re.IGNORECASE)
"""A question about an image that asks for its description, not a fact in it."""


_MENTIONED = re.compile(
    r"\b(?:the|this|that|its|their|le|la|el|die|das|den)\s+(?:summary|summaries|transcript|"
    r"transcription|caption|translation|translated text|description|answer|result|résumé|"
    r"traduction|transcription|légende|resumen|traducción|transcripción|zusammenfassung|"
    r"übersetzung|beschreibung|depth map|mask|annotated image|edited (?:photo|image|picture)|new "
    r"(?:image|picture)|generated (?:image|picture))\b", re.IGNORECASE)
"""An earlier output named as such ("translate the summary"): the clause works on it,
it does not ask for another one."""
_FILE = re.compile(r"(?:https?://\S+|[\w./-]+\.[A-Za-z][A-Za-z0-9]{1,4})(?![\w/])")
EVERY_KIND = frozenset({"text", "image", "audio", "table", "video"})


def cues_in(clause: str, available: set[str] | frozenset[str] = EVERY_KIND) -> list[Match]:
    """The task types ``clause`` asks for, in order of mention, given the kinds of input
    ``available`` to it (files it or the request names, outputs of earlier steps).

    Where matches overlap, the earlier cue of :func:`cues` wins; weak cues count only
    when no other cue matched.
    """
    written = clause
    clause = _FILE.sub(lambda m: "FILE".ljust(len(m.group(0))), clause)  # "clip.mp4" asks nothing
    clause = _MENTIONED.sub(lambda m: " " * len(m.group(0)), clause)
    found: list[Match] = []
    for cue in cues():
        if cue.needs is not None and cue.needs not in available:
            continue
        for match in cue.pattern.finditer(clause):
            if any(match.start() < m.end and m.start < match.end() for m in found):
                continue
            if any(m.task == cue.task and m.cue.intent == cue.intent for m in found):
                continue
            named = match.span("labels") if "labels" in cue.pattern.groupindex else (-1, -1)
            found.append(Match(cue.task, match.start(), match.end(), cue,
                               written[named[0]:named[1]] if named[0] >= 0 else ""))
    strong = [m for m in found if not m.cue.weak]
    return sorted(strong or found, key=lambda m: m.start)
