"""Registering tools: schemas from signatures, definition errors, output normalisation."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugginggpt.nodes.ranking import rank_candidates
from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts import (
    ArtifactStore,
    ToolContext,
    ToolDefinitionError,
    get_task_type,
    register_tool,
    tool,
)
from hugginggpt.tools.experts.catalog import load_catalog
from hugginggpt.tools.experts.outputs import normalize_outputs
from hugginggpt.tools.experts.registry import find_tools


def test_decorator_registers_a_typed_tool(test_tools):
    @tool("image-to-text", backend="unit", models=["me/captioner"])
    def caption(image: Path, model: str, ctx: ToolContext) -> str:
        """Caption an image."""
        return f"{model} saw {image.name}"

    found = find_tools("image-to-text", "me/captioner", ["unit"])
    test_tools.extend(found)
    assert [t.fn for t in found] == [caption]
    registered = found[0]
    assert registered.arg_names == ("image",)
    assert registered.wants_model and registered.context_param == "ctx"
    assert registered.description == "Caption an image."
    assert registered.risk == "read-only"


@pytest.mark.parametrize(("fn_source", "message"), [
    ("def f(text: str):\n    return text", "no return type annotation"),
    ("def f(text: str, colour: str) -> str:\n    return text", "'colour' is not an argument"),
    ("def f() -> str:\n    return ''", "lacks parameters for required arguments"),
])
def test_definition_errors(fn_source, message):
    namespace: dict = {}
    exec(fn_source, namespace)
    with pytest.raises(ToolDefinitionError, match=message):
        register_tool(namespace["f"], "summarization", backend="unit")


def test_unknown_task_type_is_a_definition_error():
    def f(text: str) -> str:
        return text

    with pytest.raises(ToolDefinitionError, match="unknown task type 'painting'"):
        register_tool(f, "painting", backend="unit")


def test_outputs_become_references(tmp_path):
    store = ArtifactStore(tmp_path, "thread")
    image = tmp_path / "made.png"
    image.write_bytes(b"png")
    detection = get_task_type("object-detection")
    out = normalize_outputs(detection, {"image": image, "objects": [{"label": "cat"}]}, store)
    assert out["objects"] == [{"label": "cat"}]
    ref = out["image"]
    assert ref["kind"] == "image" and ref["path"].startswith("artifacts/thread/")
    assert store.resolve(ref).read_bytes() == b"png"

    summary = get_task_type("summarization")
    long_text = normalize_outputs(summary, "x" * 5000, store)["text"]
    assert long_text["kind"] == "text" and long_text["preview"] == "x" * 200
    with pytest.raises(ToolExecutionError, match="expected text"):
        normalize_outputs(summary, 42, store)


def test_artifact_refs_cannot_escape_the_workspace(tmp_path):
    from hugginggpt.tools.experts import ArgumentError

    store = ArtifactStore(tmp_path / "ws", "t")
    with pytest.raises(ArgumentError, match="outside the workspace"):
        store.resolve({"artifact_id": "x", "kind": "image", "path": "../../etc/passwd"})


def test_ranking_filters_by_backend_and_orders_by_model_card():
    catalog = load_catalog()
    lite = rank_candidates("sentence-similarity", catalog, "lite")
    assert [(c.model, c.backend) for c in lite] == [
        ("sentence-transformers/all-MiniLM-L6-v2", "lite")]
    simulated = rank_candidates("summarization", catalog, "dry-run")
    assert len(simulated) == len(catalog.for_task("summarization")) >= 2
    assert simulated == sorted(simulated, key=lambda c: -c.score)
    assert [c.model for c in rank_candidates("text-to-speech", catalog, "lite")] == [
        "lite/espeak-ng"]


NO_RUNNABLE_MODEL: set[str] = set()
"""Task types with no model this project can load or a provider serves (none since the
local backend loads scikit-learn models through skops): a task type whose cards could
not run would list none rather than candidates that cannot run."""


def test_catalog_covers_every_task_type_with_several_models():
    from hugginggpt.tools.experts.tasks import task_types

    catalog = load_catalog()
    for task_type in task_types():
        if task_type.name in NO_RUNNABLE_MODEL:
            assert catalog.for_task(task_type.name) == [], task_type.name
        else:
            assert len(catalog.for_task(task_type.name)) >= 2, task_type.name
