"""zero-shot-object-detection as a user meets it: "find the red mug in kitchen.jpg"
through the CLI, planned offline, with a catalog card (OWL-ViT, OWLv2) served by the
mini-hub as a tiny model of its architecture, downloaded with the real download code and
run by the local backend; the answer says what was found, where and how well, and the
boxes are drawn on the image.

The tiny models' weights are random, so two of their heads are set: the box head predicts
each patch's own cell, and the class head's shift and scale make exactly one patch score
high for "red mug" on this picture (read from the pipeline itself), or every patch score
nothing at all.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from hugginggpt.nodes.planning.bank import load_bank
from hugginggpt.nodes.planning.offline import offline_plan
from hugginggpt.tools.experts.catalog import load_catalog
from tests import tiny_defaults
from tests.mini_hub import MiniHub

TASK = "zero-shot-object-detection"
OWL_VIT = "google/owlvit-base-patch32"
MODELS = {OWL_VIT: "owlvit-detector", "google/owlv2-base-patch16-ensemble": "owlv2-detector"}
"""The catalog's cards for the task type, and the tiny builder of each one's architecture."""
PHOTO = "kitchen.jpg"
DRAWN = (230, 25, 75)
"""The colour the first box is drawn in."""


@pytest.fixture(scope="module")
def detectors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The picture, and per catalog model two tiny models of its architecture: one that
    sees one red mug in the picture (with the box the pipeline gives it), one that sees
    nothing."""
    root = tmp_path_factory.mktemp("owl")
    picture = root / PHOTO
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (48, 64, 3)).astype("uint8")
                    ).save(picture)
    return {"picture": picture,
            **{model: _tuned(builder, picture, root / builder) for model, builder in
               MODELS.items()}}


def _tuned(builder: str, picture: Path, root: Path) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForZeroShotObjectDetection, pipeline

    built = tiny_defaults.build(builder, root)
    model = AutoModelForZeroShotObjectDetection.from_pretrained(built)
    with torch.no_grad():
        for layer in (model.box_head.dense2, model.class_head.logit_shift,
                      model.class_head.logit_scale):
            layer.weight.zero_()
            layer.bias.zero_()  # boxes: the patches' cells; logits: the cosines as they are
    with Image.open(picture) as image:
        ranked = pipeline(TASK, model=model, image_processor=str(built),
                          tokenizer=str(built))(image.convert("RGB"),
                                                candidate_labels=["red mug"], threshold=0.0)
    (first, second) = (math.log(r["score"] / (1 - r["score"])) for r in ranked[:2])
    assert first - second > 1e-3
    tuned: dict[str, Any] = {"box": ranked[0]["box"]}
    for name, shift, scale in (("sees", -(first + second) / 2, 8 / (first - second)),
                               ("blind", -20.0, 1.0)):
        with torch.no_grad():  # logit = (cosine + shift) * scale: the best patch at +4
            model.class_head.logit_shift.bias.fill_(shift)
            model.class_head.logit_scale.bias.fill_(scale - 1)  # elu(b) + 1 for b >= 0
        tuned[name] = root / name
        model.save_pretrained(tuned[name])
        for file in built.iterdir():
            if file.is_file() and not (tuned[name] / file.name).exists():
                (tuned[name] / file.name).write_bytes(file.read_bytes())
    return tuned


def _find(request: str, model: str, detector: Path, picture: Path,
          tmp_path: Path) -> dict[str, Any]:
    """``hugginggpt run REQUEST --file PICTURE --backend local --download yes --json``,
    with no LLM, an empty Hugging Face cache, the shipped catalog's card of ``model`` as
    the catalog and the mini-hub serving ``detector`` as that model."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        card.model_dump() for card in load_catalog().for_task(TASK) if card.id == model]}))
    with MiniHub() as hub:
        hub.add_model(model, detector, info={"library_name": "transformers",
                                             "pipeline_tag": TASK})
        env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_ENDPOINT": hub.url,
               "HUGGINGGPT_CATALOG": str(catalog), "HF_HUB_DISABLE_TELEMETRY": "1"}
        for name in ("HF_HUB_OFFLINE", "HF_TOKEN", "OPENAI_API_KEY"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, "-m", "hugginggpt", "run", request, "--file", str(picture),
             "--backend", "local", "--download", "yes", "--json", "--workspace",
             str(workspace)], env=env, capture_output=True, text=True, timeout=600)
        assert hub.downloads(model), "the detector was not downloaded"
    assert done.stdout.strip(), done.stderr[-3000:]
    doc: dict[str, Any] = json.loads(done.stdout)
    assert doc["status"] == "completed", (doc.get("results"), done.stderr[-3000:])
    assert [(s["task"], s["args"]) for s in doc["plan"]] == [
        (TASK, {"image": PHOTO, "labels": "red mug"})]
    result = doc["results"]["0"]
    assert (result["backend"], result["model"]) == ("local", model)
    return doc


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_red_mug_is_found_boxed_and_said(model, detectors, tmp_path):
    doc = _find(f"find the red mug in {PHOTO}", model, detectors[model]["sees"],
                detectors["picture"], tmp_path)
    outputs = doc["results"]["0"]["outputs"]
    [mug] = outputs["objects"]
    sides = {"xmin": 64, "xmax": 64, "ymin": 48, "ymax": 48}  # the box, within the picture
    box = {k: min(max(v, 0), sides[k] - 1) for k, v in detectors[model]["box"].items()}
    assert (mug["label"], mug["box"]) == ("red mug", box)
    assert mug["score"] > 0.9
    [drawn] = map(Path, doc["artifacts"])
    assert drawn.name == Path(outputs["image"]["path"]).name
    with Image.open(drawn) as image, Image.open(detectors["picture"]) as original:
        assert image.size == original.size
        assert image.getpixel((box["xmin"], box["ymin"])) == DRAWN  # the box's corner
    assert doc["response"].startswith(
        f"Found a red mug (score {mug['score']:.2f}, at x {box['xmin']}-{box['xmax']}, "
        f"y {box['ymin']}-{box['ymax']}); the boxes are drawn on {drawn}.")


def test_nothing_found_is_said_so(detectors, tmp_path):
    doc = _find(f"find the red mug in {PHOTO}", OWL_VIT, detectors[OWL_VIT]["blind"],
                detectors["picture"], tmp_path)
    outputs = doc["results"]["0"]["outputs"]
    assert outputs["objects"] == []
    assert doc["response"].startswith(
        "No red mug was found in the image: nothing in it matched well enough. The image is "
        f"at {doc['artifacts'][0]}.")


@pytest.mark.parametrize(("request_", "expected"), [
    ("find the red mug in kitchen.jpg", (TASK, "red mug")),
    ("where is the red mug in kitchen.jpg?", (TASK, "red mug")),
    ("look for my car keys and the blue cup in desk.jpg", (TASK, "car keys, blue cup")),
    ("find the dog in photo.jpg", ("object-detection", None)),  # a class a detector knows
    ("Find the faces in staff_party.jpg.", ("object-detection", None)),
    ("Locate every bicycle and person in bike_lane.png.", ("object-detection", None)),
    # a word saying the thing is there is not part of it
    ("Where are the garden gloves placed in shed.jpg?", (TASK, "garden gloves")),
    ("Detect the trucks visible in street.jpg.", ("object-detection", None)),
])
def test_the_offline_planner_reads_what_to_look_for(request_, expected):
    [step] = offline_plan(request_, [], load_bank(), max_subtasks=4).items
    assert (step["task"], step["args"].get("labels")) == expected


@pytest.mark.parametrize("request_", [
    "Mark the interesting region in scan.png.",  # an area of any kind names no thing
    "Find the words written in note.png.",  # text, to be read, is one word here
    "Find a reply to that in the screenshot.png.",  # no content words at all
])
def test_what_names_no_thing_is_not_looked_for(request_):
    tasks = [step["task"] for step in offline_plan(request_, [], load_bank(),
                                                   max_subtasks=4).items]
    assert TASK not in tasks


def test_the_catalog_cards_are_models_the_local_backend_loads():
    cards = load_catalog().for_task(TASK)
    assert {card.id: card.architecture for card in cards} == {
        model: tiny_defaults.ARCHITECTURES[builder] for model, builder in MODELS.items()}
    assert {card.library_name for card in cards} == {"transformers"}


pytestmark = pytest.mark.timeout(900)
