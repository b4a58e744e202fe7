"""Languages by ISO 639-1 code and English name: one table for the whole project.

The planner reads target languages from a request by name ("into French"), local
translation models are prompted with names ("translate English to French"), summa
stems by name; everything else speaks codes.
"""

from __future__ import annotations

__all__ = ["NAMES", "BY_NAME", "NATIVE_NAMES", "code_of", "name_of"]

NAMES: dict[str, str] = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "zh": "Chinese", "ja": "Japanese",
    "ko": "Korean", "ar": "Arabic", "hi": "Hindi", "tr": "Turkish", "pl": "Polish",
    "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish", "ro": "Romanian",
    "el": "Greek", "cs": "Czech", "uk": "Ukrainian", "vi": "Vietnamese", "id": "Indonesian",
    "he": "Hebrew", "hu": "Hungarian", "th": "Thai", "ca": "Catalan", "ms": "Malay",
    "af": "Afrikaans", "bg": "Bulgarian", "bn": "Bengali", "cy": "Welsh", "et": "Estonian",
    "fa": "Persian", "gu": "Gujarati", "hr": "Croatian", "kn": "Kannada", "lt": "Lithuanian",
    "lv": "Latvian", "mk": "Macedonian", "ml": "Malayalam", "mr": "Marathi", "ne": "Nepali",
    "pa": "Punjabi", "sk": "Slovak", "sl": "Slovenian", "so": "Somali", "sq": "Albanian",
    "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "tl": "Tagalog", "ur": "Urdu",
}
"""Code -> English name."""

BY_NAME: dict[str, str] = {name.lower(): code for code, name in NAMES.items()} | {
    "mandarin": "zh"}
"""Lower-case English name (and a few other names people use) -> code."""


NATIVE_NAMES: dict[str, dict[str, str]] = {
    "fr": {"anglais": "en", "français": "fr", "francais": "fr", "espagnol": "es",
           "allemand": "de", "italien": "it", "portugais": "pt", "néerlandais": "nl",
           "russe": "ru", "chinois": "zh", "japonais": "ja", "coréen": "ko", "arabe": "ar"},
    "es": {"inglés": "en", "ingles": "en", "francés": "fr", "frances": "fr", "español": "es",
           "espanol": "es", "castellano": "es", "alemán": "de", "aleman": "de",
           "italiano": "it", "portugués": "pt", "neerlandés": "nl", "holandés": "nl",
           "ruso": "ru", "chino": "zh", "japonés": "ja", "coreano": "ko", "árabe": "ar"},
    "de": {"englisch": "en", "englische": "en", "französisch": "fr", "französische": "fr",
           "spanisch": "es", "spanische": "es", "deutsch": "de", "deutsche": "de",
           "italienisch": "it", "italienische": "it", "portugiesisch": "pt",
           "niederländisch": "nl", "russisch": "ru", "russische": "ru", "chinesisch": "zh",
           "chinesische": "zh", "japanisch": "ja", "japanische": "ja", "koreanisch": "ko",
           "arabisch": "ar"},
    "zh": {"英文": "en", "英语": "en", "法语": "fr", "法文": "fr", "西班牙语": "es",
           "西班牙文": "es", "德语": "de", "德文": "de", "中文": "zh", "汉语": "zh",
           "普通话": "zh", "日语": "ja", "日文": "ja", "意大利语": "it", "葡萄牙语": "pt",
           "俄语": "ru", "俄文": "ru", "韩语": "ko", "韩文": "ko", "阿拉伯语": "ar",
           "荷兰语": "nl"},
}
"""Language names as French, Spanish, German and Chinese requests write them ("en
anglais", "al inglés", "auf Englisch", "翻译成英文"), by the language they are written in."""


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
