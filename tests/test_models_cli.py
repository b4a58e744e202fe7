"""``hugginggpt models list`` and ``models refresh``, against the mini-hub (a local stand-in
for the Hub API), and the shipped catalog's cards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hugginggpt.cli import main
from hugginggpt.cli.models import unrunnable
from hugginggpt.nodes.ranking import rank_candidates
from hugginggpt.tools.experts.catalog import ModelCard, load_catalog
from hugginggpt.tools.experts.hub import clear_serving, write_catalog
from hugginggpt.tools.experts.local import LOCAL_LIBRARIES
from tests.mini_hub import HubRepo, MiniHub


def _mapping(*entries: tuple[str, str, str]) -> list[dict[str, Any]]:
    """A model's ``inferenceProviderMapping`` as the Hub sends it: (provider, task, status)."""
    return [{"provider": p, "providerId": f"{p}/x", "task": t, "status": s}
            for p, t, s in entries]


HUB_MODELS: dict[str, dict[str, Any]] = {
    "facebook/bart-large-cnn": {
        "downloads": 4_000_000, "likes": 1500, "tags": ["transformers", "en", "license:mit"],
        "pipeline_tag": "summarization", "library_name": "transformers",
        "safetensors": {"total": 406_000_000, "parameters": {"F32": 406_000_000}},
        "inferenceProviderMapping": _mapping(("hf-inference", "summarization", "live"),
                                             ("acme", "summarization", "staging"),
                                             ("other", "translation", "live"))},
    "new-org/tiny-summarizer": {
        "downloads": 900_000, "likes": 12, "tags": ["transformers", "fr", "de"],
        "pipeline_tag": "summarization", "library_name": "transformers", "gated": "manual",
        "cardData": {"license": "apache-2.0", "language": ["fr", "de"]},
        "safetensors": {"total": 60_000_000, "parameters": {"F32": 40_000_000,
                                                            "BF16": 20_000_000}}},
    # in the catalog, but not among the Hub's top summarizers this time
    "sshleifer/distilbart-cnn-12-6": {
        "downloads": 500, "likes": 3, "tags": ["transformers"], "library_name": "transformers"},
}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch):
    """The mini-hub, with huggingface_hub online and pointed at it, and no provider
    look-up remembered from another test."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    clear_serving()
    with MiniHub() as server:
        monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", server.url)
        yield server
    clear_serving()


def _publish(hub: MiniHub, models: dict[str, dict[str, Any]]) -> dict[str, HubRepo]:
    return {repo_id: hub.add_model(repo_id, files={"config.json": b"{}"}, info=info)
            for repo_id, info in models.items()}


def test_refresh_rebuilds_from_the_hub(hub, tmp_path: Path, capsys):
    repos = _publish(hub, HUB_MODELS)
    output = tmp_path / "catalog.json"
    code = main(["models", "refresh", "--task", "summarization", "--endpoint", hub.url,
                 "--output", str(output)])
    assert code == 0, capsys.readouterr().err
    [listed] = [urlsplit(p) for _, p in hub.requests if urlsplit(p).path == "/api/models"]
    listing = parse_qs(listed.query)
    assert listing["pipeline_tag"] == ["summarization"] and listing["sort"] == ["downloads"]
    assert "inferenceProviderMapping" in listing["expand"] and "sha" in listing["expand"]

    fresh = load_catalog(output)
    cards = {c.id: c for c in fresh.for_task("summarization")}
    bart = cards["facebook/bart-large-cnn"]
    assert bart.downloads == 4_000_000 and bart.license == "mit" and bart.languages == ["en"]
    assert (bart.library_name, bart.pipeline_tag, bart.gated) == ("transformers",
                                                                 "summarization", False)
    assert bart.revision == repos["facebook/bart-large-cnn"].sha
    # only providers serving it live, for this task
    assert bart.providers == ["hf-inference"]
    # hand-written facts of a known model survive; new models get estimates
    assert bart.description.startswith("Abstractive news") and bart.expected_latency_s == 2.5
    new = cards["new-org/tiny-summarizer"]
    assert new.license == "apache-2.0" and new.languages == ["de", "fr"]
    assert new.gated == "manual" and new.providers == []
    assert new.size_mb == 200.0 and new.expected_latency_s == 0.5  # 40M x 4 + 20M x 2 bytes
    # a model the Hub did not list this time is refreshed on its own and stays; other
    # task types are untouched
    distil = cards["sshleifer/distilbart-cnn-12-6"]
    assert distil.downloads == 500 and distil.revision == repos[distil.id].sha
    assert len(fresh.for_task("translation")) == len(load_catalog().for_task("translation"))


def test_refresh_drops_models_the_hub_lost_and_those_nothing_here_runs(
        hub, tmp_path: Path, capsys):
    _publish(hub, {
        "acme/painter": {"pipeline_tag": "text-to-image", "library_name": "diffusers",
                         "downloads": 10,
                         "inferenceProviderMapping": _mapping(("fal-ai", "text-to-image",
                                                               "live"))},
        "acme/unserved-painter": {"pipeline_tag": "text-to-image",
                                  "library_name": "diffusers", "downloads": 5},
    })
    start = tmp_path / "start.json"
    write_catalog([ModelCard(id="gone/deleted-painter", task="text-to-image")], start)
    output = tmp_path / "catalog.json"
    code = main(["models", "refresh", "--task", "text-to-image", "--endpoint", hub.url,
                 "--catalog", str(start), "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 0, err
    cards = {c.id: c for c in load_catalog(output).for_task("text-to-image")}
    assert list(cards) == ["acme/painter"] and cards["acme/painter"].providers == ["fal-ai"]
    assert "dropped text-to-image gone/deleted-painter: no longer on the Hub" in err
    assert ("dropped text-to-image acme/unserved-painter: a diffusers pipeline: the local "
            "backend cannot load it and no inference provider serves it") in err


def test_shipped_cards_name_a_loader_the_project_has():
    """Every shipped card names its library; the local backend loads it, or an inference
    provider serves the model for the task (so hf-inference can call it)."""
    catalog = load_catalog()
    assert len(catalog) > 40
    for card in catalog.cards():
        assert card.library_name, f"{card.task} {card.id}: no library_name"
        assert card.library_name in LOCAL_LIBRARIES or card.providers, (
            f"{card.task} {card.id}: a {card.library_name} model nothing here can run")
        assert unrunnable(card) is None
    shipped = {c.id for c in catalog.cards()}
    assert not shipped & {"runwayml/stable-diffusion-v1-5", "espnet/kan-bayashi_ljspeech_vits"}
    assert not any(i.startswith(("espnet/", "speechbrain/")) for i in shipped)


def test_refresh_offline_leaves_the_catalog_alone(tmp_path: Path, capsys):
    output = tmp_path / "catalog.json"
    code = main(["models", "refresh", "--task", "summarization", "--output", str(output)])
    assert code == 2 and not output.exists()
    assert "the catalog was not changed" in capsys.readouterr().err


def test_list_shows_availability_per_backend(capsys):
    code = main(["models", "list", "--task", "sentence-similarity", "--json"])
    assert code == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["sentence-transformers/all-MiniLM-L6-v2"]["available"]["lite"] is True
    assert rows["sentence-transformers/all-mpnet-base-v2"]["available"]["lite"] is False


def test_list_has_a_header_and_says_per_backend_what_can_run_and_why_not(monkeypatch, capsys):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # online, but with no token
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    assert main(["models", "list", "--task", "summarization", "--wide"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split() == ["TASK", "MODEL", "LIBRARY", "SIZE", "BACKEND", "CAN", "RUN", "NOW"]
    at = next(i for i, line in enumerate(lines) if "facebook/bart-large-cnn" in line)
    assert lines[at].split()[2:5] == ["transformers", "1630", "MB"]
    assert lines[at].split()[5] == "local"
    assert lines[at].endswith("no: not cached (1630 MB to download)")
    assert lines[at + 1].split()[0] == "hf-inference"
    assert "no: no Hugging Face token" in lines[at + 1]
    # the lite engine is offered by lite only, and runs now
    lite = next(i for i, line in enumerate(lines) if "lite/summa-textrank" in line)
    assert lines[lite].split()[-2:] == ["lite", "yes"]
    assert not lines[lite + 1].startswith(" ")  # no other backend's line under it
    # the controller LLM as an expert: none is configured, and the line says so
    llm = next(i for i, line in enumerate(lines) if "llm/expert" in line)
    assert "no: no LLM configured" in lines[llm]
    assert lines[-1].startswith("1 of 4 models can run now")


def test_a_model_no_provider_serves_is_no_hf_inference_candidate(
        hub, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    _publish(hub, {
        "acme/served": {"inferenceProviderMapping": _mapping(
            ("hf-inference", "summarization", "live"))},
        "acme/unserved": {"inferenceProviderMapping": _mapping(
            ("together", "text-generation", "live"), ("acme", "summarization", "staging"))},
    })
    catalog = tmp_path / "catalog.json"
    write_catalog([ModelCard(id=m, task="summarization", library_name="transformers")
                   for m in ("acme/served", "acme/unserved", "acme/deleted")], catalog)
    ranked = rank_candidates("summarization", load_catalog(catalog), "hf-inference")
    assert [(c.model, c.backend) for c in ranked] == [("acme/served", "hf-inference")]

    assert main(["models", "list", "--task", "summarization", "--catalog", str(catalog),
                 "--json"]) == 0
    why = {r["id"]: r["why"]["hf-inference"] for r in json.loads(capsys.readouterr().out)}
    assert why["acme/served"] is None
    assert why["acme/unserved"] == "no inference provider serves it for summarization"
    assert why["acme/deleted"].startswith("not on the Hub")
    # asked once per model, however often selection and the listing asked
    assert [p for _, p in hub.requests if p.startswith("/api/models/acme/served")] == [
        "/api/models/acme/served?expand=inferenceProviderMapping&expand=gated"]


def test_list_rejects_unknown_task_and_names_the_valid_ones(capsys):
    assert main(["models", "list", "--task", "juggling"]) == 2
    err = capsys.readouterr().err
    assert "unknown task type(s): juggling" in err
    assert "summarization" in err and "text-to-speech" in err and "object-detection" in err


def test_list_says_a_gated_model_needs_its_terms_accepted(hub, tmp_path: Path, monkeypatch,
                                                          capsys):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    _publish(hub, {"acme/gated": {"gated": "manual", "inferenceProviderMapping": _mapping(
        ("hf-inference", "summarization", "live"))}})
    catalog = tmp_path / "catalog.json"
    write_catalog([ModelCard(id="acme/gated", task="summarization", size_mb=100,
                             library_name="transformers", gated="manual")], catalog)
    assert main(["models", "list", "--task", "summarization", "--catalog", str(catalog),
                 "--wide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if "acme/gated" in line)
    assert lines[at].endswith(
        "local         no: not cached (100 MB to download); gated: accept its terms on the "
        "Hub first")
    assert lines[at + 1].endswith(
        "hf-inference  yes (gated: your token must have accepted its terms)")
