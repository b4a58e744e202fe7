"""What a finished subtask produced, in the sentence a person would write.

Every task type of :mod:`hugginggpt.tools.experts.tasks` has its wording ("The review is
negative (89%)", "Speech saved to artifacts/t/3f2a.wav (3.2 s)"); a type this module does
not know (a plugin's) is told output by output. Probabilities are whole percents, other
scores two decimals; language codes are named; a long text is clipped, saying where the
whole of it is; a file is its workspace path, a recording with its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.languages import NAMES

__all__ = ["Finished", "MAX_SHOWN", "say", "percent", "plural", "listed"]

MAX_SHOWN = 600
"""Characters of a text output shown in the answer; the rest is in ``--json``."""
_LABEL_KEYS = ("label", "word", "entity_group", "entity")
_MAX_LISTED = 8
"""Items listed in one sentence (entities, objects, rows) before "and N more"."""


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


# ------------------------------------------------------------------ small pieces

def percent(score: float) -> str:
    """A probability as a whole percent ("<1%" rather than a misleading "0%")."""
    return "<1%" if 0 < score < 0.005 else f"{round(score * 100)}%"


def _score(score: Any, probabilities: bool) -> str:
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


def _name(label: dict[str, Any]) -> str:
    found = next((label[k] for k in _LABEL_KEYS if isinstance(label.get(k), str)), "?")
    return " ".join(found.replace("_", " ").split())


def _language(label: str) -> str | None:
    """The language a label names: a code (``en``, ``zh-cn``) or ``en: English``."""
    code = label.split(":")[0].strip().lower()
    if (base := code.split("-")[0]) in NAMES and (code == base or len(code) <= 6):
        return NAMES[base]
    return None


def _text(value: Any) -> str:
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


def _headed(head: str, value: Any, empty: str) -> str:
    """"Head: text", the text on its own lines when it has several."""
    text = _text(value)
    if not text:
        return empty
    return f"{head}:\n{text}" if "\n" in text else f"{head}: {text}"


def _file(ref: Any) -> str:
    """A file output: its workspace path, with a recording's length."""
    if not is_artifact_ref(ref):
        return str(ref)
    seconds = ref.get("seconds")
    return f"{ref['path']} ({seconds:.1f} s)" if isinstance(seconds, (int, float)) \
        else str(ref["path"])


def _labels(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _ranked(labels: list[dict[str, Any]], probabilities: bool, similarity: bool = False,
            limit: int = 5) -> str:
    """"sports (93%); then politics (4%) and cooking (3%)"."""
    def one(label: dict[str, Any], first: bool) -> str:
        shown = _score(label.get("score"), probabilities)
        if shown and first and similarity and not probabilities:
            shown = f"similarity {shown}"
        return f"{_name(label)} ({shown})" if shown else _name(label)

    head = one(labels[0], True)
    rest = [one(label, False) for label in labels[1:limit]]
    return f"{head}; then {listed(rest)}" if rest else head


# ------------------------------------------------------------------ classification

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
    labels = _labels(done.outputs.get("labels"))
    if not labels:
        return f"No label was given for the {what}."
    top = labels[0]
    name, score = _name(top), _score(top.get("score"), done.probabilities)
    shown = f" ({score})" if score else ""
    language = [_language(_name(label)) for label in labels[:3]]
    if all(language):
        others = [f"{lang} ({_score(label.get('score'), done.probabilities)})"
                  for lang, label in zip(language[1:], labels[1:3], strict=False)
                  if isinstance(label.get("score"), float) and label["score"] >= 0.05]
        also = f"; maybe {listed(others)}" if others else ""
        spoken = "speech" if what == "recording" else what
        return f"The {spoken} is in {language[0]}{shown}{also}."
    key = name.lower()
    if key in _SENTIMENTS:
        return f"The {what} is {_SENTIMENTS[key]}{shown}."
    if key in _EMOTIONS:
        return f"The {what} expresses {_EMOTIONS[key]}{shown}."
    rest = [f"{_name(label)} ({_score(label['score'], done.probabilities)})"
            for label in labels[1:3]
            if isinstance(label.get("score"), float) and label["score"] >= 0.1]
    then = f"; then {listed(rest)}" if rest else ""
    return f"The {what} is classified as {name}{shown}{then}."


def _text_classification(done: Finished) -> str:
    return _classified(done, _subject(done.request))


def _image_classification(done: Finished) -> str:
    labels = _labels(done.outputs.get("labels"))
    if not labels:
        return "No label was given for the image."
    top = {**labels[0], "label": _name(labels[0]).split(",")[0]}
    return _classified(Finished(done.task, {"labels": [top, *labels[1:]]},
                                probabilities=done.probabilities), "image")


def _audio_classification(done: Finished) -> str:
    return _classified(done, "recording")


def _zero_shot(done: Finished) -> str:
    labels = _labels(done.outputs.get("labels"))
    if not labels:
        return "No label was given."
    subject = "The image best fits" if done.task.endswith("image-classification") \
        else "The best fit is"
    return f"{subject} {_ranked(labels, done.probabilities, similarity=True)}."


_GROUPS = {"per": "person", "loc": "location", "org": "organisation", "misc": "other",
           "gpe": "place", "date": "date", "time": "time", "money": "money",
           "norp": "group", "fac": "building", "event": "event", "product": "product"}


def _entities(done: Finished) -> str:
    found: dict[tuple[str, str], None] = {}
    for item in _labels(done.outputs.get("entities")):
        word = " ".join(str(item.get("word", "")).replace("##", "").split())
        group = str(item.get("entity_group") or item.get("entity") or "")
        group = re.sub(r"^[BIES]-", "", group)
        if word:
            found[(word, _GROUPS.get(group.lower(), group.lower() or "entity"))] = None
    if not found:
        return "No named entities were found."
    shown = [f"{word} ({group})" for word, group in list(found)[:_MAX_LISTED]]
    return f"Entities: {listed(shown, max(0, len(found) - _MAX_LISTED))}."


def _tabular(done: Finished) -> str:
    rows = _labels(done.outputs.get("labels"))
    if not rows:
        return "No row was classified."
    counts: dict[str, int] = {}
    for row in rows:
        counts[_name(row)] = counts.get(_name(row), 0) + 1
    tally = ", ".join(f"{n} {label}" for label, n in counts.items())
    each = [f"row {int(r.get('row', i)) + 1}: {_name(r)}"
            + (f" {_score(r['score'], True)}" if isinstance(r.get("score"), float) else "")
            for i, r in enumerate(rows[:_MAX_LISTED])]
    more = f", and {len(rows) - _MAX_LISTED} more in --json" if len(rows) > _MAX_LISTED else ""
    return f"Classified {plural('row', len(rows))}: {tally} ({', '.join(each)}{more})."


# ------------------------------------------------------------------ vision

def _objects(done: Finished) -> str:
    found = _labels(done.outputs.get("objects"))
    where = f"the annotated image is at {_file(done.outputs.get('image'))}"
    if not found:
        return f"No objects were found; {where}."
    groups: dict[str, list[Any]] = {}
    for item in found:
        groups.setdefault(_name(item), []).append(item.get("score"))
    parts = []
    for label, scores in list(groups.items())[:_MAX_LISTED]:
        shown = [_score(s, True) for s in scores[:4]] if done.probabilities else []
        shown = [s for s in shown if s] + (["..."] if done.probabilities and len(scores) > 4
                                           else [])
        parts.append(plural(label, len(scores)) + (f" ({', '.join(shown)})" if shown else ""))
    listed_parts = listed(parts, max(0, len(groups) - _MAX_LISTED))
    if len(groups) == 1:
        return f"Found {listed_parts}; {where}."
    return f"Found {len(found)} objects: {listed_parts}; {where}."


def _segments(done: Finished) -> str:
    found = _labels(done.outputs.get("segments"))
    where = f"the segment map is at {_file(done.outputs.get('image'))}"
    if not found:
        return f"No segments were found; {where}."
    parts = []
    for item in found[:_MAX_LISTED]:
        if isinstance(item.get("area"), float):
            parts.append(f"{_name(item)} ({percent(item['area'])} of the image)")
        elif isinstance(item.get("score"), float):
            parts.append(f"{_name(item)} ({_score(item['score'], done.probabilities)})")
        else:
            parts.append(_name(item))
    return (f"Found {plural('segment', len(found))}: "
            f"{listed(parts, max(0, len(found) - _MAX_LISTED))}; {where}.")


def _image_to_text(done: Finished) -> str:
    text = done.outputs.get("text")
    reads = any(word in done.model.lower() for word in ("ocr", "donut")) or (
        isinstance(text, str) and "\n" in text.strip())  # a caption is one line
    return _headed("The image says" if reads else "Caption", done.outputs.get("text"),
                   "No text was read in the image." if reads else "The caption is empty.")


def _image_text(done: Finished) -> str:
    asked = bool(done.args.get("text", "").strip())
    return _headed("Answer" if asked else "Description", done.outputs.get("text"),
                   "The model gave an empty answer.")


# ------------------------------------------------------------------ the rest

def _similarity(done: Finished) -> str:
    score = done.outputs.get("score")
    if not isinstance(score, (int, float)):
        return "No similarity score came out."
    texts = [done.args.get("text", ""), done.args.get("text2", "")]
    sentences = all(t and "<GENERATED>" not in t and len(t) < 200
                    and len(re.findall(r"[.!?](\s|$)", t.strip())) <= 1 for t in texts)
    what = "sentences" if sentences else "texts"
    if score >= 0.8:
        verdict = "mean nearly the same"
    elif score >= 0.6:
        verdict = "are similar"
    elif score >= 0.4:
        verdict = "are related but not the same"
    elif score >= 0.2:
        verdict = "are only loosely related"
    else:
        verdict = "are unrelated"
    return f"The two {what} {verdict} (similarity {score:.2f})."


def _embedding(done: Finished) -> str:
    ref = done.outputs.get("embedding")
    dims = ref.get("dims") if is_artifact_ref(ref) else None
    size = f" ({dims} numbers)" if dims else ""
    return f"Computed the text's embedding{size}, saved in {_file(ref)}."


def _fill_mask(done: Finished) -> str:
    labels = _labels(done.outputs.get("labels"))
    text = _text(done.outputs.get("text"))
    if not labels:
        return f"Filled in: {text}"
    ranked = _ranked(labels, done.probabilities, limit=4).replace("; then", "; other guesses:")
    return f"Filled in: {text} (the word: {ranked})"


def _translation(done: Finished) -> str:
    target = done.args.get("tgt_lang", "").strip()
    named = _language(target) if target and "<GENERATED>" not in target else None
    return _headed(f"In {named}" if named else "Translation", done.outputs.get("text"),
                   "The translation is empty.")


def _transcript(done: Finished) -> str:
    return _headed("Transcript", done.outputs.get("text"),
                   "No speech was recognised in the recording.")


def _saved(what: str, output: str) -> Callable[[Finished], str]:
    return lambda done: f"{what} saved to {_file(done.outputs.get(output))}."


def _headed_as(head: str, empty: str) -> Callable[[Finished], str]:
    return lambda done: _headed(head, done.outputs.get("text"), empty)


_SAY: dict[str, Callable[[Finished], str]] = {
    "text-classification": _text_classification,
    "zero-shot-classification": _zero_shot,
    "token-classification": _entities,
    "summarization": _headed_as("Summary", "The summary is empty."),
    "translation": _translation,
    "question-answering": _headed_as("Answer", "No answer was found in the text."),
    "text-generation": _headed_as("Generated text", "The model generated nothing."),
    "text2text-generation": _headed_as("Result", "The model returned an empty text."),
    "conversational": _headed_as("Reply", "The model gave an empty reply."),
    "sentence-similarity": _similarity,
    "feature-extraction": _embedding,
    "fill-mask": _fill_mask,
    "tabular-classification": _tabular,
    "table-question-answering": _headed_as("Answer from the table",
                                           "No answer was found in the table."),
    "image-classification": _image_classification,
    "object-detection": _objects,
    "image-segmentation": _segments,
    "depth-estimation": _saved("Depth map", "image"),
    "image-to-text": _image_to_text,
    "zero-shot-image-classification": _zero_shot,
    "image-text-to-text": _image_text,
    "image-to-image": _saved("Edited image", "image"),
    "text-to-image": _saved("Image", "image"),
    "text-to-video": _saved("Video", "video"),
    "visual-question-answering": _headed_as("Answer", "The model gave an empty answer."),
    "document-question-answering": _headed_as("From the document",
                                              "No answer was found in the document."),
    "text-to-speech": _saved("Speech", "audio"),
    "automatic-speech-recognition": _transcript,
    "audio-to-audio": _saved("Processed audio", "audio"),
    "audio-classification": _audio_classification,
}


def _generic(done: Finished) -> str:
    """A task type without its own wording: each output in turn."""
    parts = []
    for name, value in done.outputs.items():
        if is_artifact_ref(value) and value.get("kind") != "text":
            parts.append(f"{name} saved to {_file(value)}")
        elif isinstance(value, float):
            parts.append(f"{name}: {value:.2f}")
        elif isinstance(value, list) and _labels(value):
            parts.append(f"{name}: {_ranked(_labels(value), done.probabilities)}")
        else:
            parts.append(f"{name}: {_text(value)}")
    return "; ".join(parts) + "." if parts else "It finished with no output."


def say(done: Finished) -> str:
    """The sentence for one done subtask (several lines when a text output has them)."""
    return _SAY.get(done.task, _generic)(done)
