"""Model selection: the documented score, backend preference, remembered choices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.nodes.ranking import Query, rank_candidates
from hugginggpt.tools.experts.availability import backend_order
from hugginggpt.tools.experts.catalog import load_catalog
from hugginggpt.tools.experts.lite.languages import language_of
from tests.conftest import run


def _catalog(tmp_path: Path, *cards: dict) -> str:
    path = tmp_path / "selection-catalog.json"
    path.write_text(json.dumps({"version": 1, "models": list(cards)}))
    return str(path)


def _card(model: str, task: str = "summarization", **facts) -> dict:
    return {"id": model, "task": task, "downloads": 1000, "likes": 10,
            "expected_latency_s": 1.0, **facts}


def test_language_of_the_request_counts(tmp_path):
    catalog = load_catalog(_catalog(
        tmp_path,
        _card("en/popular", downloads=50_000, languages=["en"]),
        _card("fr/native", downloads=20_000, languages=["fr"]),
    ))
    french = Query(language=language_of("Résume cet article sur la politique française."))
    assert french.language == "fr"
    ranked = rank_candidates("summarization", catalog, "dry-run", french)
    assert ranked[0].model == "fr/native"
    assert ranked[0].parts["language"] == 1.0 and ranked[1].parts["language"] == -2.0
    english = rank_candidates("summarization", catalog, "dry-run", Query(language="en"))
    assert english[0].model == "en/popular"


def test_latency_budget_prefers_the_fast_model(tmp_path):
    catalog = load_catalog(_catalog(
        tmp_path,
        _card("big/slow", downloads=100_000, expected_latency_s=20.0),
        _card("small/fast", downloads=30_000, expected_latency_s=0.5),
    ))
    no_budget = rank_candidates("summarization", catalog, "dry-run", Query())
    assert no_budget[0].model == "big/slow"
    budget = rank_candidates("summarization", catalog, "dry-run", Query(latency_budget_s=2.0))
    assert budget[0].model == "small/fast"
    assert budget[1].parts["latency"] == -4.0


def test_card_similarity_to_the_subtask_counts(tmp_path):
    catalog = load_catalog(_catalog(
        tmp_path,
        _card("a/legal", description="Summarises legal contracts and court decisions."),
        _card("b/medical", description="Summarises clinical notes and medical records."),
    ))
    ranked = rank_candidates("summarization", catalog, "dry-run", Query(
        text="Summarise a text. The patient was admitted with chest pain; ECG normal."))
    assert ranked[0].model == "b/medical"
    assert ranked[0].parts["similarity"] > ranked[1].parts["similarity"]


def test_backend_preference_orders_before_score():
    assert backend_order("lite,dry-run", []) == ["lite", "dry-run"]
    assert backend_order("auto", ["mine", "lite", "local"]) == ["local", "lite", "mine"]
    catalog = load_catalog()
    ranked = rank_candidates("sentence-similarity", catalog, "hybrid")
    assert ranked and all(c.backend in ("local", "hf-inference", "lite") for c in ranked)


@pytest.mark.parametrize(("second_lang", "selector_calls"), [("fr", 1), ("de", 2)])
def test_choices_are_remembered_per_task_and_argument_signature(
    compiled, make_context, llm_server, tmp_path, second_lang, selector_calls
):
    catalog = _catalog(tmp_path, _card("t/one", "translation"), _card("t/two", "translation"))
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "translation", "dep": [], "args": {"text": "hello", "tgt_lang": "fr"}},
        {"id": 1, "task": "translation", "dep": [],
         "args": {"text": "good night", "tgt_lang": second_lang}},
    ]}})
    llm_server.script("selector", *[{"tool_args": {"model": "t/two", "reason": "better"}}] * 2)
    out = run(compiled, make_context(backend="dry-run", catalog=catalog))
    assert len(llm_server.calls("selector")) == selector_calls
    assert out["selections"][0].model == out["selections"][1].model == "t/two"
    if selector_calls == 1:
        assert out["selections"][1].reason.startswith("same choice as subtask 0")


def test_translation_candidates_must_write_the_target_language():
    ranked = rank_candidates("translation", load_catalog(), "dry-run",
                             Query(language="en", target_language="fr"))
    models = [c.model for c in ranked]
    assert "Helsinki-NLP/opus-mt-en-fr" in models
    assert "Helsinki-NLP/opus-mt-en-de" not in models  # not even as a fallback
    assert all(c.parts["target"] > 0 for c in ranked)


def test_no_model_for_the_target_language_says_so(compiled, make_context):
    plan = [{"id": 0, "task": "translation", "dep": [],
             "args": {"text": "The meeting moved to Thursday.", "tgt_lang": "it"}}]
    out = run(compiled, make_context(plan=plan, backend="dry-run", offline=True))
    reason = out["selections"][0].reason
    assert out["selections"][0].model is None
    assert "dry-run: none of" in reason and "writes the target language" in reason
    assert "no tool" not in reason  # the simulated experts serve every task type
    assert reason in out["response"]


def test_embedding_cache_is_compact_and_bounded():
    from hugginggpt.tools.experts.lite import engines as selection

    vectors = selection.embed([f"request number {i}" for i in range(3)])
    assert len(vectors[0]) == 384 and isinstance(vectors[0][0], float)
    for i in range(selection.EMBEDDING_CACHE_SIZE + 10):
        selection.embed([f"another request {i}"])
    assert len(selection._embeddings) == selection.EMBEDDING_CACHE_SIZE
    entry = next(iter(selection._embeddings.values()))
    assert entry.itemsize == 4  # float32, as MiniLM computes them


def test_no_model_for_a_target_language_says_so(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "translation", "dep": [], "args": {"text": "hello",
                                                             "tgt_lang": "tlh"}}]}})
    out = run(compiled, make_context(backend="dry-run"))
    selection = out["selections"][0]
    reason, fix = selection.reason, selection.fix
    assert reason.startswith("no model can run translation with backend 'dry-run'")
    assert "target language 'tlh'" in reason
    assert fix is not None and fix.say == "add a model for it to the catalog"
    assert "--dry-run" not in reason  # it is already a dry run
