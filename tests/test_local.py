"""The local backend: tiny random transformers models, built here, run inside the graph.

Weights are random, so the tests check what a model's output must be whatever its
weights (types, shapes, labels from the model's own label set, files that open), never
what it says. The models are built once per session; plans come from the scripted LLM
server, as in production.
"""

from __future__ import annotations

import json
import socket
import threading
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import hugginggpt.tools.experts.local as local
from hugginggpt.tools.audio import read_audio, resample
from hugginggpt.tools.experts import ArtifactStore, ModelCard, ToolExecutionError, registered_tools
from hugginggpt.tools.experts.local import audio, models, speech, text, vision
from hugginggpt.tools.experts.registry import run_settings
from hugginggpt.tools.languages import code_of
from tests import tiny_models
from tests.conftest import benchmark, run, wait_until_inside

PHOTO_SIZE = (64, 48)


def _plan(*subtasks: dict[str, Any]) -> dict[str, Any]:
    return {"tool_args": {"subtasks": list(subtasks)}}


def _sub(i: int, task: str, dep: list[int] | None = None, **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [], "args": args}


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every tiny model, by builder name -> its directory (the model id)."""
    root = tmp_path_factory.mktemp("tiny-models")
    return {name: str(tiny_models.build(name, root)) for name in tiny_models.BUILDERS}


@pytest.fixture(autouse=True)
def quick_local(monkeypatch: pytest.MonkeyPatch):
    """Short generations, every detection reported, and the default LRU bound after."""
    monkeypatch.setattr(text, "MAX_NEW_TOKENS", 8)  # read where the adapters look it up
    monkeypatch.setattr(vision, "MAX_NEW_TOKENS", 8)
    monkeypatch.setattr(vision, "DETECTION_THRESHOLD", 0.0)
    yield
    models.set_max_loaded(models.DEFAULT_MAX_LOADED)


@pytest.fixture
def local_catalog(tmp_path: Path, tiny: dict[str, str]):
    """Write a catalog whose models are tiny model directories: (task, builder name)."""

    def write(*entries: tuple[str, str]) -> str:
        path = tmp_path / "local-catalog.json"
        path.write_text(json.dumps({"version": 1, "models": [
            {"id": tiny.get(name, name), "task": task, "downloads": 10, "expected_latency_s": 0.1}
            for task, name in entries
        ]}))
        return str(path)

    return write


def _write_wav(path: Path, rate: int = 8000, seconds: float = 1.0, channels: int = 1,
               width: int = 2) -> Path:
    t = np.arange(int(rate * seconds)) / rate
    signal = 0.5 * np.sin(2 * np.pi * 220 * t)
    frames = np.repeat(signal[:, None], channels, axis=1).reshape(-1)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(width)
        wav.setframerate(rate)
        if width == 2:
            wav.writeframes((frames * 32767).astype("<i2").tobytes())
        else:  # 24-bit little-endian
            ints = (frames * (2**23 - 1)).astype("<i4")
            wav.writeframes(ints.view(np.uint8).reshape(-1, 4)[:, :3].tobytes())
    return path


@pytest.fixture
def media(workspace: Path) -> dict[str, str]:
    """A photo and a recording in the workspace, named as a plan names them."""
    pixels = np.random.default_rng(0).integers(0, 255, (PHOTO_SIZE[1], PHOTO_SIZE[0], 3))
    Image.fromarray(pixels.astype("uint8")).save(workspace / "photo.png")
    _write_wav(workspace / "speech.wav", rate=8000, channels=2)  # resampled to 16 kHz
    return {"image": "photo.png", "audio": "speech.wav"}


def _done(out: dict[str, Any], tiny_ids: dict[int, str]) -> dict[int, Any]:
    results = out["results"]
    for i, model in tiny_ids.items():
        result = results[i]
        assert result.status == "done", (i, result.error)
        assert result.backend == "local"
        assert result.model == model
    return results


def _label_list(value: Any, allowed: set[str]) -> None:
    assert isinstance(value, list) and value
    for item in value:
        assert item["label"] in allowed
        assert 0.0 <= item["score"] <= 1.0


def _png(workspace: Path, ref: dict[str, Any]) -> Image.Image:
    assert ref["kind"] == "image"
    path = ArtifactStore(workspace, "t").resolve(ref)
    with Image.open(path) as image:
        image.load()
        assert image.format == "PNG"
        return image


# ---------------------------------------------------------------------------- inside the graph


def test_text_tasks_run_on_the_local_backend(
    compiled, make_context, llm_server, local_catalog, tiny
):
    catalog = local_catalog(
        ("text-classification", "text-classification"),
        ("zero-shot-classification", "zero-shot-classification"),
        ("token-classification", "token-classification"),
        ("question-answering", "question-answering"),
        ("feature-extraction", "feature-extraction"),
        ("sentence-similarity", "feature-extraction"),
        ("text-generation", "text-generation"),
        ("conversational", "text-generation"),
    )
    context_text = "the man walks in paris and the woman sees london"
    llm_server.script("planner", _plan(
        _sub(0, "text-classification", text="what a great movie"),
        _sub(1, "zero-shot-classification", text="the weather is good today",
             labels="weather, movie, city"),
        _sub(2, "token-classification", text=context_text),
        _sub(3, "question-answering", question="where does the man walk", text=context_text),
        _sub(4, "feature-extraction", text="the cat sat on the mat"),
        _sub(5, "sentence-similarity", text="the cat sat", text2="a dog runs"),
        _sub(6, "text-generation", text="the cat"),
        _sub(7, "conversational", text="hello world"),
    ))
    out = run(compiled, make_context(backend="local", catalog=catalog))

    results = _done(out, {
        0: tiny["text-classification"], 1: tiny["zero-shot-classification"],
        2: tiny["token-classification"], 3: tiny["question-answering"],
        4: tiny["feature-extraction"], 5: tiny["feature-extraction"],
        6: tiny["text-generation"], 7: tiny["text-generation"],
    })
    _label_list(results[0].outputs["labels"], set(tiny_models.TEXT_LABELS.values()))
    assert len(results[0].outputs["labels"]) == len(tiny_models.TEXT_LABELS)
    zero_shot = results[1].outputs["labels"]
    _label_list(zero_shot, {"weather", "movie", "city"})
    assert len(zero_shot) == 3 and abs(sum(x["score"] for x in zero_shot) - 1) < 1e-3
    entity_types = {label.split("-")[-1] for label in tiny_models.NER_LABELS.values()} - {"O"}
    entities = results[2].outputs["entities"]
    assert isinstance(entities, list)
    for entity in entities:
        assert entity["entity"] in entity_types
        assert context_text[entity["start"]:entity["end"]].lower() == entity["word"]
    answer = results[3].outputs["text"]
    assert isinstance(answer, str) and answer and answer in context_text
    embedding = results[4].outputs["embedding"]
    assert embedding["kind"] == "vector" and embedding["dims"] == 32
    vector = ArtifactStore(Path(make_context().workspace), "t").read_json(embedding)
    assert abs(sum(v * v for v in vector) - 1.0) < 1e-4
    assert -1.0001 <= results[5].outputs["score"] <= 1.0001
    for i in (6, 7):
        assert isinstance(results[i].outputs["text"], str)
    assert out["status"] == "completed"


def test_seq2seq_tasks_generate_with_the_model_class(
    compiled, make_context, llm_server, local_catalog, tiny
):
    t5 = tiny["seq2seq"]
    catalog = local_catalog(("summarization", "seq2seq"), ("translation", "seq2seq"),
                            ("text2text-generation", "seq2seq"))
    llm_server.script("planner", _plan(
        _sub(0, "summarization", text="the cat sat on the mat and the dog sat on the cat"),
        _sub(1, "translation", [0], text="<GENERATED>-0", tgt_lang="fr"),
        _sub(2, "text2text-generation", text="what is the capital of france"),
        _sub(3, "translation", text="the cat sat"),  # T5 cannot guess the target language
    ))
    out = run(compiled, make_context(backend="local", catalog=catalog))

    results = _done(out, {0: t5, 1: t5, 2: t5})
    for i in (0, 1, 2):
        assert isinstance(results[i].outputs["text"], str)
    assert results[3].status == "failed"
    assert "ToolExecutionError" in results[3].error and "tgt_lang" in results[3].error
    # the three tasks share one loaded model
    assert [key for key in models.loaded_models() if key[1] == t5] == [("summarization", t5)]


def _bundle(model_type: str, vocab: dict[str, int], **config: Any) -> Any:
    from types import SimpleNamespace

    tokenizer = SimpleNamespace(get_vocab=lambda: vocab, src_lang="en_XX")
    model = SimpleNamespace(config=SimpleNamespace(model_type=model_type, **config),
                            name_or_path="m")
    return models._Bundle(model, tokenizer)


def test_translation_prompts_follow_the_model_family():
    prompt = text._seq2seq_prompt
    t5_params = {"translation_en_to_de": {"prefix": "translate English to German: "},
                 "summarization": {"prefix": "summarize: "}}
    t5 = _bundle("t5", {}, task_specific_params=t5_params)
    assert prompt(t5, "translation", "hi", "de", None) == ("translate English to German: hi", {})
    assert prompt(t5, "translation", "hi", None, None)[0].startswith("translate English to Ger")
    assert prompt(t5, "translation", "hi", "fr", "en") == ("translate English to French: hi", {})
    assert prompt(t5, "summarization", "text", None, None) == ("summarize: text", {})
    assert prompt(t5, "text2text-generation", "text", None, None) == ("text", {})
    with pytest.raises(ToolExecutionError, match="tgt_lang"):
        prompt(_bundle("t5", {}), "translation", "hi", None, None)
    marian = _bundle("marian", {">>fr<<": 5, "hi": 6})
    assert prompt(marian, "translation", "hi", "fr", None) == (">>fr<< hi", {})
    assert prompt(marian, "translation", "hi", None, None) == ("hi", {})  # its one direction
    mbart = _bundle("mbart", {"fr_XX": 7, "de_DE": 8, "en_XX": 9})
    assert prompt(mbart, "translation", "hi", "fr", "en") == ("hi", {"forced_bos_token_id": 7})
    assert code_of(" French ") == "fr" and code_of(None) is None


def test_vision_tasks_return_labels_and_image_files(
    compiled, make_context, llm_server, local_catalog, tiny, media, workspace
):
    catalog = local_catalog(
        ("image-classification", "image-classification"),
        ("object-detection", "object-detection"),
        ("image-segmentation", "image-segmentation"),
        ("depth-estimation", "depth-estimation"),
        ("image-to-text", "image-to-text"),
        ("visual-question-answering", "visual-question-answering"),
    )
    image = media["image"]
    llm_server.script("planner", _plan(
        _sub(0, "image-classification", image=image),
        _sub(1, "object-detection", image=image),
        _sub(2, "image-segmentation", image=image),
        _sub(3, "depth-estimation", image=image),
        _sub(4, "image-to-text", image=image),
        _sub(5, "visual-question-answering", image=image, question="is there a cat"),
    ))
    out = run(compiled, make_context(backend="local", catalog=catalog))

    results = _done(out, {i: tiny[t] for i, t in enumerate([
        "image-classification", "object-detection", "image-segmentation",
        "depth-estimation", "image-to-text", "visual-question-answering"])})
    labels = set(tiny_models.IMAGE_LABELS.values())
    _label_list(results[0].outputs["labels"], labels)
    assert len(results[0].outputs["labels"]) == len(labels)

    detection = results[1].outputs
    assert _png(workspace, detection["image"]).size == PHOTO_SIZE
    _label_list(detection["objects"], labels)  # threshold 0: every detection token
    for obj in detection["objects"]:
        box = obj["box"]
        assert set(box) == {"xmin", "ymin", "xmax", "ymax"}
        assert all(isinstance(v, int) for v in box.values())
        assert 0 <= box["xmin"] <= box["xmax"] < PHOTO_SIZE[0]  # within the image
        assert 0 <= box["ymin"] <= box["ymax"] < PHOTO_SIZE[1]

    segmentation = results[2].outputs
    assert _png(workspace, segmentation["image"]).size == PHOTO_SIZE
    assert segmentation["segments"]
    for segment in segmentation["segments"]:
        assert segment["label"] in labels and 0.0 < segment["area"] <= 1.0

    depth = _png(workspace, results[3].outputs["image"])
    assert depth.mode == "L"
    assert isinstance(results[4].outputs["text"], str)
    assert results[5].outputs["text"] in {"yes", "no", "two"}


def test_audio_tasks_read_and_write_wav_and_feed_dependents(
    compiled, make_context, llm_server, local_catalog, tiny, media, workspace
):
    catalog = local_catalog(
        ("automatic-speech-recognition", "automatic-speech-recognition"),
        ("audio-classification", "audio-classification"),
        ("text-classification", "text-classification"),
        ("text-to-speech", "text-to-speech"),
    )
    llm_server.script("planner", _plan(
        _sub(0, "automatic-speech-recognition", audio=media["audio"]),
        _sub(1, "text-classification", [0], text="<GENERATED>-0"),
        _sub(2, "audio-classification", audio=media["audio"]),
        _sub(3, "text-to-speech", text="hello world"),
        _sub(4, "automatic-speech-recognition", [3], audio="<GENERATED>-3"),
    ))
    out = run(compiled, make_context(backend="local", catalog=catalog))

    results = _done(out, {0: tiny["automatic-speech-recognition"],
                          1: tiny["text-classification"], 2: tiny["audio-classification"],
                          3: tiny["text-to-speech"], 4: tiny["automatic-speech-recognition"]})
    transcript = results[0].outputs["text"]
    assert isinstance(transcript, str)
    assert set(transcript) <= set("abcdefghijklmnopqrstuvwxyz' <>/s")  # the char vocab
    _label_list(results[1].outputs["labels"], set(tiny_models.TEXT_LABELS.values()))
    _label_list(results[2].outputs["labels"], set(tiny_models.AUDIO_LABELS.values()))
    speech = results[3].outputs["audio"]
    assert speech["kind"] == "audio" and speech["path"].endswith(".wav")
    with wave.open(str(ArtifactStore(workspace, "t").resolve(speech)), "rb") as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 16000)
        assert wav.getnframes() > 0
    assert isinstance(results[4].outputs["text"], str)


def test_broken_model_directory_fails_its_subtask_and_spares_siblings(
    compiled, make_context, llm_server, local_catalog, tiny, tmp_path
):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "bert", "num_labels": 2}))
    assert local.is_available(str(broken))  # it looks loadable until it is loaded
    catalog = local_catalog(("text-classification", str(broken)),
                            ("image-classification", "image-classification"))
    llm_server.script("planner", _plan(
        _sub(0, "text-classification", text="the cat"),
        _sub(1, "image-classification", image="photo.png"),
    ))
    Image.new("RGB", (40, 30), "red").save(Path(make_context().workspace) / "photo.png")
    out = run(compiled, make_context(backend="local", catalog=catalog))

    failed = out["results"][0]
    assert failed.status == "failed"
    assert failed.backend == "local" and failed.model == str(broken)
    assert failed.error.startswith("ToolExecutionError: cannot load")
    assert str(broken) in failed.error
    assert "OSError: Error no file named model.safetensors" in failed.error  # the reason
    assert failed.attempts == 1  # a permanent error: no retry on the same model
    _done(out, {1: tiny["image-classification"]})
    assert out["status"] == "partial"  # was "completed" (issue 12)


# ---------------------------------------------------------------------------- the model cache


def test_lru_keeps_the_most_recently_used_models(tiny):
    models.clear_loaded()
    models.set_max_loaded(3)
    a = ("text-classification", tiny["text-classification"])
    b = ("token-classification", tiny["token-classification"])
    c = ("image-classification", tiny["image-classification"])
    d = ("audio-classification", tiny["audio-classification"])
    first_a = models.load(*a)
    models.load(*b)
    models.load(*c)
    assert models.load(*a) is first_a  # a hit, and a is now the most recent
    models.load(*d)
    assert models.loaded_models() == [c, a, d]  # b, the least recently used, was dropped
    models.set_max_loaded(1)
    assert models.loaded_models() == [d]
    with pytest.raises(ValueError):
        models.set_max_loaded(0)


def test_the_models_benchmark_fails_a_cache_that_reloads(tiny, tmp_path):
    """benchmarks/models.py on a local model: reuse passes its verdict, and a model
    dropped before a warm request (a cache that reloads) fails it."""
    bench = benchmark("models")
    engine = bench.Engine("tiny", "text-classification", tiny["text-classification"],
                          models.LOCAL_BACKEND, {"text": "the movie was good"},
                          lambda o: bench.top_label(o) in tiny_models.TEXT_LABELS.values())
    models.clear_loaded()
    with bench.Management().patched() as management:
        row = bench.measure(engine, management, tmp_path, 3, {})
        forced = bench.reload_forced(row, management, tmp_path)
    assert (row.first.loads, row.warm_loads) == (1, 0) and row.ok, row
    assert forced.warm_loads == 1 and not forced.ok and forced.ratio > bench.TARGET


def test_two_threads_asking_for_one_model_load_it_once(tiny, monkeypatch):
    models.clear_loaded()
    loads: list[tuple[str, str]] = []
    real = models._load_uncached

    def slow_counting_load(task: str, model_id: str) -> Any:
        loads.append((task, model_id))
        if threading.current_thread() in threads:  # the race: go on once the other asked
            wait_until_inside([t for t in threads if t is not threading.current_thread()],
                              models.load.__code__)
        return real(task, model_id)

    monkeypatch.setattr(models, "_load_uncached", slow_counting_load)
    model = tiny["text-classification"]
    barrier = threading.Barrier(2)
    got: list[Any] = []

    def ask() -> None:
        barrier.wait()
        got.append(models.load("text-classification", model))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert loads == [("text-classification", model)]
    assert len(got) == 2 and got[0] is got[1]
    # tasks that load a model the same way share the entry
    models.load("feature-extraction", tiny["feature-extraction"])
    models.load("sentence-similarity", tiny["feature-extraction"])
    assert [m for _, m in loads].count(tiny["feature-extraction"]) == 1


def test_parallel_loads_leave_transformers_global_state_intact(tiny):
    """``from_pretrained`` patches process-wide functions while it runs; loads that
    overlap in threads must not leave a patch behind (they are serialised)."""
    import torch
    from transformers import PreTrainedModel

    tie_weights, init_weights, normal = (
        PreTrainedModel.tie_weights, PreTrainedModel.init_weights, torch.nn.init.normal_)
    models.clear_loaded()
    models.set_max_loaded(8)
    names = ["text-classification", "token-classification", "question-answering",
             "image-classification", "seq2seq", "text-generation"]
    errors: list[BaseException] = []

    def load(name: str) -> None:
        task = "summarization" if name == "seq2seq" else name
        try:
            models.load(task, tiny[name])
        except BaseException as exc:  # reported below
            errors.append(exc)

    for _ in range(3):  # without the lock, one round in two broke something here
        models.clear_loaded()
        threads = [threading.Thread(target=load, args=(n,)) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert errors == []
    assert PreTrainedModel.tie_weights is tie_weights
    assert PreTrainedModel.init_weights is init_weights
    assert torch.nn.init.normal_ is normal
    assert torch.get_default_dtype() == torch.float32
    models.clear_loaded()


def test_failed_load_is_not_cached_and_names_the_model(tmp_path):
    empty = tmp_path / "no-weights"
    empty.mkdir()
    (empty / "config.json").write_text("{not json")
    for _ in range(2):  # tried again on the next call, not remembered as loaded
        with pytest.raises(ToolExecutionError, match="cannot load .*no-weights"):
            models.load("image-classification", str(empty))
    assert ("image-classification", str(empty)) not in models.loaded_models()


def test_out_of_memory_becomes_a_tool_error(monkeypatch, tiny):
    models.clear_loaded()

    def exhausted(text: str, **kwargs: Any) -> Any:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(models, "_load_uncached", lambda task, model_id: exhausted)
    with pytest.raises(ToolExecutionError, match="out of memory running"):
        text.text_classification("hi", tiny["text-classification"])
    models.clear_loaded()


# ---------------------------------------------------------------------------- availability, safety


def test_is_available_only_for_local_files_and_never_downloads(tiny, tmp_path, monkeypatch):
    import huggingface_hub

    connects: list[Any] = []
    real_connect = socket.socket.connect

    def spy(self: socket.socket, address: Any) -> Any:
        connects.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", spy)
    cache = tmp_path / "hf-cache"
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))

    assert local.is_available(tiny["text-classification"])
    (tmp_path / "no-config").mkdir()
    assert not local.is_available(str(tmp_path / "no-config"))
    assert not local.is_available(str(tmp_path / "missing"))
    assert not local.is_available("nobody-here/not-a-cached-model")
    assert not local.is_available("not a valid repo id!")

    # a hub id whose config.json is in the cache counts as available
    snapshot = cache / "models--someone--cached-model" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (cache / "models--someone--cached-model" / "refs").mkdir()
    (cache / "models--someone--cached-model" / "refs" / "main").write_text("a" * 40)
    assert local.is_available("someone/cached-model")
    assert connects == []

    local_tools = [t for t in registered_tools() if t.backend == models.LOCAL_BACKEND]
    assert {t.task for t in local_tools} == set(local.TOOLS)
    assert all(t.models is None for t in local_tools)
    # each tool asks the backend's own check, for its task
    assert all(t.can_run("someone/cached-model") for t in local_tools)
    assert not any(t.can_run("nobody-here/not-a-cached-model") for t in local_tools)


def test_trust_remote_code_only_when_the_card_allows_it(monkeypatch, tiny, tmp_path):
    import transformers

    seen: list[dict[str, Any]] = []

    def fake_pipeline(task: str, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return object()

    def fake_from_pretrained(path: str, **kwargs: Any) -> Any:
        seen.append(kwargs)
        raise OSError("stop here")

    monkeypatch.setattr(transformers, "pipeline", fake_pipeline)
    monkeypatch.setattr(transformers.AutoModelForSeq2SeqLM, "from_pretrained",
                        fake_from_pretrained)
    model = tiny["text-classification"]
    models.clear_loaded()
    models.load("text-classification", model)
    with pytest.raises(ToolExecutionError, match="stop here"):
        models.load("summarization", model)
    assert [kw["trust_remote_code"] for kw in seen] == [False, False]
    assert seen[1]["local_files_only"] is True

    # the run's own catalog (given to tools as run settings) may allow it for a model
    allowing = tmp_path / "allowing.json"
    allowing.write_text(json.dumps({"version": 1, "models": [ModelCard(
        id=model, task="text-classification", trust_remote_code=True).model_dump()]}))
    models.clear_loaded()
    with run_settings({"local": {"catalog": str(allowing)}}):
        models.load("text-classification", model)
    assert seen[-1]["trust_remote_code"] is True
    models.clear_loaded()
    device, dtype = models.device_and_dtype()
    assert (device, str(dtype)) == ("cpu", "torch.float32") or device == "cuda"
    assert seen[0]["dtype"] is dtype


def test_read_wav_mixes_to_mono_and_scales(tmp_path):
    path = _write_wav(tmp_path / "s24.wav", rate=22050, seconds=0.5, channels=2, width=3)
    samples, rate = audio.read_wav(path)
    assert rate == 22050 and samples.dtype == np.float32
    assert samples.shape == (11025,)
    assert 0.45 < float(np.abs(samples).max()) <= 0.5001
    resampled = resample(samples, rate, 16000)
    assert resampled.shape == (8000,)
    (tmp_path / "not.wav").write_bytes(b"ID3 this is an mp3")
    with pytest.raises(ToolExecutionError, match="cannot read the audio not.wav.*formats read"):
        audio.read_wav(tmp_path / "not.wav")


@pytest.mark.parametrize("suffix", [".flac", ".ogg"])
def test_flac_and_ogg_recordings_are_read_and_resampled(tmp_path, tiny, suffix):
    """hf-inference text-to-speech writes FLAC; a recording may come as OGG: both are read
    (libsndfile), mixed to mono, and resampled without aliasing for a pipeline."""
    import soundfile

    t = np.arange(22050) / 22050
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    alias = 0.3 * np.sin(2 * np.pi * 9000 * t)  # above 16 kHz audio's 8 kHz Nyquist limit
    path = tmp_path / f"speech{suffix}"
    soundfile.write(str(path), np.stack([tone + alias, tone + alias], axis=1), 22050)
    samples, rate = audio.read_audio(path)
    assert rate == 22050 and samples.ndim == 1 and abs(len(samples) - 22050) < 2048
    at_16k, rate = read_audio(path, rate=16000)
    assert rate == 16000 and abs(len(at_16k) - 16000) < 1500
    spectrum = np.abs(np.fft.rfft(at_16k[:16000]))
    # the 440 Hz tone stays; the 9 kHz tone is filtered out, not folded back to 7 kHz
    assert spectrum[440] > 50 * spectrum[7000]
    transcript = speech.automatic_speech_recognition(path, tiny["automatic-speech-recognition"])
    assert isinstance(transcript, str)


def test_a_sentence_transformers_model_pools_as_its_configuration_says(tmp_path, tiny):
    """A CLS-pooled model (as BAAI/bge-small-en-v1.5 is) gives its CLS embedding, not the
    mean over tokens that a plain encoder gets."""
    import shutil

    import torch
    from transformers import AutoModel, AutoTokenizer

    plain = tiny["feature-extraction"]
    cls_model = tmp_path / "tiny-cls-sentence-transformer"
    shutil.copytree(plain, cls_model)
    (cls_model / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"},
    ]))
    (cls_model / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (cls_model / "1_Pooling").mkdir()
    (cls_model / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 32, "pooling_mode_cls_token": True,
        "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False}))
    (cls_model / "2_Normalize").mkdir()

    sentence = "the cat sat on the mat"
    tokenizer, encoder = AutoTokenizer.from_pretrained(plain), AutoModel.from_pretrained(plain)
    with torch.no_grad():
        hidden = encoder(**tokenizer(sentence, return_tensors="pt")).last_hidden_state[0].numpy()
    first, mean = hidden[0] / np.linalg.norm(hidden[0]), hidden.mean(0)
    mean = mean / np.linalg.norm(mean)
    assert not np.allclose(first, mean, atol=1e-2)  # the two poolings differ on this model

    got = np.array(text.feature_extraction(sentence, str(cls_model)))
    assert np.allclose(got, first, atol=1e-4)
    # a plain encoder (no modules.json) is still mean-pooled
    assert np.allclose(np.array(text.feature_extraction(sentence, plain)), mean, atol=1e-4)
    other = "a dog runs in the city"
    with torch.no_grad():
        second = encoder(**tokenizer(other, return_tensors="pt")).last_hidden_state[0, 0].numpy()
    expected = float(first @ (second / np.linalg.norm(second)))
    assert text.sentence_similarity(sentence, other, str(cls_model)) == pytest.approx(
        expected, abs=1e-4)


def test_a_runs_model_bound_holds_for_its_loads_and_leaves_the_process_bound_alone():
    """``max_loaded_models`` is a run's: its loads make room within it, and another run
    (or a load outside any run) keeps its own bound; the last run to load no longer
    decides for everyone."""
    from hugginggpt.tools.experts.local.cache import _ModelCache

    cache = _ModelCache(3)  # the process's bound

    def held() -> list[str]:
        return [name for _, name in cache.keys()]  # noqa: SIM118 - not a dict
    for name in ("a", "b", "c"):
        cache.get(("t", name), lambda name=name: name, limit=3)
    assert held() == ["a", "b", "c"]
    cache.get(("t", "d"), lambda: "d", limit=1)  # a run that allows one model at a time
    assert held() == ["d"]  # it made room within its own bound
    cache.get(("t", "e"), lambda: "e")  # a load with no run bound: the process's (3)
    cache.get(("t", "f"), lambda: "f", limit=3)  # another run allowing three
    assert held() == ["d", "e", "f"]
    assert cache.max_size == 3
