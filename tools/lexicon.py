"""Words that mean the same across the offline planner and selection: the choices a
question offers ("dutch or afrikaans?", "good or bad?") say what it asks, whichever
task type answers it.
"""

from __future__ import annotations

import re

from hugginggpt.tools.languages import BY_NAME, NATIVE_NAMES

__all__ = ["LANGUAGE_NAMES", "NAME_RE", "OR", "LANGUAGE_CHOICE", "POLAR_CHOICE"]

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
