"""The local backend's newer task types, and the check that every task type with a local
tool has a catalog model this project can load: the catalog's local default for each
task type, rebuilt as a tiny random model of the same architecture, runs through the
local tool for real (real transformers, diffusers and skops loading code).

The tiny models are loaded from local directories, not served under the catalog's repo
ids by the mini-hub: the loading code after the download is the same either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

import hugginggpt.tools.experts.local as local
from hugginggpt.nodes.ranking import rank_candidates
from hugginggpt.tools.experts import ArtifactStore, ToolContext, ToolExecutionError
from hugginggpt.tools.experts.catalog import Catalog, load_catalog
from hugginggpt.tools.experts.local import models, multimodal, tables, text
from hugginggpt.tools.experts.outputs import normalize_outputs
from hugginggpt.tools.experts.registry import Tool, registered_tools
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from tests import tiny_defaults, tiny_models, tiny_more
from tests.conftest import run

NOT_LOCAL = {"text-to-video", "audio-to-audio"}
"""The task types the local backend leaves to other backends (docs/reference/what-runs-where.md)."""

_TINY_ARCHITECTURES = {
    "BertForSequenceClassification": (tiny_models, "text-classification"),
    "BertForTokenClassification": (tiny_models, "token-classification"),
    "BertForQuestionAnswering": (tiny_models, "question-answering"),
    "BertModel": (tiny_models, "feature-extraction"),
    "GPT2LMHeadModel": (tiny_models, "text-generation"),
    "T5ForConditionalGeneration": (tiny_models, "seq2seq"),
    "ViTForImageClassification": (tiny_models, "image-classification"),
    "YolosForObjectDetection": (tiny_models, "object-detection"),
    "SegformerForSemanticSegmentation": (tiny_models, "image-segmentation"),
    "GLPNForDepthEstimation": (tiny_models, "depth-estimation"),
    "Wav2Vec2ForCTC": (tiny_models, "automatic-speech-recognition"),
    "Wav2Vec2ForSequenceClassification": (tiny_models, "audio-classification"),
    "VitsModel": (tiny_models, "text-to-speech"),
    "VisionEncoderDecoderModel": (tiny_models, "image-to-text"),
    "ViltForQuestionAnswering": (tiny_models, "visual-question-answering"),
    **{arch: (tiny_more, name) for name, arch in tiny_more.ARCHITECTURES.items()},
    **{arch: (tiny_defaults, name) for name, arch in tiny_defaults.ARCHITECTURES.items()},
}
"""A catalog card's architecture -> (module, builder) of a tiny model of that class."""


def _library_builder(library: str | None) -> tuple[Any, str] | None:
    """scikit-learn models load the same way whatever the estimator (a skops file)."""
    return (tiny_more, "tabular-classification") if library == "sklearn" else None


def local_defaults(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Per task type with a local tool: the card the local backend ranks first among the
    shipped catalog's cards it can load (its own rule: the library, and for diffusers the
    pipeline), as if every model were cached."""
    monkeypatch.setattr(Tool, "can_run", lambda self, model: True)
    catalog = load_catalog()
    defaults = {}
    for task in local.TOOLS:
        loadable = Catalog([c for c in catalog.for_task(task)
                            if c.library_name in local.LIBRARIES[task]
                            and local.unloadable(c.id, task) is None])
        ranked = rank_candidates(task, loadable, models.LOCAL_BACKEND)
        defaults[task] = ranked[0].card if ranked else None
    return defaults


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Tiny models built on first use, by (module, builder name)."""
    return {}


def _build(built: dict[tuple[str, str], Path], module: Any, name: str, root: Path) -> Path:
    key = (module.__name__, name)
    if key not in built:
        built[key] = module.build(name, root / module.__name__.rsplit(".", 1)[-1])
    return built[key]


def _media(folder: Path) -> dict[str, Path]:
    """A photo, a document page with printed words, a recording and two tables."""
    photo = folder / "photo.png"
    pixels = np.random.default_rng(0).integers(0, 255, (48, 64, 3)).astype("uint8")
    Image.fromarray(pixels).save(photo)
    page = Image.new("RGB", (420, 120), "white")
    ImageDraw.Draw(page).text((12, 30), "TOTAL 42 DOLLARS", fill="black", font_size=36)
    document = folder / "receipt.png"
    page.save(document)
    recording = folder / "speech.wav"
    import wave

    with wave.open(str(recording), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        tone = 0.3 * np.sin(2 * np.pi * 220 * np.arange(16000) / 16000)
        wav.writeframes((tone * 32767).astype("<i2").tobytes())
    table = folder / "cities.csv"
    table.write_text("city,country,people\nparis,france,2\nlondon,england,9\n")
    customers = folder / "customers.csv"
    customers.write_text("age,income,visits,name\n30,1.5,3,ann\n41,-2.0,1,bob\n")
    return {"image": photo, "document": document, "audio": recording, "table": table,
            "customers": customers}


def _args(task: str, media: dict[str, Path]) -> dict[str, Any]:
    """Arguments a plan would give ``task``, with files already resolved."""
    task_type = get_task_type(task)
    assert task_type is not None
    values: dict[str, Any] = {
        "text": "the cat sat on the [MASK] ." if task == "fill-mask" else "the cat sat on the mat",
        "text2": "a dog runs", "question": "where is the cat", "labels": "cat, dog, car",
        "tgt_lang": "fr", "image": media["image"], "audio": media["audio"],
        "table": media["customers"] if task == "tabular-classification" else media["table"],
    }
    if task == "document-question-answering":
        values["image"] = media["document"]
    return {a.name: values[a.name] for a in task_type.args if a.required or a.name == "tgt_lang"}


# ---------------------------------------------------------------------------- the check


def test_every_task_type_but_two_has_a_local_default_it_can_load(monkeypatch):
    defaults = local_defaults(monkeypatch)
    names = {t.name for t in task_types()}
    assert set(local.TOOLS) == names - NOT_LOCAL
    missing = sorted(task for task, card in defaults.items() if card is None)
    assert missing == []
    unbuilt = {card.architecture or card.library_name for card in defaults.values()
               if card.architecture not in _TINY_ARCHITECTURES
               and _library_builder(card.library_name) is None}
    assert unbuilt == set()  # every default's architecture has a tiny builder


@pytest.mark.parametrize("task", sorted(local.TOOLS))
def test_the_catalog_default_runs_on_a_tiny_model_of_its_architecture(
    task, monkeypatch, built, tmp_path_factory, tmp_path
):
    card = local_defaults(monkeypatch)[task]
    assert card is not None
    builder = _TINY_ARCHITECTURES.get(card.architecture or "") or _library_builder(
        card.library_name)
    assert builder is not None, f"no tiny builder for {card.architecture} ({card.id})"
    folder = _build(built, *builder, tmp_path_factory.getbasetemp() / "tiny-archs")
    if card.library_name == "diffusers":
        assert json.loads((folder / "model_index.json").read_text())["_class_name"] \
            == card.architecture
    elif card.library_name != "sklearn":
        config = json.loads((folder / "config.json").read_text())
        assert config["architectures"] == [card.architecture], card.id

    [tool] = [t for t in registered_tools() if t.backend == "local" and t.task == task]
    artifacts = ArtifactStore(tmp_path)
    ctx = ToolContext(subtask_id=0, task=task, model=str(folder), artifacts=artifacts)
    args = _args(task, _media(tmp_path))
    value = tool.fn(**tool.call_kwargs(args, str(folder), ctx))
    task_type = get_task_type(task)
    assert task_type is not None
    outputs = normalize_outputs(task_type, value, artifacts)  # fails on a wrong output
    assert set(outputs) == {o.name for o in task_type.outputs}


# ---------------------------------------------------------------------------- inside the graph


def _sub(i: int, task: str, dep: list[int] | None = None, **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [], "args": args}


def test_new_task_types_run_through_the_graph(
    compiled, make_context, llm_server, workspace, tmp_path_factory, built
):
    root = tmp_path_factory.getbasetemp() / "tiny-archs"
    names = ["fill-mask", "zero-shot-image-classification", "image-text-to-text",
             "document-question-answering", "table-question-answering", "image-to-image",
             "text-to-image", "tabular-classification"]
    dirs = {name: str(_build(built, tiny_more, name, root)) for name in names}
    catalog = workspace.parent / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        {"id": path, "task": name, "downloads": 10} for name, path in dirs.items()]}))
    media = _media(workspace)
    llm_server.script("planner", {"tool_args": {"subtasks": [
        _sub(0, "fill-mask", text="the cat sat on the ___ today"),
        _sub(1, "zero-shot-image-classification", image="photo.png", labels="cat, dog"),
        _sub(2, "image-text-to-text", image="photo.png", text="what is in the picture"),
        _sub(3, "document-question-answering", image="receipt.png", question="what is the total"),
        _sub(4, "table-question-answering", table="cities.csv", question="where is paris"),
        _sub(5, "image-to-image", [], image="photo.png"),
        _sub(6, "text-to-image", [0], text="<GENERATED>-0"),
        _sub(7, "tabular-classification", table="customers.csv"),
    ]}})
    out = run(compiled, make_context(backend="local", catalog=str(catalog)))

    results = out["results"]
    assert {i: r.status for i, r in results.items()} == dict.fromkeys(range(8), "done"), \
        {i: r.error for i, r in results.items()}
    assert {r.backend for r in results.values()} == {"local"}
    filled = results[0].outputs
    assert filled["text"] == filled["labels"][0]["sequence"]
    assert filled["text"].startswith("the cat sat on the ") and "___" not in filled["text"]
    assert {x["label"] for x in results[1].outputs["labels"]} == {"cat", "dog"}
    assert isinstance(results[2].outputs["text"], str)
    assert results[3].outputs["text"] in {"TOTAL", "42", "DOLLARS", "TOTAL 42", "42 DOLLARS",
                                          "TOTAL 42 DOLLARS"}  # words RapidOCR read
    assert isinstance(results[4].outputs["text"], str)
    store = ArtifactStore(workspace, "t")
    with Image.open(store.resolve(results[5].outputs["image"])) as upscaled:
        assert upscaled.size == (64 * 2, 48 * 2)  # Swin2SR x2, its padding cut off
    with Image.open(store.resolve(results[6].outputs["image"])) as generated:
        assert generated.format == "PNG"
        assert generated.size == (16, 16)  # the UNet's sample size x the VAE's scale
    rows = results[7].outputs["labels"]
    assert [r["row"] for r in rows] == [0, 1]
    assert {r["label"] for r in rows} <= set(tiny_more.TABLE_LABELS)
    assert media["table"].is_file()


# ---------------------------------------------------------------------------- bad input


def test_fill_mask_needs_exactly_one_blank():
    assert text.masked_text("a <mask> b", "[MASK]") == "a [MASK] b"
    for bad in ("no blank here", "two [MASK] and [MASK]", "mixed [MASK] and ___"):
        with pytest.raises(ToolExecutionError, match="exactly one blank"):
            text.masked_text(bad, "[MASK]")


def test_tables_are_checked_before_a_model_loads(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n")
    with pytest.raises(ToolExecutionError, match="row 3 of ragged.csv"):
        tables.read_table(ragged)
    header_only = tmp_path / "empty.csv"
    header_only.write_text("a,b\n")
    with pytest.raises(ToolExecutionError, match="header row and data rows"):
        tables.read_table(header_only)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ToolExecutionError, match="cannot read the table"):
        tables.read_table(binary)


def test_skops_models_load_only_trusted_types_and_never_pickles(
    tmp_path_factory, built, tmp_path
):
    folder = _build(built, tiny_more, "tabular-classification",
                    tmp_path_factory.getbasetemp() / "tiny-archs")
    table = _media(tmp_path)["customers"]
    models.clear_loaded()
    assert [r["row"] for r in tables.tabular_classification(table, str(folder))] == [0, 1]

    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text(json.dumps({"sklearn": {
        "model": {"file": "model.pkl"}, "model_format": "pickle"}}))
    with pytest.raises(ToolExecutionError, match="only skops files load here"):
        tables.tabular_classification(table, str(pickled))

    missing = tmp_path / "no-income.csv"
    missing.write_text("age,visits\n1,2\n")
    with pytest.raises(ToolExecutionError, match="lacks the column"):
        tables.tabular_classification(missing, str(folder))
    models.clear_loaded()


def test_foreign_types_in_a_skops_file_need_trust(monkeypatch, tmp_path_factory, built):
    from skops import io as skops_io

    folder = _build(built, tiny_more, "tabular-classification",
                    tmp_path_factory.getbasetemp() / "tiny-archs")
    monkeypatch.setattr(skops_io, "get_untrusted_types",
                        lambda file: ["numpy.dtype", "evil.module.Payload"])
    with pytest.raises(ToolExecutionError, match=r"evil\.module\.Payload.*trust_remote_code"):
        tables._load_skops("m", str(folder), trust=False)


def test_image_to_image_refuses_huge_images(tmp_path, monkeypatch):
    monkeypatch.setattr(multimodal, "MAX_IMAGE_PIXELS", 100)
    big = tmp_path / "big.png"
    Image.new("RGB", (20, 10)).save(big)
    ctx = ToolContext(subtask_id=0, task="image-to-image", model="m",
                      artifacts=ArtifactStore(tmp_path))
    with pytest.raises(ToolExecutionError, match="20x10 pixels"):
        multimodal.image_to_image(big, "never-loaded", ctx)


def test_diffusers_pipelines_count_as_available(tmp_path):
    folder = tmp_path / "pipe"
    folder.mkdir()
    assert not local.is_available(str(folder))
    (folder / "model_index.json").write_text("{}")
    assert local.is_available(str(folder))
