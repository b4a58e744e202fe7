"""The small pieces of an answer's sentences: percents and scores, plurals and lists,
label and language names, texts clipped to size, files with a recording's length.
"""

from __future__ import annotations

from typing import Any

from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.languages import NAMES

__all__ = ["MAX_SHOWN", "MAX_LISTED", "percent", "shown_score", "plural", "listed",
           "label_name", "language_name", "shown_text", "headed", "file_shown",
           "label_items", "ranked"]

MAX_SHOWN = 600
"""Characters of a text output shown in the answer; the rest is in ``--json``."""
MAX_LISTED = 8
"""Items listed in one sentence (entities, objects, rows) before "and N more"."""
_LABEL_KEYS = ("label", "word", "entity_group", "entity")


def percent(score: float) -> str:
    """A probability as a whole percent ("<1%" rather than a misleading "0%")."""
    return "<1%" if 0 < score < 0.005 else f"{round(score * 100)}%"


def shown_score(score: Any, probabilities: bool) -> str:
    """A score as shown: a percent when it is a probability, else two decimals; "" for
    no score."""
    if not isinstance(score, (int, float)):
        return ""
    return percent(score) if probabilities else f"{score:.2f}"


_IRREGULAR = {"person": "people", "mouse": "mice", "knife": "knives", "sheep": "sheep",
              "child": "children", "man": "men", "woman": "women", "foot": "feet",
              "fish": "fish", "skis": "skis", "scissors": "scissors"}


def plural(noun: str, n: int) -> str:
    """``n`` and the noun, in the plural when ``n`` is not 1 ("a dog", "2 dogs")."""
    if n == 1:
        return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        many = _IRREGULAR[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        many = last + "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        many = last[:-1] + "ies"
    else:
        many = last + "s"
    return f"{n} {head + ' ' if head else ''}{many}"


def listed(items: list[str], more: int = 0) -> str:
    """"a, b and c" (", and N more" when some were left out)."""
    if more:
        return f"{', '.join(items)} and {more} more"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def label_name(label: dict[str, Any]) -> str:
    """A label's name, whichever key holds it, with underscores as spaces."""
    found = next((label[k] for k in _LABEL_KEYS if isinstance(label.get(k), str)), "?")
    return " ".join(found.replace("_", " ").split())


def language_name(label: str) -> str | None:
    """The language a label names: a code (``en``, ``zh-cn``) or ``en: English``."""
    code = label.split(":")[0].strip().lower()
    if (base := code.split("-")[0]) in NAMES and (code == base or len(code) <= 6):
        return NAMES[base]
    return None


def shown_text(value: Any) -> str:
    """A text output to show: whole when short, else its start and where the rest is."""
    if is_artifact_ref(value):
        start = " ".join(str(value.get("preview", "")).split())
        return f"{start} ... (the whole text is in {value['path']})"
    text = str(value).strip()
    if len(text) > MAX_SHOWN:
        cut = text[:MAX_SHOWN].rsplit(" ", 1)[0] if " " in text[:MAX_SHOWN] else text[:MAX_SHOWN]
        return (f"{cut} ... ({len(text)} characters in all; the whole output is in "
                "--json and in the thread's trace)")
    return text


def headed(head: str, value: Any, empty: str) -> str:
    """"Head: text", the text on its own lines when it has several."""
    text = shown_text(value)
    if not text:
        return empty
    return f"{head}:\n{text}" if "\n" in text else f"{head}: {text}"


def file_shown(ref: Any) -> str:
    """A file output: its workspace path, with a recording's length."""
    if not is_artifact_ref(ref):
        return str(ref)
    seconds = ref.get("seconds")
    return f"{ref['path']} ({seconds:.1f} s)" if isinstance(seconds, (int, float)) \
        else str(ref["path"])


def label_items(value: Any) -> list[dict[str, Any]]:
    """The labels of an output (dicts only: anything else is not a label)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def ranked(labels: list[dict[str, Any]], probabilities: bool, similarity: bool = False,
            limit: int = 5) -> str:
    """"sports (93%); then politics (4%) and cooking (3%)"."""
    def one(label: dict[str, Any], first: bool) -> str:
        shown = shown_score(label.get("score"), probabilities)
        if shown and first and similarity and not probabilities:
            shown = f"similarity {shown}"
        return f"{label_name(label)} ({shown})" if shown else label_name(label)

    head = one(labels[0], True)
    rest = [one(label, False) for label in labels[1:limit]]
    return f"{head}; then {listed(rest)}" if rest else head
