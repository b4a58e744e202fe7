"""Languages by ISO 639-1 code and English name: one table for the whole project.

The planner reads target languages from a request by name ("into French"), local
translation models are prompted with names ("translate English to French"), summa
stems by name; everything else speaks codes.
"""

from __future__ import annotations

__all__ = ["NAMES", "BY_NAME", "code_of", "name_of"]

NAMES: dict[str, str] = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "zh": "Chinese", "ja": "Japanese",
    "ko": "Korean", "ar": "Arabic", "hi": "Hindi", "tr": "Turkish", "pl": "Polish",
    "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish", "ro": "Romanian",
    "el": "Greek", "cs": "Czech", "uk": "Ukrainian", "vi": "Vietnamese", "id": "Indonesian",
    "he": "Hebrew", "hu": "Hungarian", "th": "Thai", "ca": "Catalan",
}
"""Code -> English name."""

BY_NAME: dict[str, str] = {name.lower(): code for code, name in NAMES.items()} | {
    "mandarin": "zh"}
"""Lower-case English name (and a few other names people use) -> code."""


def code_of(value: str | None) -> str | None:
    """The code for a language given by name or by code (``"French"``, ``" fr "``);
    an unknown value is returned as given (stripped), None stays None."""
    if not value:
        return None
    value = value.strip()
    return BY_NAME.get(value.lower(), value)


def name_of(code: str, default: str | None = None) -> str:
    """The English name of a code; ``default`` (else the code itself) when unknown."""
    return NAMES.get(code, default if default is not None else code)
