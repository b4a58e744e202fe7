"""A local chat model (``--llm transformers:REPO``) on a tiny random Qwen2 built here.

Its plans are made by the real planner path (``ask_planner``: prompts, ``complete``,
the grammar, the reply's JSON) and checked by the real validation, 20 requests in a
row; its weights come from the mini-hub on consent, through the CLI, as an expert's
would; ``models list`` names the catalog's chat LLMs with their sizes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.graph.context import Context
from hugginggpt.graph.state import State
from hugginggpt.nodes.plan import ask_planner
from hugginggpt.nodes.planning.grammar import MAX_PLAN, plan_grammar
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.llm import local_chat
from hugginggpt.tools.llm.grammar import bounded, text_pattern
from hugginggpt.tools.llm.providers import check_model, provider_of
from tests import tiny_chat
from tests.mini_hub import MiniHub

pytest.importorskip("xgrammar")
torch = pytest.importorskip("torch")

REPO = tiny_chat.REPO


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_chat.build(tmp_path_factory.mktemp("tiny-chat"))


def test_twenty_plans_under_the_grammar_all_validate(folder: Path, monkeypatch) -> None:
    monkeypatch.setattr(local_chat, "SAMPLING", {"do_sample": True, "temperature": 1.0})
    torch.manual_seed(0)
    context = Context(llm=f"transformers:{folder}", planner="llm", llm_timeout_s=60)
    made = []
    for request, files in tiny_chat.REQUESTS:
        state = State(request=request, files=files)
        calls: list[Any] = []
        items, reply = ask_planner(state, context, calls)
        subtasks, problems = validate_plan(items, max_subtasks=context.max_subtasks)
        assert problems == [], (request, reply)
        assert calls[-1].ok and calls[-1].llm == f"transformers:{folder}"
        assert len(subtasks) <= MAX_PLAN
        for subtask in subtasks:  # file arguments are the run's own files
            assert all(v in files for k, v in subtask.args.items()
                       if k in ("image", "audio", "video")), reply
        made.append(len(subtasks))
    assert len(made) == 20
    assert sum(made) > 0, "a grammar that allows only empty plans proves nothing"


def test_the_plan_grammar_offers_only_tasks_the_run_can_fill() -> None:
    def offered(files: list[str]) -> set[str]:
        first = plan_grammar(files, 10)["properties"]["subtasks"]["prefixItems"][0]
        return {branch["properties"]["task"]["enum"][0] for branch in first["anyOf"]}

    without = offered([])
    assert "translation" in without and "image-classification" not in without
    assert "image-classification" in offered(["photo.jpg"])
    assert len(plan_grammar([], 3)["properties"]["subtasks"]["prefixItems"]) == 3


def test_bounded_schemas_have_patterns_enums_and_short_arrays() -> None:
    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name"]}
    out = bounded(schema)
    assert out["properties"]["name"]["pattern"] == text_pattern()
    assert out["properties"]["n"]["enum"][0] == 0
    assert out["properties"]["tags"]["maxItems"] == 5
    assert out["additionalProperties"] is False


def test_the_prefix_is_ours_and_needs_no_key() -> None:
    assert provider_of("transformers:Qwen/Qwen3-1.7B", None) == (
        "transformers", "Qwen/Qwen3-1.7B")
    check_model("transformers:Qwen/Qwen3-1.7B", None)
    with pytest.raises(ValueError, match="takes no base URL"):
        check_model("transformers:Qwen/Qwen3-1.7B", "http://127.0.0.1:1")


def test_models_list_names_the_chat_llms_with_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "--llm transformers:ID" in out
    assert "Qwen/Qwen3-1.7B (4060 MB, apache-2.0)" in out
    assert "Qwen/Qwen2.5-0.5B-Instruct (988 MB, apache-2.0)" in out


# ----------------------------------------------------------------------------- on the mini-hub


@pytest.fixture
def env(tmp_path: Path, folder: Path):
    with MiniHub() as hub:
        hub.add_model(REPO, folder, info={"library_name": "transformers",
                                          "pipeline_tag": "text-generation",
                                          "cardData": {"license": "apache-2.0"}})
        environ = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_ENDPOINT": hub.url,
                   "HF_HUB_DISABLE_TELEMETRY": "1"}
        environ.pop("HF_HUB_OFFLINE", None)
        yield environ, hub


def _run(environ: dict[str, str], tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hugginggpt", "run", "Translate 'good morning' into French.",
         "--llm", f"transformers:{REPO}", "--planner", "llm", "--dry-run", "--json",
         "--workspace", str(tmp_path / "ws"), *flags],
        env=environ, capture_output=True, text=True, timeout=300)


def test_download_no_refuses_saying_how_to_get_the_model(env, tmp_path: Path) -> None:
    environ, hub = env
    done = _run(environ, tmp_path, "--download", "no")
    assert done.returncode == 2, done.stderr
    assert f"hugginggpt models download {REPO}" in done.stderr
    assert "--download yes|ask" in done.stderr and "Traceback" not in done.stderr
    assert hub.downloads(REPO) == []


def test_download_ask_with_nobody_to_ask_shows_the_cost_and_refuses(env, tmp_path) -> None:
    environ, hub = env
    done = _run(environ, tmp_path, "--download", "ask")
    assert done.returncode == 2, done.stderr
    assert "license apache-2.0" in done.stderr and "MB to download" in done.stderr
    assert "Traceback" not in done.stderr and hub.downloads(REPO) == []


def test_download_yes_then_the_run_plans_with_the_local_model(env, tmp_path: Path) -> None:
    environ, hub = env
    done = _run(environ, tmp_path, "--download", "yes")
    assert done.stdout.strip(), done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] in ("completed", "partial", "failed"), (doc.get("abort_reason"), done.stderr)
    assert doc["planner"] == f"llm: transformers:{REPO}"
    assert doc["response"].strip() or doc["status"] != "completed"
    fetched = {path.rsplit("/", 1)[-1] for path in hub.downloads(REPO)}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= fetched
    assert "[download]" in done.stderr
