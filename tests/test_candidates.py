"""Only models that can run are candidates: hf-inference offers a hub model only when an
inference provider serves it for the task (asked of the mini-hub once per process, with a
time to live), and the local backend only models whose library it loads."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.tools.experts import hf_inference, hub, local
from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.hub import clear_serving, serving, write_catalog
from hugginggpt.tools.experts.registry import find_tools, run_settings
from tests.mini_hub import MiniHub


def _mapping(*entries: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"provider": p, "providerId": f"{p}/x", "task": t, "status": s}
            for p, t, s in entries]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(hub._LOOKUPS, "clock", fake)
    return fake


@pytest.fixture
def mini_hub(monkeypatch: pytest.MonkeyPatch, clock: Clock):
    """The mini-hub, with huggingface_hub online, pointed at it, and a token."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    hf_inference.configure()
    clear_serving()
    with MiniHub() as server:
        monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", server.url)
        server.add_model("acme/sum", files={"config.json": b"{}"}, info={
            "gated": "auto", "inferenceProviderMapping": _mapping(
                ("hf-inference", "summarization", "live"), ("together", "summarization", "live"),
                ("acme", "translation", "staging"))})
        yield server
    clear_serving()
    hf_inference.configure()


def _lookups(server: MiniHub, model: str) -> int:
    return sum(p.startswith(f"/api/models/{model}?") for _, p in server.requests)


def test_a_provider_must_serve_the_model_live_for_the_task(mini_hub):
    assert hf_inference.available("acme/sum", "summarization")
    assert not hf_inference.available("acme/sum", "translation")  # only in staging there
    assert hf_inference.unavailable_reason("translation", "acme/sum") == (
        "no inference provider serves it for translation")
    assert hf_inference.unavailable_reason("summarization", "acme/missing").startswith(
        "not on the Hub")
    assert serving("acme/sum").gated == "auto"
    assert hf_inference.unavailable_reason("summarization", "/models/mine") == (
        "not a Hub model id")  # a local folder in the catalog: never sent to the Hub
    # the registered tool asks for its own task
    [tool] = find_tools("translation", "acme/sum", ["hf-inference"])
    assert not tool.can_run("acme/sum") and "for translation" in (tool.why_not("acme/sum") or "")
    [tool] = find_tools("summarization", "acme/sum", ["hf-inference"])
    assert tool.can_run("acme/sum") and tool.why_not("acme/sum") is None


def test_the_run_provider_must_be_one_of_them(mini_hub):
    with run_settings({"hf-inference": {"provider": "together"}}):
        assert hf_inference.available("acme/sum", "summarization")
    with run_settings({"hf-inference": {"provider": "fal-ai"}}):
        assert hf_inference.unavailable_reason("summarization", "acme/sum") == (
            "provider fal-ai does not serve it for summarization "
            "(served by hf-inference, together)")


def test_no_token_and_an_endpoint_url_need_no_lookup(mini_hub, monkeypatch):
    hf_inference.configure({"acme/tgi": "http://127.0.0.1:1/generate"})
    assert hf_inference.available("acme/tgi", "text-generation")
    monkeypatch.delenv("HF_TOKEN")
    assert hf_inference.unavailable_reason("summarization", "acme/sum").startswith(
        "no Hugging Face token")
    assert _lookups(mini_hub, "acme/tgi") == _lookups(mini_hub, "acme/sum") == 0


def test_looked_up_once_per_process_until_it_expires(mini_hub, clock):
    answers: list[bool] = []
    threads = [threading.Thread(
        target=lambda: answers.append(hf_inference.available("acme/sum", "summarization")))
        for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [True] * 8 and _lookups(mini_hub, "acme/sum") == 1
    clock.now += hub.PROVIDER_TTL_S - 1
    assert hf_inference.available("acme/sum", "summarization")
    assert _lookups(mini_hub, "acme/sum") == 1
    # the provider dropped it; the next look-up after the time to live says so
    mini_hub.repos["acme/sum"].info["inferenceProviderMapping"] = []
    clock.now += 2
    assert not hf_inference.available("acme/sum", "summarization")
    assert _lookups(mini_hub, "acme/sum") == 2


def test_an_unreachable_hub_is_asked_again_a_minute_later(mini_hub, clock, monkeypatch):
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", f"http://127.0.0.1:{port}")
    reason = hf_inference.unavailable_reason("summarization", "acme/sum")
    assert reason is not None and reason.startswith("provider look-up failed")
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", mini_hub.url)
    clock.now += hub.FAILED_LOOKUP_TTL_S + 1
    assert hf_inference.available("acme/sum", "summarization")


def test_local_offers_only_models_whose_library_it_loads(tmp_path: Path):
    folder = tmp_path / "model"  # its files are here: only the library can stand in the way
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    for library, loads in (("transformers", True), ("sentence-transformers", True),
                           ("sklearn", True), ("diffusers", False), ("espnet", False)):
        catalog = tmp_path / f"{library}.json"  # a file each: catalogs are read once per path
        write_catalog([ModelCard(id=str(folder), task="text-to-speech",
                                 library_name=library)], catalog)
        with run_settings({"local": {"catalog": str(catalog)}}):
            assert local.is_available(str(folder)) is loads, library
            reason = local.unavailable_reason(str(folder))
        if loads:
            assert reason is None
        else:
            # a diffusers card must name a pipeline the backend runs (this one names none)
            what = "a diffusers pipeline" if library == "diffusers" else f"a {library} model"
            assert reason is not None and reason.startswith(f"{what}: the local"), reason


def test_local_says_how_much_is_to_download(tmp_path: Path):
    catalog = tmp_path / "catalog.json"
    write_catalog([ModelCard(id="acme/big", task="summarization", size_mb=1630,
                             library_name="transformers", gated="manual")], catalog)
    with run_settings({"local": {"catalog": str(catalog)}}):
        assert not local.is_available("acme/big")
        assert local.unavailable_reason("acme/big") == (
            "not cached (1630 MB to download); gated: accept its terms on the Hub first")
