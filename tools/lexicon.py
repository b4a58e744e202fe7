"""Words that mean the same across the offline planner and selection: the kinds of
answer a classifier gives (:data:`KINDS`: sentiment, a language, a sound) with the words
that name each, and the choices a question offers ("dutch or afrikaans?", "good or
bad?"), which say what it asks whichever task type answers it. A task type declares the
kinds it serves (:attr:`~hugginggpt.tools.experts.tasks.TaskType.kinds`) and its cue
words for each (a :class:`~hugginggpt.tools.experts.tasks.Cue`'s ``intent``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hugginggpt.tools.languages import BY_NAME, NATIVE_NAMES

__all__ = ["LANGUAGE_NAMES", "NAME_RE", "OR", "LANGUAGE_CHOICE", "POLAR_CHOICE", "Kind", "KINDS"]

LANGUAGE_NAMES = {**BY_NAME, **{n: c for names in NATIVE_NAMES.values() for n, c in names.items()}}
"""Language names a request may use, in English and in their own languages -> code."""
NAME_RE = "|".join(sorted(map(re.escape, LANGUAGE_NAMES), key=len, reverse=True))
OR = r"(?:or|ou|o|oder|of|o bien|ou bien|还是|或者|或)"
LANGUAGE_CHOICE = re.compile(
    rf"(?<![a-zà-ÿ])(?:{NAME_RE})(?:\s*,\s*(?:{NAME_RE}))*,?\s*{OR}\s*(?:{NAME_RE})"
    r"(?![a-zà-ÿ])", re.IGNORECASE)
"""Languages offered as the choices of a question ("afrikaans or dutch?", "espagnol ou
portugais"): the question is which language a text is in."""
_POLAR_WORDS = (
    r"good|bad|positive|negative|happy|unhappy|upset|pleased|satisfied|dissatisfied|"
    r"favou?rable|unfavou?rable|nice|mean|friendly|rude|kind|angry|glad|sad|great|terrible|"
    r"buen[oa]?|mal[oa]?|positiv[oa]|negativ[oa]|favorable|desfavorable|content[oa]|"
    r"enfadad[oa]|bon(?:ne)?|mauvaise?|positi(?:f|ve)|n[ée]gati(?:f|ve)|d[ée]favorable|"
    r"m[ée]contente?|fâch[ée]e?|bo[am]|ru[ií]m|m[aá]u?|favor[aá]vel|desfavor[aá]vel|"
    r"satisfeit[oa]|chatead[oa]|gut|schlecht|positiv|negativ|zufrieden|unzufrieden|"
    r"verärgert|goed|slecht|positief|negatief|tevreden|ontevreden|boos|buon[oa]?|"
    r"cattiv[oa]|soddisfatt[oa]|好|坏|差|满意|不满意|开心|生气")
POLAR_CHOICE = re.compile(
    rf"(?<![\w])(?:{_POLAR_WORDS})\s*{OR}\s*(?:not|pas|no|nicht|niet|não|non|不|"
    rf"{_POLAR_WORDS})(?![\w])|\bthumbs? up or (?:thumbs? )?down\b|\bpouce (?:en )?haut ou "
    r"(?:en )?bas\b|\b(?:like|love)d? (?:it )?or (?:hate|dislike)d?\b"
    r"|好还是(?:不好|坏)|好评还是差评",
    re.IGNORECASE)
"""Opposite judgements offered as a question's choices ("good or bad?", "¿buena o mala?",
"bon ou mauvais", "gut oder schlecht", "happy or not"): the question is the sentiment of
a text, in any of the languages the cue words read."""


@dataclass(frozen=True)
class Kind:
    """A kind of answer a classifier gives, and the words that name it.

    Attributes:
        stems: the kind's name and the request words that ask for it, as stems: a word
            matches a stem it starts with, up to four letters longer (a Chinese stem
            matches anywhere in a run of Chinese characters). A model card's kind is the
            kind whose stems its id and description use most. ("like" is left out: "I
            would like to know which language" is no sentiment question.)
        choice: the choices a question offers for it ("good or bad?").
        asked_only: a model of this kind serves only a request that asks for it by name
            (a language detector's answer would pass for any other).
        related: kinds close enough that a model of one may answer the other.
    """

    stems: tuple[str, ...]
    choice: re.Pattern[str] | None = None
    asked_only: bool = False
    related: frozenset[str] = frozenset()


KINDS: dict[str, Kind] = {
    "sentiment": Kind(("sentiment", "positiv", "positif", "negativ", "negatif", "polarit",
                       "opinion", "review", "hate", "love", "正面", "负面", "情感"),
                      choice=POLAR_CHOICE, related=frozenset({"emotion"})),
    "emotion": Kind(("emotion", "emoci", "gefuhl", "feel", "mood", "angry", "anger", "happy",
                     "happiness", "joy", "sad", "fear", "surprise", "disgust", "情绪"),
                    related=frozenset({"sentiment"})),
    "language": Kind(("languag", "langue", "idioma", "sprache", "lengua", "dialect", "语言",
                      "哪种语"), choice=LANGUAGE_CHOICE, asked_only=True),
    "keyword": Kind(("keyword", "command", "word")),
    "sound": Kind(("sound", "noise", "audioset")),
}
"""The kinds of answer classifiers give, by name."""
