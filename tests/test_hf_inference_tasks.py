"""The hf-inference tools of the newer task types against the local stub endpoint:
vision-language chat with the image as a data URL, zero-shot image classification,
fill-mask and table question answering, with the request each sends checked."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from hugginggpt.tools.experts import ToolExecutionError, hf_inference
from hugginggpt.tools.experts.hf_inference import tools as hf_tools
from tests.hf_stub import HFStubServer, Reply


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HFStubServer]:
    """The stub as the endpoint of ``acme/model``, with no token and offline mode off
    (it blocks even loopback calls)."""
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    server = HFStubServer().start()
    hf_inference.configure({"acme/model": server.url_for("model")})
    yield server
    server.stop()
    hf_inference.configure()


def _chat(content: str) -> dict:
    return {"id": "c1", "created": 1, "model": "acme/model", "system_fingerprint": "",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}


def test_image_text_to_text_sends_the_image_as_a_data_url(stub, tmp_path):
    photo = tmp_path / "photo.png"
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 200, 30)).save(buffer, format="PNG")
    photo.write_bytes(buffer.getvalue())
    stub.script("model", Reply(json=_chat(" A green square. ")), Reply(json=_chat("Two.")))

    assert hf_tools.image_text_to_text(photo, "acme/model") == "A green square."
    assert hf_tools.image_text_to_text("https://example.org/cats.jpg", "acme/model",
                                       text="How many cats?") == "Two."
    first, second = stub.requests("model")
    assert first.path == "/model/v1/chat/completions"
    [message] = first.json["messages"]
    image, prompt = message["content"]
    assert prompt == {"type": "text", "text": "Describe this image."}
    assert image["type"] == "image_url"
    head, _, data = image["image_url"]["url"].partition(",")
    assert head == "data:image/png;base64" and base64.b64decode(data) == photo.read_bytes()
    url_part, question = second.json["messages"][0]["content"]
    assert url_part["image_url"]["url"] == "https://example.org/cats.jpg"  # a URL as it is
    assert question["text"] == "How many cats?"


def test_image_text_to_text_with_no_choices_is_an_error(stub, tmp_path):
    photo = tmp_path / "p.png"
    Image.new("RGB", (2, 2)).save(photo)
    stub.script("model", Reply(json={**_chat("x"), "choices": []}))
    with pytest.raises(ToolExecutionError, match="no choices"):
        hf_tools.image_text_to_text(photo, "acme/model")


def test_zero_shot_image_classification_sends_the_labels(stub, tmp_path):
    photo = tmp_path / "p.png"
    Image.new("RGB", (2, 2)).save(photo)
    stub.script("model", Reply(json=[{"label": "cat", "score": 0.8},
                                     {"label": "dog", "score": 0.2}]))
    got = hf_tools.zero_shot_image_classification(photo, " cat, dog ,", "acme/model")
    assert got == [{"label": "cat", "score": 0.8}, {"label": "dog", "score": 0.2}]
    [request] = stub.requests("model")
    assert request.json["parameters"]["candidate_labels"] == ["cat", "dog"]
    with pytest.raises(ToolExecutionError, match="at least one label"):
        hf_tools.zero_shot_image_classification(photo, " , ", "acme/model")


def test_fill_mask_returns_the_sentence_and_the_candidates(stub):
    stub.script("model", Reply(json=[
        {"sequence": "paris is the capital of france.", "score": 0.9, "token": 7,
         "token_str": "paris"},
        {"sequence": "lyon is the capital of france.", "score": 0.05, "token": 8,
         "token_str": "lyon"}]))
    got = hf_tools.fill_mask("___ is the capital of France.", "acme/model")
    assert got == {"text": "paris is the capital of france.", "labels": [
        {"label": "paris", "score": 0.9, "sequence": "paris is the capital of france."},
        {"label": "lyon", "score": 0.05, "sequence": "lyon is the capital of france."}]}
    [request] = stub.requests("model")
    assert request.json["inputs"] == "[MASK] is the capital of France."
    with pytest.raises(ToolExecutionError, match="exactly one blank"):
        hf_tools.fill_mask("no blank", "acme/model")
    assert len(stub.requests("model")) == 1  # refused before any request


def test_table_question_answering_sends_the_csv_as_columns(stub, tmp_path):
    table = tmp_path / "sales.csv"
    table.write_text("region,revenue\nnorth,10\nsouth,32\n", encoding="utf-8")
    stub.script("model", Reply(json={"answer": "south", "coordinates": [[1, 0]],
                                     "cells": ["south"], "aggregator": "NONE"}))
    assert hf_tools.table_question_answering(table, "Which region earned most?",
                                             "acme/model") == "south"
    [request] = stub.requests("model")
    assert request.json["inputs"] == {
        "query": "Which region earned most?",
        "table": {"region": ["north", "south"], "revenue": ["10", "32"]}}
    (tmp_path / "empty.csv").write_text("region\n")
    with pytest.raises(ToolExecutionError, match="header row and data rows"):
        hf_tools.table_question_answering(tmp_path / "empty.csv", "q", "acme/model")
