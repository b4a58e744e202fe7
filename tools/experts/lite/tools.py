"""The lite tools: OCR, sentiment, language identification, extractive summaries,
sentence similarity, embeddings and zero-shot labels, on the engines of :mod:`.engines`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.confidence import (
    Confidence,
    from_cosines,
    from_lookup,
    from_ocr,
    from_vader,
)
from hugginggpt.tools.experts.lite.engines import (
    MINILM_ZERO_SHOT,
    OCR_LOCK,
    OCR_LOOKUP,
    RAPIDOCR,
    SUMMA_LOCK,
    TEXTRANK,
    VADER,
    ocr_engine,
    text_encoder,
    textrank,
    vader,
)
from hugginggpt.tools.experts.lite.languages import LINGUA, confidences, language_of
from hugginggpt.tools.experts.registry import ToolContext
from hugginggpt.tools.languages import name_of

__all__ = [
    "MAX_TEXT_CHARS", "SUMMA_LANGUAGES", "sentence_similarity", "feature_extraction",
    "ocr_lines", "ocr_scored", "image_to_text", "document_question_answering", "sentiment",
    "detect_language", "summarize", "zero_shot",
]

MAX_TEXT_CHARS = 100_000
"""Longest text a lite engine accepts: TextRank's graph grows with the square of the
sentence count."""
MAX_LABELS = 50
MAX_LANGUAGES = 5
"""Languages a detection lists: the rest share what little probability is left."""
ZERO_SHOT_TEMPLATE = "This text is about {label}."
LOOKUP_MIN_SIMILARITY = 0.25
"""Below this cosine, no document line relates to the question: fail rather than guess."""
VADER_NEUTRAL_BAND = 0.05
"""VADER's documented threshold: |compound| below it is neutral."""
SUMMARY_RATIO = 0.25
MAX_SUMMARY_SENTENCES = 5
MIN_SUMMARY_FROM = 4
"""A text of this many sentences or more keeps at least two: one sentence of a short
note is its headline, not its summary."""
MIN_LEAD_WORDS = 6
"""A summary of two sentences or more also keeps the text's first sentence when it has
this many words (a sentence, not a title): what a text is about is most often said first
(the "lead" baseline that TextRank alone trails on news). It comes besides TextRank's
picks, not instead of one: the first line of notes or minutes is often their heading."""

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t][^\n]*$", re.MULTILINE)
"""A Markdown heading line: a title, not a sentence to summarise."""
SUMMA_LANGUAGES = {code: name_of(code).lower() for code in (
    "ar", "da", "de", "en", "es", "fi", "fr", "hu", "it", "nl", "no", "pl", "pt", "ro", "ru",
    "sv")}
"""Codes of the languages summa has a stemmer for -> summa's names for them."""


def _checked(text: str, engine: str) -> str:
    """The text, refused when it is empty or too long for an in-process engine."""
    if not text.strip():
        raise ToolExecutionError(f"{engine}: the text is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ToolExecutionError(
            f"{engine}: the text has {len(text)} characters, more than {MAX_TEXT_CHARS}"
        )
    return text


def _ranked(scores: dict[str, float]) -> list[dict[str, Any]]:
    """Labels in the pipeline format, best first (ties keep the given order)."""
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [{"label": label, "score": round(score, 4)} for label, score in ordered]


def sentence_similarity(text: str, text2: str) -> float:
    """Cosine similarity of the two texts' normalised MiniLM embeddings."""
    embeddings = text_encoder().encode([text, text2], normalize_embeddings=True)
    return float(embeddings[0] @ embeddings[1])


def feature_extraction(text: str) -> list[float]:
    """The normalised 384-dimensional MiniLM embedding of a text."""
    return text_encoder().encode(text, normalize_embeddings=True).tolist()


def _rows(found: Sequence[Sequence[Any]]) -> list[str]:
    """OCR boxes as text rows, top to bottom, each row's boxes left to right.

    RapidOCR returns one box per run of text, so words separated by a wide gap on the
    same row come as separate boxes; a box joins a row when its middle lies within the
    height of the row's first box.
    """
    boxes = sorted(
        (min(y for _, y in box), max(y for _, y in box), min(x for x, _ in box), text)
        for box, text, _score in found
    )
    rows: list[tuple[float, float, list[tuple[float, str]]]] = []
    for top, bottom, left, text in boxes:
        if rows and rows[-1][0] <= (top + bottom) / 2 <= rows[-1][1]:
            rows[-1][2].append((left, text))
        else:
            rows.append((top, bottom, [(left, text)]))
    return [" ".join(text for _, text in sorted(words)) for _, _, words in rows]


def ocr_lines(image: Path) -> list[str]:
    """The text rows RapidOCR reads in a local image file, in reading order.

    Raises:
        ToolExecutionError: the image is not a local file or cannot be decoded.
    """
    return ocr_scored(image)[0]


def ocr_scored(image: Path) -> tuple[list[str], Confidence]:
    """:func:`ocr_lines` and how sure RapidOCR was: its boxes' recognition scores,
    averaged over the characters read (:func:`~hugginggpt.tools.experts.confidence.
    from_ocr`).

    Raises:
        ToolExecutionError: the image is not a local file or cannot be decoded.
    """
    from rapidocr_onnxruntime.utils.load_image import LoadImageError

    path = Path(image)
    if not path.is_file():
        raise ToolExecutionError(
            f"{image}: not a local file; the lite engines run offline and read only "
            "attached or workspace files"
        )
    try:
        with OCR_LOCK:
            found, _elapsed = ocr_engine()(str(path))
    except LoadImageError as exc:
        raise ToolExecutionError(f"{path.name}: not a readable image: {exc}") from exc
    scored = [(str(text), float(score)) for _box, text, score in found or [] if str(text).strip()]
    return [row for row in _rows(found or []) if row.strip()], from_ocr(scored)


def image_to_text(image: Path, ctx: ToolContext | None = None) -> str:
    """The text read from an image, one row per line, in reading order; in a run,
    ``ctx.confidence`` says how sure RapidOCR was.

    Raises:
        ToolExecutionError: no text was found (OCR cannot describe a picture, so an
            empty answer would hide that nothing was read).
    """
    lines, confidence = ocr_scored(image)
    if ctx is not None:
        ctx.confidence = confidence
    if not lines:
        raise ToolExecutionError(
            f"{RAPIDOCR} found no text in {Path(image).name}: it reads text and cannot "
            "describe what a picture shows"
        )
    return "\n".join(lines)


def document_question_answering(image: Path, question: str,
                                ctx: ToolContext | None = None) -> str:
    """The document's text line most similar in meaning to the question.

    A look-up, not reading comprehension: it finds a labelled value ("Total: 23.48")
    but cannot count, compute or combine lines. In a run, ``ctx.confidence`` is the best
    line's cosine margin over the next (:func:`~hugginggpt.tools.experts.confidence.
    from_lookup`), and says so too when the OCR was unsure of a line.

    Raises:
        ToolExecutionError: the document has no text, or no line is similar enough.
    """
    question = _checked(question, OCR_LOOKUP)
    lines = image_to_text(image, ctx).splitlines()
    vectors = text_encoder().encode([question, *lines], normalize_embeddings=True)
    similarities = [float(vectors[0] @ v) for v in vectors[1:]]
    best = max(range(len(lines)), key=similarities.__getitem__)
    if similarities[best] < LOOKUP_MIN_SIMILARITY:
        raise ToolExecutionError(
            f"{OCR_LOOKUP}: no line of the document relates to the question (closest: "
            f"{lines[best]!r}, similarity {similarities[best]:.2f} < {LOOKUP_MIN_SIMILARITY})"
        )
    if ctx is not None:
        ctx.confidence = from_lookup(list(zip(lines, similarities, strict=True)), ctx.confidence)
    return lines[best]


def sentiment(text: str, ctx: ToolContext | None = None) -> list[dict[str, Any]]:
    """POSITIVE, NEGATIVE and NEUTRAL scores from VADER's compound score.

    VADER's own verdict is positive for compound >= 0.05, negative for <= -0.05, else
    neutral. The scores split |compound| against that band (NEUTRAL weighs 0.05), so they
    sum to 1 and the top label is that verdict. VADER's pos/neu/neg word proportions are
    not used for the scores: on plain prose "neu" outweighs even clearly positive
    reviews. They do say, with |compound|, how much the verdict rests on: in a run,
    ``ctx.confidence`` marks a weak or mixed verdict uncertain (:func:`~hugginggpt.tools.
    experts.confidence.from_vader`).
    """
    scores = vader().polarity_scores(_checked(text, VADER))
    if ctx is not None:
        ctx.confidence = from_vader(scores)
    compound = float(scores["compound"])
    raw = {
        "POSITIVE": max(0.0, compound),
        "NEGATIVE": max(0.0, -compound),
        "NEUTRAL": VADER_NEUTRAL_BAND,
    }
    total = sum(raw.values())
    return _ranked({label: value / total for label, value in raw.items()})


def detect_language(text: str) -> list[dict[str, Any]]:
    """The text's likeliest languages by lingua, as ISO 639-1 codes with lingua's
    confidence values (they sum to 1 over the languages compared; a short or ambiguous
    text gets a low top value, reported as it is), at most :data:`MAX_LANGUAGES`.

    Raises:
        ToolExecutionError: the text has no letters to go on (digits, punctuation).
    """
    found = confidences(_checked(text, LINGUA))
    if not found:
        raise ToolExecutionError(
            f"{LINGUA} cannot tell the language: the text has no words to go on")
    return _ranked(dict(found[:MAX_LANGUAGES]))


def _summa_language(text: str) -> str:
    """summa's name for the text's language, English when unknown or unsupported."""
    code = language_of(text)
    return SUMMA_LANGUAGES.get(code or "en", "english")


def _unwrapped(text: str) -> str:
    """The text with each paragraph on one line (blank lines separate paragraphs), and
    without Markdown headings.

    summa ends a sentence at every line break, so hard-wrapped prose (e-mail, OCR
    output with one row per line) would be cut into fragments mid-sentence.
    """
    paragraphs = _PARAGRAPH_BREAK.split(_HEADING.sub("", text))
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def summarize(text: str) -> str:
    """An extractive summary: the most central quarter of the sentences (1 to 5) and the
    first one (:data:`MIN_LEAD_WORDS`), kept in their original order.

    TextRank needs sentences that share words; a text too short or too disconnected for
    it gets its first sentences instead of summa's empty string.

    Raises:
        ToolExecutionError: the text is empty, too long, or has no sentence.
    """
    text = _unwrapped(_checked(text, TEXTRANK))
    engine = textrank()  # before any other summa import: importing summa is its load
    from summa.preprocessing.textcleaner import split_sentences

    sentences = [s.strip() for s in split_sentences(text) if s.strip()]
    if not sentences:
        raise ToolExecutionError(f"{TEXTRANK}: found no sentence in the text")
    least = 1 if len(sentences) < MIN_SUMMARY_FROM else 2
    keep = min(MAX_SUMMARY_SENTENCES, max(least, int(len(sentences) * SUMMARY_RATIO + 0.5)))
    language = _summa_language(text)
    with SUMMA_LOCK:
        scored = engine.summarize(
            text, ratio=1.0, language=language, split=True, scores=True)
    if len(scored) < keep:
        return " ".join(sentences[:keep])
    best = sorted(range(len(scored)), key=lambda i: -scored[i][1])[:keep]
    if keep > 1 and 0 not in best and len(scored[0][0].split()) >= MIN_LEAD_WORDS:
        best.append(0)  # the lead, besides the central ones
    return " ".join(scored[i][0].strip() for i in sorted(best))


def _label_list(labels: str) -> list[str]:
    """Candidate labels from the comma-separated argument, without blanks or repeats."""
    names = list(dict.fromkeys(n.strip() for n in labels.split(",") if n.strip()))
    if not names:
        raise ToolExecutionError(
            f"{MINILM_ZERO_SHOT}: no candidate labels; give them comma-separated, "
            "e.g. 'sports, finance'"
        )
    if len(names) > MAX_LABELS:
        raise ToolExecutionError(
            f"{MINILM_ZERO_SHOT}: {len(names)} labels, more than {MAX_LABELS}")
    return names


def zero_shot(text: str, labels: str, ctx: ToolContext | None = None) -> list[dict[str, Any]]:
    """Each label scored by the cosine between the text's MiniLM embedding and
    "This text is about {label}." (cosines, not probabilities), best first; in a run,
    ``ctx.confidence`` is the best label's margin over the second."""
    names = _label_list(labels)
    hypotheses = [ZERO_SHOT_TEMPLATE.format(label=name) for name in names]
    vectors = text_encoder().encode(
        [_checked(text, MINILM_ZERO_SHOT), *hypotheses], normalize_embeddings=True)
    cosines = {name: float(vectors[0] @ v) for name, v in zip(names, vectors[1:], strict=True)}
    if ctx is not None:
        ctx.confidence = from_cosines(list(cosines.values()), MINILM_ZERO_SHOT)
    return _ranked(cosines)
