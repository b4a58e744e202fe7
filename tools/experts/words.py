"""The words an answer says a result in, for the task types' declarations to use.

A task type's declaration (:mod:`hugginggpt.tools.experts.task_types`) says its result in
a sentence of its own (``say``: "The review is negative (89%)", "Speech saved to
/work/artifacts/t/3f2a.wav (3.2 s)"), built from the pieces here: percents and scores,
plurals and lists, label and language names, texts clipped to size, files with a
recording's length, and the sentences several task types share (a classification, the
best fit of given labels, a headed text, a saved file, objects found). A task type without
a sentence of its own (a plugin's) is told output by output (:func:`say`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.languages import NAMES

__all__ = ["MAX_SHOWN", "MAX_LISTED", "Finished", "Saying", "say", "percent", "shown_score",
           "plural", "listed", "label_name", "language_name", "shown_text", "headed",
           "file_shown", "label_items", "ranked", "classified", "best_fit", "headed_as",
           "saved", "objects"]

MAX_SHOWN = 600
"""Characters of a text output shown in the answer; the rest is in the run's results
(``--json``, the ``RunResult``, the thread's state)."""
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
                "the run's results and in the thread's trace)")
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


# ------------------------------------------------------------------ the sentences


@dataclass(frozen=True)
class Finished:
    """A done subtask, as its sentence needs it."""

    task: str
    outputs: dict[str, Any]
    args: dict[str, str] = field(default_factory=dict)
    request: str = ""
    model: str = ""
    probabilities: bool = True
    """Whether its label scores are probabilities (shown as percents); a card that says
    they are not (cosines, detector scores) makes them plain numbers."""
    looks_for: str = "objects"
    """What a detector looks for, in the plural: a specialist's card names it ("faces"),
    so that finding none is said in the words of the question."""


Saying = Callable[[Finished], str]
"""How a task type says its result: a done subtask in, a sentence out."""

_SENTIMENTS = {"positive": "positive", "pos": "positive", "negative": "negative",
               "neg": "negative", "neutral": "neutral", "neu": "neutral"}
_EMOTIONS = {"joy": "joy", "sadness": "sadness", "anger": "anger", "fear": "fear",
             "surprise": "surprise", "love": "love", "disgust": "disgust",
             "optimism": "optimism", "hap": "happiness", "ang": "anger", "sad": "sadness"}
_SUBJECT = re.compile(r"\b(review|comment|tweet|post|message|e-?mail|sentence|headline|"
                      r"letter|paragraph|phrase|feedback|answer)s?\b", re.IGNORECASE)


def _subject(request: str) -> str:
    """What the user called the text ("the review"), else "the text"."""
    found = _SUBJECT.search(request)
    return found.group(1).lower().replace("e-mail", "email") if found else "text"


def _classified(done: Finished, what: str) -> str:
    labels = label_items(done.outputs.get("labels"))
    if not labels:
        return f"No label was given for the {what}."
    top = labels[0]
    name, score = label_name(top), shown_score(top.get("score"), done.probabilities)
    shown = f" ({score})" if score else ""
    language = [language_name(label_name(label)) for label in labels[:3]]
    if all(language):
        others = [f"{lang} ({shown_score(label.get('score'), done.probabilities)})"
                  for lang, label in zip(language[1:], labels[1:3], strict=False)
                  if isinstance(label.get("score"), float) and label["score"] >= 0.05]
        also = f"; then {listed(others)}" if others else ""
        spoken = "speech" if what == "recording" else what
        return f"The {spoken} is in {language[0]}{shown}{also}."
    key = name.lower()
    if key in _SENTIMENTS:
        return f"The {what} is {_SENTIMENTS[key]}{shown}."
    if key in _EMOTIONS:
        return f"The {what} expresses {_EMOTIONS[key]}{shown}."
    rest = [f"{label_name(label)} ({shown_score(label['score'], done.probabilities)})"
            for label in labels[1:3]
            if isinstance(label.get("score"), float) and label["score"] >= 0.1]
    then = f"; then {listed(rest)}" if rest else ""
    return f"The {what} is classified as {name}{shown}{then}."



def classified(what: str | None = None) -> Saying:
    """A classification of ``what`` ("the recording"; None: what the request called the
    text, "the review"): a language, a sentiment, an emotion or a label, with its score
    and the runners-up."""
    return lambda done: _classified(done, what or _subject(done.request))


def best_fit(subject: str) -> Saying:
    """The best fit among labels the user gave ("The image best fits cat (0.31); ...")."""
    def say_it(done: Finished) -> str:
        labels = label_items(done.outputs.get("labels"))
        if not labels:
            return "No label was given."
        return f"{subject} {ranked(labels, done.probabilities, similarity=True)}."
    return say_it


def headed_as(head: str, empty: str) -> Saying:
    """The text output under a head ("Summary: ..."), or ``empty`` when there is none."""
    return lambda done: headed(head, done.outputs.get("text"), empty)


def saved(what: str, output: str) -> Saying:
    """A file output ("Speech saved to /work/.../x.wav (3.2 s).")."""
    return lambda done: f"{what} saved to {file_shown(done.outputs.get(output))}."


def objects(done: Finished) -> str:
    """Objects found, grouped by label with their scores, and where the boxes are drawn."""
    found = label_items(done.outputs.get("objects"))
    where = f"the annotated image is at {file_shown(done.outputs.get('image'))}"
    if not found:
        return f"No {done.looks_for} were found; {where}."
    groups: dict[str, list[Any]] = {}
    for item in found:
        groups.setdefault(label_name(item), []).append(item.get("score"))
    parts = []
    for label, scores in list(groups.items())[:MAX_LISTED]:
        shown = [shown_score(s, True) for s in scores[:4]] if done.probabilities else []
        shown = [s for s in shown if s] + (["..."] if done.probabilities and len(scores) > 4
                                           else [])
        parts.append(plural(label, len(scores)) + (f" ({', '.join(shown)})" if shown else ""))
    listed_parts = listed(parts, max(0, len(groups) - MAX_LISTED))
    if len(groups) == 1:
        return f"Found {listed_parts}; {where}."
    return f"Found {len(found)} objects: {listed_parts}; {where}."



def _generic(done: Finished) -> str:
    """A task type without its own wording: each output in turn."""
    parts = []
    for name, value in done.outputs.items():
        if is_artifact_ref(value) and value.get("kind") != "text":
            parts.append(f"{name} saved to {file_shown(value)}")
        elif isinstance(value, float):
            parts.append(f"{name}: {value:.2f}")
        elif isinstance(value, list) and label_items(value):
            parts.append(f"{name}: {ranked(label_items(value), done.probabilities)}")
        else:
            parts.append(f"{name}: {shown_text(value)}")
    return "; ".join(parts) + "." if parts else "It finished with no output."


def say(done: Finished, saying: Saying | None) -> str:
    """The sentence for one done subtask, as its task type's ``saying`` words it (output
    by output without one); several lines when a text output has them."""
    return (saying or _generic)(done)
