"""The local backend: Hugging Face models run with transformers on this machine.

Where transformers 5 still has a pipeline for a task, the tool uses it; for the tasks
whose pipelines it removed (summarization, translation, text2text generation, question
answering, visual question answering) and for image captioning (its pipeline became the
chat-style ``image-text-to-text``), the tool loads the model class and calls it or its
``generate`` directly.

Models load lazily, on the first call that needs them, and only from local files: a
model directory, or a hub id whose files are already in the Hugging Face cache. Nothing
is downloaded. Loaded models stay in a small per-process LRU (see
:func:`set_max_loaded`; a run's ``max_loaded_models``) keyed by (task, model id); the
bound counts models being loaded and models in use, so memory never holds more; two
subtasks asking for the same model wait for one load. Code shipped with a model runs only
when its catalog card says ``trust_remote_code``. Importing this module imports neither
torch nor transformers.
"""

from __future__ import annotations

import math
import re
import threading
import time
import wave
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from hugginggpt.tools.errors import LimitExceededError, ToolExecutionError
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.registry import ToolContext, backend_settings, register_tool
from hugginggpt.tools.threads import MODEL_LOAD_LOCK

__all__ = [
    "LOCAL_BACKEND",
    "LOAD_LOCK",
    "DEFAULT_MAX_LOADED",
    "is_available",
    "set_max_loaded",
    "loaded_models",
    "peak_loaded",
    "clear_loaded",
    "load",
    "device_and_dtype",
    "read_wav",
]

LOCAL_BACKEND = "local"
DEFAULT_MAX_LOADED = 3
ROOM_WAIT_S = 300.0
"""How long a load waits for a model slot while every loaded model is in use."""
MAX_NEW_TOKENS = 128
"""Upper bound on generated tokens for every generating task."""
MAX_TOP_K = 5
"""Labels returned by the classification tasks, best first."""
DETECTION_THRESHOLD = 0.5
"""Objects scored below this are not reported (nor drawn)."""
MAX_ANSWER_TOKENS = 30
"""Longest span extractive question answering returns."""
MAX_AUDIO_S = 600.0
"""Longer recordings are refused rather than transcribed for minutes."""
_SEQ2SEQ_TASKS = ("summarization", "translation", "text2text-generation")
_PIPELINE_TASKS = {
    "text-classification": "text-classification",
    "zero-shot-classification": "zero-shot-classification",
    "token-classification": "token-classification",
    "text-generation": "text-generation",
    "conversational": "text-generation",
    "feature-extraction": "feature-extraction",
    "sentence-similarity": "feature-extraction",
    "image-classification": "image-classification",
    "object-detection": "object-detection",
    "image-segmentation": "image-segmentation",
    "depth-estimation": "depth-estimation",
    "automatic-speech-recognition": "automatic-speech-recognition",
    "audio-classification": "audio-classification",
    "text-to-speech": "text-to-audio",
}
"""Our task type -> the transformers 5 pipeline that runs it."""
_MODEL_CLASSES = {
    **dict.fromkeys(_SEQ2SEQ_TASKS, "AutoModelForSeq2SeqLM"),
    "question-answering": "AutoModelForQuestionAnswering",
    "image-to-text": "AutoModelForImageTextToText",
    "visual-question-answering": "AutoModelForVisualQuestionAnswering",
}
"""Our task type -> the transformers auto class that loads its model, for the rest."""


# ----------------------------------------------------------------------------- availability


def is_available(model_id: str) -> bool:
    """Whether ``model_id`` can load here without a download: a local directory with a
    ``config.json``, or a hub id whose ``config.json`` is in the Hugging Face cache."""
    path = Path(model_id).expanduser()
    if path.is_dir():
        return (path / "config.json").is_file()
    if path.is_absolute() or model_id.startswith((".", "~")) or model_id.count("/") > 1:
        return False
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(model_id, "config.json")
    except ValueError:  # not a valid repo id (HFValidationError)
        return False
    return isinstance(found, str)


# ----------------------------------------------------------------------------- the LRU


@dataclass(eq=False)
class _Entry:
    value: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while the model runs: fast tokenizers and pipelines are not thread-safe."""
    users: int = 0
    """Calls using the model now; an entry in use is never dropped (its memory would not
    be freed anyway while a call holds it)."""


class _ModelCache:
    """A thread-safe LRU of loaded models; concurrent requests for one key load it once.

    The bound counts every model held in memory: cached ones and those being loaded. A
    load first drops idle models, least recently used first; when every model is in use
    it waits (at most :data:`ROOM_WAIT_S`) for one to become idle.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._loading: dict[tuple[str, str], threading.Lock] = {}
        self._pending = 0
        """Loads in progress: they hold (or will hold) memory too."""
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)
        self.peak = 0
        """The most models held at once (cached and being loaded) since the last clear."""

    def get(self, key: tuple[str, str], loader: Callable[[], Any],
            limit: int | None = None, use: bool = False) -> _Entry:
        """The entry for ``key``, loaded if needed, within ``limit`` models (None: the
        current bound). With ``use`` the caller holds it until :meth:`release`.

        Raises:
            LimitExceededError: every model slot stayed in use for :data:`ROOM_WAIT_S`.
        """
        with self._lock:
            if limit is not None:
                self.max_size = limit
            if (entry := self._hit(key, use)) is not None:
                return entry
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if (entry := self._hit(key, use)) is not None:
                    return entry
                self._make_room(key)
                self._pending += 1
                self.peak = max(self.peak, len(self._entries) + self._pending)
            try:
                entry = _Entry(loader(), users=int(use))
            except BaseException:
                with self._lock:
                    self._pending -= 1
                    self._loading.pop(key, None)
                    self._room.notify_all()
                raise
            with self._lock:  # cached and no longer loading in one step: no gap to reload in
                self._pending -= 1
                self._loading.pop(key, None)
                self._entries[key] = entry
                self._evict()
            return entry

    def release(self, entry: _Entry) -> None:
        """A call is done with ``entry``; it may now be dropped."""
        with self._lock:
            entry.users -= 1
            self._evict()
            self._room.notify_all()

    def _hit(self, key: tuple[str, str], use: bool) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            entry.users += int(use)
        return entry

    def _make_room(self, key: tuple[str, str]) -> None:
        """Under the lock: drop idle models until one more fits, waiting while all are in
        use."""
        deadline = time.monotonic() + ROOM_WAIT_S
        while True:
            self._evict(room_for=1)
            if len(self._entries) + self._pending < self.max_size:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise LimitExceededError(
                    f"no room to load {key[1]!r}: the {self.max_size} loaded models stayed in "
                    f"use for {ROOM_WAIT_S:g} s", setting="max_loaded_models",
                    value=self.max_size, env="HUGGINGGPT_MAX_LOADED_MODELS",
                    flag="--max-loaded-models")
            self._room.wait(left)

    def _evict(self, room_for: int = 0) -> None:
        """Under the lock: drop idle models, least recently used first, until the cached
        and loading ones plus ``room_for`` fit the bound."""
        evicted = False
        for key in list(self._entries):
            if len(self._entries) + self._pending + room_for <= self.max_size:
                break
            if self._entries[key].users == 0:
                del self._entries[key]
                evicted = True
        if evicted:
            _free_accelerator_memory()

    def resize(self, max_size: int) -> None:
        with self._lock:
            self.max_size = max_size
            self._evict()

    def keys(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Drop every idle model (a model in use goes when its call ends)."""
        with self._lock:
            for key in [k for k, e in self._entries.items() if e.users == 0]:
                del self._entries[key]
            self.peak = len(self._entries)
        _free_accelerator_memory()


_CACHE = _ModelCache(DEFAULT_MAX_LOADED)

LOAD_LOCK = MODEL_LOAD_LOCK
"""Held while any model loads, by every backend (see :data:`hugginggpt.tools.threads.MODEL_LOAD_LOCK`)."""


def set_max_loaded(n: int) -> None:
    """How many models may stay loaded at once (least recently used ones are dropped).

    A run sets it with ``max_loaded_models`` (the local backend's ``max_loaded``
    setting), applied when the run loads a model.
    """
    if n < 1:
        raise ValueError("at least one model must fit")
    _CACHE.resize(n)


def loaded_models() -> list[tuple[str, str]]:
    """The (task, model id) pairs loaded now, least recently used first."""
    return _CACHE.keys()


def peak_loaded() -> int:
    """The most models held at once (cached or loading) since :func:`clear_loaded`."""
    return _CACHE.peak


def clear_loaded() -> None:
    """Drop every loaded model that no call is using."""
    _CACHE.clear()


def _free_accelerator_memory() -> None:
    import sys

    torch = sys.modules.get("torch")  # never import torch just to free nothing
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


# ----------------------------------------------------------------------------- loading


def device_and_dtype() -> tuple[str, Any]:
    """CUDA with bfloat16 (float16 where bf16 is unsupported) if there is a GPU, else the
    CPU with float32."""
    import torch

    if torch.cuda.is_available():
        return "cuda", torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return "cpu", torch.float32


def _local_path(model_id: str) -> str:
    """The directory holding the model's files: the id itself when it is a directory,
    else its snapshot in the Hugging Face cache (never downloaded)."""
    if Path(model_id).expanduser().is_dir():
        return str(Path(model_id).expanduser())
    from huggingface_hub import snapshot_download

    return str(snapshot_download(model_id, local_files_only=True))


def _trust_remote_code(task: str, model_id: str) -> bool:
    """Only what the run's catalog card allows (the shipped catalog outside a run)."""
    catalog = backend_settings(LOCAL_BACKEND).get("catalog") or DEFAULT_CATALOG
    card = load_catalog(catalog).get(task, model_id)
    return bool(card and card.trust_remote_code)


@dataclass
class _Bundle:
    """A model loaded by its class, for tasks whose pipelines transformers 5 removed."""

    model: Any
    tokenizer: Any
    processor: Any = None


def _load_key(task: str) -> str:
    """Tasks that load a model the same way share cache entries."""
    if task in _SEQ2SEQ_TASKS:
        return "text2text-generation"
    return _PIPELINE_TASKS.get(task, task)


def _load_uncached(task: str, model_id: str) -> Any:
    """Load what ``task`` needs for ``model_id`` from local files only."""
    device, dtype = device_and_dtype()
    trust = _trust_remote_code(task, model_id)
    path = _local_path(model_id)
    import transformers as tf

    if task in _PIPELINE_TASKS:
        # A local directory: the pipeline reads files only (it forwards a
        # ``local_files_only`` argument to pipeline classes that reject it).
        make_pipeline: Callable[..., Any] = tf.pipeline
        return make_pipeline(_PIPELINE_TASKS[task], model=path, device=device, dtype=dtype,
                             trust_remote_code=trust)

    if task not in _MODEL_CLASSES:
        raise ToolExecutionError(f"the local backend does not run {task}")
    options: dict[str, Any] = {"local_files_only": True, "trust_remote_code": trust}
    auto_class = getattr(tf, _MODEL_CLASSES[task])
    model: Any = auto_class.from_pretrained(path, dtype=dtype, **options)
    model = model.to(device).eval()
    if task == "visual-question-answering":  # a processor takes the image and the question
        processor = tf.AutoProcessor.from_pretrained(path, **options)
        return _Bundle(model, getattr(processor, "tokenizer", None), processor)
    tokenizer = tf.AutoTokenizer.from_pretrained(path, **options)
    if task == "image-to-text":
        return _Bundle(model, tokenizer, tf.AutoImageProcessor.from_pretrained(path, **options))
    return _Bundle(model, tokenizer)


def load(task: str, model_id: str) -> Any:
    """The loaded model (a pipeline, or a tokenizer/processor and model) for ``task``.

    Raises:
        ToolExecutionError: the model cannot be loaded from local files; the message
            names the model and says why.
    """
    return _entry(task, model_id).value


def _entry(task: str, model_id: str, use: bool = False) -> _Entry:
    def loader() -> Any:
        try:
            with LOAD_LOCK:
                return _load_uncached(task, model_id)
        except ToolExecutionError:
            raise
        except Exception as exc:  # any loading failure (out of memory too) is said plainly
            raise ToolExecutionError(
                f"cannot load {model_id!r} for {task} from local files: "
                f"{type(exc).__name__}: {_gist(exc)}"
            ) from exc

    return _CACHE.get((_load_key(task), model_id), loader, _run_limit(), use)


def _run_limit() -> int | None:
    """The run's ``max_loaded_models`` (None outside a run: the current bound)."""
    limit = backend_settings(LOCAL_BACKEND).get("max_loaded")
    if limit is None:
        return None
    if int(limit) < 1:
        raise ToolExecutionError(
            f"max_loaded_models is {limit}: at least one model must fit; set "
            "--max-loaded-models or HUGGINGGPT_MAX_LOADED_MODELS to 1 or more")
    return int(limit)


@contextmanager
def _running(task: str, model_id: str) -> Iterator[Any]:
    """The loaded model, held exclusively while it runs (and never dropped meanwhile);
    memory errors become tool errors."""
    entry = _entry(task, model_id, use=True)
    try:
        with entry.lock, _out_of_memory_as_error(task, model_id):
            import torch

            with torch.inference_mode():
                yield entry.value
    finally:
        _CACHE.release(entry)


@contextmanager
def _out_of_memory_as_error(task: str, model_id: str) -> Iterator[None]:
    try:
        yield
    except MemoryError as exc:
        raise ToolExecutionError(f"out of memory running {model_id!r} for {task}") from exc
    except RuntimeError as exc:  # torch.OutOfMemoryError and CPU allocator failures
        text = str(exc).lower()
        if "out of memory" in text or "can't allocate memory" in text:
            raise ToolExecutionError(
                f"out of memory running {model_id!r} for {task}: {_gist(exc)}"
            ) from exc
        raise


_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception): .+")


def _gist(exc: BaseException) -> str:
    """The gist of an error: the underlying errors when the message embeds tracebacks
    (as the pipeline's "Could not load model ..." does), else its first line."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    causes = [line for line in text.splitlines() if _ERROR_LINE.match(line)]
    gist = "; ".join(dict.fromkeys(causes)) if causes else text.splitlines()[0]
    return gist[:400]


# ----------------------------------------------------------------------------- inputs


def _open_image(path: Path) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolExecutionError(f"cannot read the image {path.name}: {exc}") from exc


def read_wav(source: Path | BinaryIO) -> tuple[Any, int]:
    """A WAV file as a mono float32 array in [-1, 1] and its sampling rate.

    Only PCM WAV is read (with the stdlib; there is no ffmpeg to decode other formats).
    """
    import numpy as np

    try:
        with wave.open(str(source) if isinstance(source, Path) else source, "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            frames = wav.getnframes()
            if frames / max(rate, 1) > MAX_AUDIO_S:
                raise ToolExecutionError(
                    f"the audio lasts {frames / rate:.0f} s; at most {MAX_AUDIO_S:.0f} s")
            raw = wav.readframes(frames)
    except (wave.Error, EOFError) as exc:
        raise ToolExecutionError(
            f"cannot read the audio {getattr(source, 'name', 'input')}: {exc} "
            "(the local backend reads PCM WAV only; there is no ffmpeg here)"
        ) from exc
    if width == 1:
        samples = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        samples = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        bytes3 = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = bytes3[:, 0] | (bytes3[:, 1] << 8) | (bytes3[:, 2] << 16)
        samples = np.where(ints >= 1 << 23, ints - (1 << 24), ints).astype(np.float32) / 2**23
    elif width == 4:
        samples = np.frombuffer(raw, dtype="<i4").astype(np.float32) / 2**31
    else:
        raise ToolExecutionError(f"unsupported WAV sample width: {width} bytes")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return samples, rate


def _resample(samples: Any, rate: int, target: int) -> Any:
    """Linear interpolation: crude, but enough for speech models, and needs no ffmpeg."""
    import numpy as np

    if rate == target or len(samples) == 0:
        return samples
    count = max(1, round(len(samples) * target / rate))
    positions = np.linspace(0, len(samples) - 1, count)
    return np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)


def _audio_input(pipe: Any, recording: tuple[Any, int]) -> dict[str, Any]:
    """A recording as the pipeline takes it, at its feature extractor's sampling rate."""
    samples, rate = recording
    target = getattr(pipe.feature_extractor, "sampling_rate", None) or rate
    return {"raw": _resample(samples, rate, target), "sampling_rate": target}


def _labels(predictions: Any) -> list[dict[str, Any]]:
    return [{"label": str(p["label"]), "score": round(float(p["score"]), 6)}
            for p in predictions][:MAX_TOP_K]


# ----------------------------------------------------------------------------- text tools


def text_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Labels of a text, best first, with their scores."""
    with _running("text-classification", model) as pipe:
        return _labels(pipe(text, top_k=MAX_TOP_K, truncation=True))


def zero_shot_classification(text: str, labels: str, model: str) -> list[dict[str, Any]]:
    """The candidate labels (comma-separated) ranked for a text, by NLI entailment."""
    candidates = [label.strip() for label in labels.split(",") if label.strip()]
    if not candidates:
        raise ToolExecutionError("zero-shot classification needs at least one label")
    with _running("zero-shot-classification", model) as pipe:
        out = pipe(text, candidate_labels=candidates)
    return [{"label": label, "score": round(float(score), 6)}
            for label, score in zip(out["labels"], out["scores"], strict=True)]


def token_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Entities in a text (tokens grouped into words), with character offsets."""
    with _running("token-classification", model) as pipe:
        entities = pipe(text, aggregation_strategy="simple")
    return [{"entity": str(e.get("entity_group", e.get("entity"))), "word": str(e["word"]),
             "score": round(float(e["score"]), 6), "start": e.get("start"), "end": e.get("end")}
            for e in entities]


def _generation_budget(model: Any, input_length: int) -> int:
    """New tokens allowed: :data:`MAX_NEW_TOKENS`, less for models with short contexts."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") \
        else model.config
    limit = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings",
                                                             None)
    if limit and not getattr(config, "is_encoder_decoder", False):
        return max(1, min(MAX_NEW_TOKENS, int(limit) - input_length))
    return MAX_NEW_TOKENS


def _generate_text(task: str, text: str, model: str) -> str:
    with _running(task, model) as pipe:
        chat = bool(getattr(pipe.tokenizer, "chat_template", None))
        prompt: Any = [{"role": "user", "content": text}] if chat else text
        length = len(pipe.tokenizer(text)["input_ids"]) + 16  # and a chat template's tokens
        out = pipe(prompt, max_new_tokens=_generation_budget(pipe.model, length),
                   return_full_text=False, do_sample=False)
    generated = out[0]["generated_text"]
    if isinstance(generated, list):  # chat output: the messages, the reply last
        generated = generated[-1]["content"] if generated else ""
    return str(generated).strip()


def text_generation(text: str, model: str) -> str:
    """A continuation of the text (a chat model answers it as a user message)."""
    return _generate_text("text-generation", text, model)


def conversational(text: str, model: str) -> str:
    """A chat reply, through the model's chat template when it has one."""
    return _generate_text("conversational", text, model)


def _embedding(text: str, model: str, task: str) -> Any:
    import numpy as np

    with _running(task, model) as pipe:
        hidden = np.asarray(pipe(text, truncation=True), dtype=np.float32)
    vector = hidden.reshape(-1, hidden.shape[-1]).mean(axis=0)  # mean over tokens
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def feature_extraction(text: str, model: str) -> list[float]:
    """The mean-pooled, L2-normalised last hidden state of a text."""
    return [float(v) for v in _embedding(text, model, "feature-extraction")]


def sentence_similarity(text: str, text2: str, model: str) -> float:
    """Cosine similarity of the two texts' mean-pooled embeddings."""
    first = _embedding(text, model, "sentence-similarity")
    second = _embedding(text2, model, "sentence-similarity")
    return float(first @ second)


_LANGUAGES = {
    "en": "English", "fr": "French", "de": "German", "ro": "Romanian", "es": "Spanish",
    "it": "Italian", "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "zh": "Chinese",
    "ja": "Japanese", "ar": "Arabic",
}


def _language_code(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip()
    by_name = {name.lower(): code for code, name in _LANGUAGES.items()}
    return by_name.get(value.lower(), value)


def _seq2seq_prompt(bundle: _Bundle, task: str, text: str, tgt: str | None,
                    src: str | None) -> tuple[str, dict[str, Any]]:
    """The input text (with the model's task prefix) and extra ``generate`` arguments."""
    config, tokenizer = bundle.model.config, bundle.tokenizer
    specific: dict[str, Any] = getattr(config, "task_specific_params", None) or {}
    extra: dict[str, Any] = {}
    if task == "summarization":
        return specific.get("summarization", {}).get("prefix", "") + text, extra
    if task != "translation":
        return text, extra
    directions = [k for k in specific if k.startswith("translation_")]
    wanted = f"translation_{src or 'en'}_to_{tgt}" if tgt else None
    key = wanted if wanted in specific else (directions[0] if directions and not tgt else None)
    if key is not None:
        return specific[key].get("prefix", "") + text, extra
    if getattr(config, "model_type", "") == "t5":
        if not tgt:
            raise ToolExecutionError(f"{bundle.model.name_or_path}: say tgt_lang to translate")
        source = _LANGUAGES.get(src or "en", src or "English")
        return f"translate {source} to {_LANGUAGES.get(tgt, tgt)}: {text}", extra
    if tgt:
        vocab = tokenizer.get_vocab()
        marian = f">>{tgt}<<"
        if marian in vocab:
            return f"{marian} {text}", extra
        for token in (tgt, f"__{tgt}__", f"{tgt}_XX"):
            if token in vocab:  # multilingual models (M2M100, mBART) start with the language
                extra["forced_bos_token_id"] = vocab[token]
                break
        if src and hasattr(tokenizer, "src_lang"):
            tokenizer.src_lang = next(
                (t for t in (src, f"__{src}__", f"{src}_XX") if t in vocab), src)
    return text, extra


def _seq2seq(task: str, text: str, model: str, tgt_lang: str | None = None,
             src_lang: str | None = None) -> str:
    with _running(task, model) as bundle:
        prompt, extra = _seq2seq_prompt(bundle, task, text, _language_code(tgt_lang),
                                        _language_code(src_lang))
        limit = min(int(bundle.tokenizer.model_max_length or 512), 1024)
        inputs = bundle.tokenizer(prompt, return_tensors="pt", truncation=True, max_length=limit)
        output = bundle.model.generate(**inputs.to(bundle.model.device),
                                       max_new_tokens=MAX_NEW_TOKENS, **extra)
        return str(bundle.tokenizer.decode(output[0], skip_special_tokens=True)).strip()


def summarization(text: str, model: str) -> str:
    """A summary, generated by a sequence-to-sequence model."""
    return _seq2seq("summarization", text, model)


def translation(text: str, model: str, tgt_lang: str | None = None,
                src_lang: str | None = None) -> str:
    """A translation. T5-style models get their task prefix; multilingual models are
    steered to ``tgt_lang``; single-pair models (Marian) translate their one direction."""
    return _seq2seq("translation", text, model, tgt_lang, src_lang)


def text2text_generation(text: str, model: str) -> str:
    """The output of an instruction-following sequence-to-sequence model (e.g. FLAN-T5)."""
    return _seq2seq("text2text-generation", text, model)


def question_answering(question: str, text: str, model: str) -> str:
    """The span of ``text`` that best answers ``question`` (an extractive QA model)."""
    import torch

    with _running("question-answering", model) as bundle:
        tokenizer, qa = bundle.tokenizer, bundle.model
        limit = min(int(tokenizer.model_max_length or 512), 512)
        inputs = tokenizer(question, text, return_tensors="pt", truncation="only_second",
                           max_length=limit, return_offsets_mapping=tokenizer.is_fast)
        offsets = inputs.pop("offset_mapping", None)
        out = qa(**inputs.to(qa.device))
        start, end = out.start_logits[0].float().cpu(), out.end_logits[0].float().cpu()
        ids = inputs["input_ids"][0].cpu()
        if tokenizer.is_fast:
            in_context = torch.tensor([s == 1 for s in inputs.sequence_ids(0)])
        else:  # the second segment, where the tokenizer marks one; never special tokens
            special = set(tokenizer.all_special_ids)
            in_context = torch.tensor([int(i) not in special for i in ids])
            if "token_type_ids" in inputs:
                in_context &= inputs["token_type_ids"][0].cpu() == 1
        if not bool(in_context.any()):
            raise ToolExecutionError("the context is empty after tokenisation")
        scores = start[:, None] + end[None, :]
        n = len(ids)
        ones = torch.ones(n, n, dtype=torch.bool)
        allowed = ones.triu() & ~ones.triu(MAX_ANSWER_TOKENS)  # start <= end, short spans
        allowed &= in_context[:, None] & in_context[None, :]
        best = int(torch.where(allowed, scores, -math.inf).flatten().argmax())
        first, last = divmod(best, n)
        if offsets is not None:
            return text[int(offsets[0][first][0]):int(offsets[0][last][1])].strip()
        return str(tokenizer.decode(ids[first:last + 1], skip_special_tokens=True)).strip()


# ----------------------------------------------------------------------------- vision tools


def image_classification(image: Path, model: str) -> list[dict[str, Any]]:
    """What the image shows: labels, best first, with scores."""
    picture = _open_image(image)
    with _running("image-classification", model) as pipe:
        return _labels(pipe(picture, top_k=MAX_TOP_K))


_COLORS = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48),
           (145, 30, 180), (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212)]


def object_detection(image: Path, model: str, ctx: ToolContext) -> dict[str, Any]:
    """The objects found (label, score, box in pixels) and the image with them drawn."""
    from PIL import ImageDraw

    picture = _open_image(image)
    with _running("object-detection", model) as pipe:
        found = pipe(picture, threshold=DETECTION_THRESHOLD)
    objects: list[dict[str, Any]] = [
        {"label": str(o["label"]), "score": round(float(o["score"]), 6),
         "box": {k: int(round(float(v))) for k, v in o["box"].items()}}
        for o in found
    ]
    draw = ImageDraw.Draw(picture)
    for i, obj in enumerate(objects):
        box, color = obj["box"], _COLORS[i % len(_COLORS)]
        draw.rectangle((box["xmin"], box["ymin"], box["xmax"], box["ymax"]), outline=color,
                       width=max(1, round(min(picture.size) / 150)))
        draw.text((box["xmin"] + 2, box["ymin"] + 1), f"{obj['label']} {obj['score']:.2f}",
                  fill=color)
    _, path = ctx.artifacts.new_path(".png")
    picture.save(path)
    return {"image": path, "objects": objects}


def image_segmentation(image: Path, model: str, ctx: ToolContext) -> dict[str, Any]:
    """A colour-coded segment map over the image, and the segments (label, score, area)."""
    import numpy as np
    from PIL import Image

    picture = _open_image(image)
    with _running("image-segmentation", model) as pipe:
        found = pipe(picture)
    overlay = np.zeros((picture.height, picture.width, 3), dtype=np.uint8)
    segments = []
    for i, seg in enumerate(found):
        mask = np.asarray(seg["mask"].convert("L").resize(picture.size)) > 127
        overlay[mask] = _COLORS[i % len(_COLORS)]
        score = seg.get("score")
        segments.append({"label": str(seg["label"]),
                         "score": None if score is None else round(float(score), 6),
                         "area": round(float(mask.mean()), 6)})
    blended = Image.blend(picture, Image.fromarray(overlay), 0.6)
    _, path = ctx.artifacts.new_path(".png")
    blended.save(path)
    return {"image": path, "segments": segments}


def depth_estimation(image: Path, model: str, ctx: ToolContext) -> Path:
    """A depth map as a grey image: the model's prediction scaled to 0-255 (for
    relative-depth models such as DPT and Depth Anything, brighter is nearer)."""
    picture = _open_image(image)
    with _running("depth-estimation", model) as pipe:
        out = pipe(picture)
    _, path = ctx.artifacts.new_path(".png")
    out["depth"].convert("L").save(path)
    return path


def image_to_text(image: Path, model: str) -> str:
    """A caption for the image (or its text, for OCR models), generated from pixels."""
    picture = _open_image(image)
    with _running("image-to-text", model) as bundle:
        inputs = bundle.processor(images=picture, return_tensors="pt")
        inputs = {k: v.to(bundle.model.device) for k, v in inputs.items()}
        output = bundle.model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS)
        return str(bundle.tokenizer.decode(output[0], skip_special_tokens=True)).strip()


def visual_question_answering(image: Path, question: str, model: str) -> str:
    """The answer to a question about an image: generated, or the best of the model's
    answer classes (ViLT)."""
    picture = _open_image(image)
    with _running("visual-question-answering", model) as bundle:
        inputs = bundle.processor(images=picture, text=question, return_tensors="pt",
                                  truncation=True)
        inputs = {k: v.to(bundle.model.device) for k, v in inputs.items()}
        if bundle.model.can_generate():
            output = bundle.model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS)
            return str(bundle.tokenizer.decode(output[0], skip_special_tokens=True)).strip()
        logits = bundle.model(**inputs).logits[0]
        return str(bundle.model.config.id2label[int(logits.argmax())])


# ----------------------------------------------------------------------------- audio tools


def automatic_speech_recognition(audio: Path, model: str) -> str:
    """The transcript of a WAV recording."""
    recording = read_wav(audio)
    with _running("automatic-speech-recognition", model) as pipe:
        inputs = _audio_input(pipe, recording)
        long = len(inputs["raw"]) > 30 * inputs["sampling_rate"]
        out = pipe(inputs, **({"chunk_length_s": 30} if long else {}))
    return str(out["text"]).strip()


def audio_classification(audio: Path, model: str) -> list[dict[str, Any]]:
    """What a WAV recording contains (a keyword, a sound, a language), best first."""
    recording = read_wav(audio)
    with _running("audio-classification", model) as pipe:
        return _labels(pipe(_audio_input(pipe, recording), top_k=MAX_TOP_K))


def text_to_speech(text: str, model: str, ctx: ToolContext) -> Path:
    """The text read aloud, as a 16-bit mono WAV file."""
    import numpy as np

    with _running("text-to-speech", model) as pipe:
        out = pipe(text)
    samples = np.clip(np.asarray(out["audio"], dtype=np.float32).reshape(-1), -1.0, 1.0)
    _, path = ctx.artifacts.new_path(".wav")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(int(out["sampling_rate"]))
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    return path


TOOLS: dict[str, Callable[..., Any]] = {
    "text-classification": text_classification,
    "zero-shot-classification": zero_shot_classification,
    "token-classification": token_classification,
    "text-generation": text_generation,
    "conversational": conversational,
    "feature-extraction": feature_extraction,
    "sentence-similarity": sentence_similarity,
    "summarization": summarization,
    "translation": translation,
    "text2text-generation": text2text_generation,
    "question-answering": question_answering,
    "image-classification": image_classification,
    "object-detection": object_detection,
    "image-segmentation": image_segmentation,
    "depth-estimation": depth_estimation,
    "image-to-text": image_to_text,
    "visual-question-answering": visual_question_answering,
    "automatic-speech-recognition": automatic_speech_recognition,
    "audio-classification": audio_classification,
    "text-to-speech": text_to_speech,
}
"""Every task type this backend runs, and its tool."""

for _task, _fn in TOOLS.items():
    register_tool(_fn, _task, backend=LOCAL_BACKEND, available=is_available)
