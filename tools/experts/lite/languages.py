"""A text's language, by lingua: the lite language-identification engine, and what
selection, the planner, the voice and the summariser ask.

lingua (``lingua-language-detector``) ships its n-gram models in the wheel and is built
for short texts: on the short sentences of ``benchmarks/language_id.py`` it is right
where langdetect called Dutch Afrikaans and Chinese Korean. Its confidence values sum to
1 over the languages it was given and stay low when a text is too short to tell ("Hola",
"ok"), where langdetect says 1.0 even when wrong.

It is restricted to the project's languages (:data:`LINGUA_LANGUAGES`: those of
:mod:`hugginggpt.tools.languages` that lingua knows, Norwegian as Bokmål and Nynorsk,
and Malay). In lingua's high-accuracy mode a first detection over them loads every
language of the text's script: about 7 s and 0.8 GB for a Latin-script text, on every
run that tells a language. So a quick pass in low-accuracy mode (trigrams only: 0.3 s and
70 MB) settles the texts it is sure of, and only a close call is looked at again in high
accuracy, among the quick pass's few likeliest languages (:func:`confidences`);
``benchmarks/language_id.py`` prints the figures.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

from hugginggpt.tools.experts.lite.engines import load_once

__all__ = [
    "LINGUA", "SURE", "MIN_CHARS", "EVIDENCE_CHARS", "evidence", "QUICK_SURE", "CLOSE_LOOK",
    "ALWAYS_LOOKED",
    "LINGUA_LANGUAGES", "KEPT_LANGUAGES", "builder", "unload_close_looks",
    "lingua_detector", "confidences", "language_of", "RULE_OUT", "reads",
    "described",
]

LINGUA = "lite/lingua"
SURE = 0.6
"""lingua's top confidence at or above which its answer is told as the language ("this
text is Spanish") rather than as the likeliest few with their values, and a short text
gets a language at all. On the benchmark's sentences every answer at or above it was
right (at 0.5, one was not: Malay told as Indonesian at 0.51)."""

RULE_OUT = 0.25
"""When a model's languages together get less than this fraction of the likeliest
language's probability, the text is not written in them: selection rules the model out
(:func:`reads`). Relative, because lingua spreads its values: a plain English sentence
can get English 0.6 and French 0.08, a Spanish one Spanish 0.44 and Portuguese 0.41."""
QUICK_SURE = 0.99
"""The quick pass's top probability from which its answer stands; on the benchmark's
sentences its answers at 0.95 or more were all right, and wrong ones reached 0.93."""
CLOSE_LOOK = 5
"""How many of the quick pass's likeliest languages the high-accuracy pass compares."""
ALWAYS_LOOKED = ("en",)
"""Languages every close look compares too. The quick pass can be far off on plain
English ("The striker scored twice in the last ten minutes of the final": Bokmål 0.98,
English 0.00, sixth), and most models read only English: a close look without it would
rule them all out."""
MIN_CHARS = 12
"""Shorter texts get a likeliest language only when lingua is sure (:data:`SURE`):
"Hello" or "ok" say too little."""
EVIDENCE_CHARS = 20
"""Characters of an alphabetic text below which its detection rules no model out: on a
word or two lingua can be sure and wrong ("independent": Portuguese 0.65)."""
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
MAX_CHARS = 2000
"""Characters of a text that are read: enough to tell its language."""
_ALIASES = {"nb": "no", "nn": "no"}
"""lingua codes that the project names by another code (Norwegian's two written forms)."""
_HAN = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")

LINGUA_LANGUAGES: tuple[str, ...] = (
    "af", "ar", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa",
    "fi", "fr", "gu", "he", "hi", "hr", "hu", "id", "it", "ja", "ko", "lt", "lv", "mk",
    "mr", "ms", "nb", "nl", "nn", "pa", "pl", "pt", "ro", "ru", "sk", "sl", "so", "sq",
    "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "vi", "zh")
"""The languages lingua tells apart here, as lingua's ISO 639-1 codes: the project's
languages (:data:`hugginggpt.tools.languages.NAMES`) that lingua has, Norwegian as
``nb``/``nn``, and Malay (so Indonesian is not claimed for it). Kannada, Malayalam and
Nepali are not in lingua."""


def builder(codes: tuple[str, ...] = LINGUA_LANGUAGES) -> Any:
    """lingua's detector builder for ``codes`` (lingua's ISO 639-1 codes)."""
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper()))
                 for code in codes]
    return LanguageDetectorBuilder.from_languages(*languages)


@load_once
def lingua_detector() -> Any:
    """The process-wide quick lingua detector: :data:`LINGUA_LANGUAGES` in lingua's
    low-accuracy mode (trigrams only; about 0.3 s and 70 MB to load them all)."""
    return builder().with_low_accuracy_mode().build()


KEPT_LANGUAGES = 12
"""Languages whose high-accuracy models stay loaded between close looks (about 25 MB
each, so 0.3 GB at most); the least recently compared are unloaded. lingua keeps a
language's models until they are unloaded, and a long-lived server compares new
languages text after text (``benchmarks/soak.py``: 31 languages and 0.7 GB after 300
runs, on the way to all 53); reloading one costs about 0.2 s."""

_lingua_lock = threading.Lock()
"""One detection at a time: unloading a language also drops the trigrams that the
quick pass shares with the close look."""
_kept: OrderedDict[str, None] = OrderedDict()
"""The languages whose high-accuracy models are loaded, least recently compared first."""


def _close_look(codes: tuple[str, ...]) -> Any:
    """A high-accuracy detector (all n-gram sizes) for the few languages the quick pass
    could not tell apart; only the first text that needs a language loads its models
    (about 0.2 s, 25 MB each), and at most :data:`KEPT_LANGUAGES` stay loaded. Called
    with :data:`_lingua_lock` held."""
    for code in codes:
        _kept[code] = None
        _kept.move_to_end(code)
    _unload(tuple(_kept)[:max(0, len(_kept) - KEPT_LANGUAGES)])
    return builder(codes).build()


def _unload(codes: tuple[str, ...]) -> None:
    if codes:
        builder(codes).build().unload_language_models()
        for code in codes:
            del _kept[code]


def unload_close_looks() -> None:
    """Unload the high-accuracy models that close looks keep; the next close look loads
    the languages it needs again (``benchmarks/soak.py`` measures memory without them)."""
    with _lingua_lock:
        _unload(tuple(_kept))


def _scored(detector: Any, text: str) -> list[tuple[str, float]]:
    return [(found.language.iso_code_639_1.name.lower(), float(found.value))
            for found in detector.compute_language_confidence_values(text)]


def confidences(text: str) -> list[tuple[str, float]]:
    """The text's candidate languages as ``(code, probability)``, most likely first,
    the probabilities summing to 1 ([] when the text has no letters to go on).

    A quick pass over all :data:`LINGUA_LANGUAGES` in low-accuracy mode settles most
    texts (top >= :data:`QUICK_SURE`); otherwise its :data:`CLOSE_LOOK` most likely
    languages, and :data:`ALWAYS_LOOKED`, are looked at again in high-accuracy mode,
    whose values are returned: the
    close calls (Spanish or Catalan, Danish or Norwegian) get lingua's best, without
    loading every language's full models (all of them: about 7 s and 0.8 GB), and
    keeping those of :data:`KEPT_LANGUAGES` languages at most.
    """
    text = text[:MAX_CHARS]
    if not text.strip():
        return []
    with _lingua_lock:
        found = [(c, p) for c, p in _scored(lingua_detector(), text) if p > 0]
        if found and found[0][1] < QUICK_SURE:
            looked = {c for c, _ in found[:CLOSE_LOOK]} | set(ALWAYS_LOOKED)
            found = [(c, p) for c, p in _scored(_close_look(tuple(sorted(looked))), text)
                     if p > 0]
    merged: dict[str, float] = {}
    for code, p in found:
        merged[_ALIASES.get(code, code)] = merged.get(_ALIASES.get(code, code), 0.0) + p
    return sorted(merged.items(), key=lambda cp: -cp[1])


def language_of(text: str) -> str | None:
    """The most likely language of ``text`` (ISO 639-1), sure or not; None when there is
    nothing to go on (no letters, or under :data:`MIN_CHARS` characters and lingua is
    not sure: "Hello", but not "今日はいい天気ですね", whose script says enough).
    For weighing (ranking, a voice, a stemmer, a translation's source), not for ruling
    out: see :func:`reads`."""
    text = text[:MAX_CHARS]
    if _HAN.search(text[:200]) and not _KANA.search(text[:200]):
        return "zh"
    found = confidences(text)
    if not found or len(text.strip()) < MIN_CHARS and found[0][1] < SURE:
        return None
    return found[0][0]


def evidence(text: str) -> tuple[tuple[str, float], ...]:
    """The text's languages as :func:`confidences` gives them, when the text is long
    enough to rule a model out by them (:data:`EVIDENCE_CHARS`; a few Chinese, Japanese
    or Korean characters are), else ``()``: selection then only weighs the language."""
    text = text[:MAX_CHARS]
    if len(text.strip()) < EVIDENCE_CHARS and not _CJK.search(text[:200]):
        return ()
    return tuple(confidences(text))


def reads(languages: list[str], found: tuple[tuple[str, float], ...] | list[
        tuple[str, float]]) -> bool:
    """Whether a model whose card lists ``languages`` can read a text whose languages
    lingua found as ``found``: yes for "multilingual" or unlisted languages, or a text
    lingua cannot place; no when the listed languages together get less than
    :data:`RULE_OUT` times the likeliest language's probability (a Spanish review, for
    English-only VADER)."""
    if not languages or "multilingual" in languages or not found:
        return True
    return sum(p for code, p in found if code in languages) >= RULE_OUT * found[0][1]


def described(found: tuple[tuple[str, float], ...] | list[tuple[str, float]]) -> str:
    """The detection in words: "Spanish" when lingua is sure, else the likeliest two
    with their probabilities ("Spanish (44%) or Portuguese (41%)")."""
    from hugginggpt.tools.languages import name_of

    if found[0][1] >= SURE:
        return name_of(found[0][0])
    return " or ".join(f"{name_of(code)} ({p:.0%})" for code, p in found[:2])
