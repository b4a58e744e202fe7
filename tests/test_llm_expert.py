"""The controller LLM as an expert: the ``llm`` backend runs text task types through the
run's LLM routing. Every test runs the graph against the scripted OpenAI-compatible
server over real HTTP: each task type once, structured entities, the budget, an
endpoint that is down, the backend forbidden or preferred, the cheapest endpoint that
suffices, an end-to-end plan, and a replay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.graph.checkpoint import open_checkpointer
from hugginggpt.graph.context import Context
from hugginggpt.nodes.ranking import rank_candidates
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.llm import LLM_EXPERT
from hugginggpt.tools.experts.registry import run_settings
from tests.conftest import run
from tests.llm_server import ScriptedLLMServer
from tests.test_resume import _wait_for


def _sub(i: int, task: str, dep: list[int] | None = None, **args: str) -> dict[str, Any]:
    return {"id": i, "task": task, "dep": dep or [], "args": args}


def _prompt(request: dict[str, Any]) -> str:
    """The user prompt of a recorded request to the server."""
    return request["messages"][-1]["content"]


TEXT = ("Ada Lovelace worked with Charles Babbage in London on the Analytical Engine. "
        "She wrote the first published algorithm for it in 1843.")

# task, args, the scripted reply, the outputs expected, words the prompt must carry
CASES = [
    ("summarization", {"text": TEXT},
     {"content": "Lovelace wrote the first algorithm for Babbage's engine."},
     {"text": "Lovelace wrote the first algorithm for Babbage's engine."},
     ["Task: summarization", "Ada Lovelace worked"]),
    ("translation", {"text": "Good night", "tgt_lang": "pt", "src_lang": "en"},
     {"content": "Boa noite"}, {"text": "Boa noite"},
     ["from English (en) into Portuguese (pt)", "Good night"]),
    ("question-answering", {"question": "When was the algorithm published?", "text": TEXT},
     {"content": "In 1843."}, {"text": "In 1843."},
     ["Question: When was the algorithm published?", "<input>\nAda"]),
    ("text-generation", {"text": "In the year 2090, the oceans"},
     {"content": "```\nhad risen by a metre.\n```"}, {"text": "had risen by a metre."},
     ["Task: text-generation", "2090"]),
    ("text2text-generation", {"text": "Correct: me and him goes home"},
     {"content": "He and I go home."}, {"text": "He and I go home."},
     ["Task: text2text-generation"]),
    ("conversational", {"text": "Hi! How are you?"},
     {"content": "Fine, thanks. How can I help?"}, {"text": "Fine, thanks. How can I help?"},
     ["Task: conversational"]),
    ("text-classification", {"text": "I loved every minute of it."},
     {"tool_args": {"label": "positive", "score": 0.97}},
     {"labels": [{"label": "POSITIVE", "score": 0.97}]},
     ["POSITIVE, NEGATIVE or"]),
    ("zero-shot-classification", {"text": "The striker scored twice.",
                                  "labels": "sports, politics, cooking"},
     {"tool_args": {"scores": [{"label": "Sports", "score": 0.6},
                               {"label": "politics", "score": 0.2},
                               {"label": "weather", "score": 0.5}]}},
     {"labels": [{"label": "sports", "score": 0.75}, {"label": "politics", "score": 0.25},
                 {"label": "cooking", "score": 0.0}]},
     ["Candidate labels: sports, politics, cooking"]),
    ("token-classification", {"text": TEXT},
     {"tool_args": {"entities": [{"word": "Ada Lovelace", "entity_group": "PERSON"},
                                 {"word": "charles babbage", "entity_group": "PER"},
                                 {"word": "Paris", "entity_group": "LOC"},
                                 {"word": "London", "entity_group": "LOC"}]}},
     {"entities": [{"entity_group": "PER", "word": "Ada Lovelace", "start": 0, "end": 12},
                   {"entity_group": "PER", "word": "Charles Babbage", "start": 25, "end": 40},
                   {"entity_group": "LOC", "word": "London", "start": 44, "end": 50}]},
     ["Task: token-classification"]),
]


@pytest.mark.parametrize(("task", "args", "reply", "expected", "prompt_has"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_text_task_runs_on_the_llm_expert(compiled, make_context, llm_server, task,
                                               args, reply, expected, prompt_has):
    llm_server.script("expert", reply)
    out = run(compiled, make_context(plan=[_sub(0, task, **args)], backend="llm"))
    result = out["results"][0]
    assert result.status == "done", result.error
    assert (result.model, result.backend) == (LLM_EXPERT, "llm")
    assert result.outputs == expected
    assert result.endpoint == f"scripted-model @ {llm_server.url}"  # the result names it
    (asked,) = llm_server.calls("expert")
    assert all(words in _prompt(asked) for words in prompt_has), _prompt(asked)
    structured = task.endswith("classification")
    assert bool(asked.get("tools")) is structured  # entities and labels: structured output
    # recorded and counted like the stages' calls
    assert [c.role for c in out["llm_calls"]] == ["expert", "responder"]
    assert out["llm_calls"][0].ok and out["llm_calls"][0].completion_tokens == 5


def test_token_classification_fails_when_no_entity_is_in_the_text(compiled, make_context,
                                                                  llm_server):
    llm_server.script("expert", {"tool_args": {"entities": [
        {"word": "Grace Hopper", "entity_group": "PER"}]}})
    out = run(compiled, make_context(plan=[_sub(0, "token-classification", text=TEXT)],
                                     backend="llm"))
    result = out["results"][0]
    assert result.status == "failed"
    assert "ToolOutputError" in result.error and "'Grace Hopper'" in result.error
    assert "none of the entities the LLM named is in the text" in result.error


def test_an_answer_off_the_task_fails_the_attempt(compiled, make_context, llm_server):
    """Outputs are checked like any tool's: a sentiment outside the three labels."""
    llm_server.script("expert", {"tool_args": {"label": "ECSTATIC", "score": 0.9}})
    out = run(compiled, make_context(plan=[_sub(0, "text-classification", text="Wow")],
                                     backend="llm"))
    result = out["results"][0]
    assert result.status == "failed" and result.attempts == 1  # not retried
    assert "'ECSTATIC' is not one of POSITIVE, NEGATIVE, NEUTRAL" in result.error


# ------------------------------------------------------------------ budget and failures

def test_the_budget_bounds_the_expert_and_names_the_limit(compiled, make_context, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": [
        _sub(0, "summarization", text=TEXT),
        _sub(1, "translation", [0], text="<GENERATED>-0", tgt_lang="fr")]}})
    llm_server.script("expert", {"content": "Lovelace wrote the first algorithm."})
    # one clause and no examples: nothing for the planner or the ranking to embed
    out = run(compiled, make_context(backend="llm", max_llm_calls=2, few_shot=0),
              "A French summary of this text, please")
    summary, translation = out["results"][0], out["results"][1]
    assert summary.status == "done" and translation.status == "failed"
    assert translation.attempt_log[0].error_type == "LLMBudgetError"
    assert "its limit (max_llm_calls = 2); the expert was not asked" in translation.error
    assert "HUGGINGGPT_MAX_LLM_CALLS" in translation.error
    assert len(llm_server.requests) == 2  # the planner and one expert call, no more
    assert out["responder"] == "template (responder LLM failed)"
    assert "max_llm_calls = 2" in out["response"]


def test_parallel_subtasks_share_the_budget(compiled, make_context, llm_server):
    """Two subtasks at once with room for one call: exactly one is asked."""
    llm_server.script("expert", {"content": "A.", "delay": 0.2}, {"content": "B."})
    plan = [_sub(0, "summarization", text="first text"),
            _sub(1, "summarization", text="second text")]
    out = run(compiled, make_context(plan=plan, backend="llm", max_llm_calls=1))
    statuses = sorted(r.status for r in out["results"].values())
    assert statuses == ["done", "failed"]
    assert len(llm_server.calls("expert")) == 1


def test_an_endpoint_that_is_down_fails_its_subtask_only(compiled, make_context, llm_server):
    llm_server.down = True
    plan = [_sub(0, "translation", text="hello", tgt_lang="fr"),
            _sub(1, "summarization", text=TEXT + " " + TEXT),
            _sub(2, "sentence-similarity", text="a cat", text2="a kitten")]
    out = run(compiled, make_context(plan=plan, backend="llm,lite"))
    translation, summary, similarity = (out["results"][i] for i in range(3))
    assert translation.status == "failed"
    assert "the LLM expert failed" in translation.error and "503" in translation.error
    # summarization falls back to lite after the LLM failed; similarity never needed it
    assert summary.status == "done" and summary.backend == "lite"
    assert summary.attempt_log[0].backend == "llm" and not summary.attempt_log[0].ok
    assert similarity.status == "done" and similarity.backend == "lite"
    assert out["status"] == "partial"


def test_the_backend_can_be_forbidden_or_preferred(compiled, make_context, llm_server):
    plan = [_sub(0, "summarization", text=TEXT + " " + TEXT)]
    out = run(compiled, make_context(plan=plan, backend="lite"))  # llm left out
    assert out["results"][0].backend == "lite"
    assert llm_server.calls("expert") == []
    assert all(c.backend == "lite" for c in out["selections"][0].candidates)

    catalog = load_catalog(DEFAULT_CATALOG)
    context = make_context()
    with run_settings(context.backend_settings()):
        preferred = rank_candidates("summarization", catalog, "llm,lite")
        auto = rank_candidates("summarization", catalog, "auto")
    assert [(c.model, c.backend) for c in preferred][:2] == [
        (LLM_EXPERT, "llm"), ("lite/summa-textrank", "lite")]
    # in auto, after the dedicated experts (none runs here) and before lite
    assert [c.backend for c in auto] == ["llm", "lite"]


def test_without_an_llm_the_backend_says_why(compiled, workspace, tmp_path, llm_server):
    plan = [_sub(0, "summarization", text=TEXT)]
    out = run(compiled, Context(plan=plan, backend="llm", workspace=str(workspace)))
    assert out["results"][0].status == "failed"
    assert "llm: no LLM configured" in out["results"][0].error

    config = tmp_path / "llms.toml"  # an LLM, but not for the expert role
    config.write_text(f'[[endpoints]]\nname = "p"\nmodel = "m"\nbase_url = "{llm_server.url}"'
                      '\nroles = ["planner", "responder"]\n')
    out = run(compiled, Context(plan=plan, backend="llm", llm_config=str(config),
                                workspace=str(workspace)), thread="roles")
    assert 'no LLM endpoint serves the expert role' in out["results"][0].error
    assert llm_server.calls("expert") == []


def test_the_cheapest_endpoint_that_suffices_answers(compiled, workspace, tmp_path):
    small, medium, large = (ScriptedLLMServer().start() for _ in range(3))
    try:
        for server in (small, medium, large):
            server.defaults["expert"] = {"content": "done"}
        config = tmp_path / "llms.toml"
        config.write_text("".join(
            f'[[endpoints]]\nname = "{name}"\nmodel = "m"\nbase_url = "{server.url}"\n'
            f'tier = "{name}"\ncost_per_1m_input = {price}\ncost_per_1m_output = {price}\n'
            for name, server, price in (("large", large, 10.0), ("medium", medium, 1.0),
                                        ("small", small, 0.1))))
        plan = [_sub(0, "summarization", text="short text"),          # needs small
                _sub(1, "translation", text="hello", tgt_lang="de")]  # needs medium
        out = run(compiled, Context(plan=plan, backend="llm", llm_config=str(config),
                                    workspace=str(workspace)))
        assert out["results"][0].endpoint == "small"
        assert out["results"][1].endpoint == "medium"
        assert len(small.calls("expert")) == len(medium.calls("expert")) == 1
        assert large.calls("expert") == []
    finally:
        for server in (small, medium, large):
            server.stop()


# ------------------------------------------------------------------ whole runs

def test_summarize_then_translate_to_french_end_to_end(compiled, make_context, llm_server):
    request = "Summarize this text and translate the summary to French: " + TEXT
    llm_server.script("planner", {"tool_args": {"subtasks": [
        _sub(0, "summarization", text=TEXT),
        _sub(1, "translation", [0], text="<GENERATED>-0", tgt_lang="fr")]}})
    llm_server.script("expert", {"content": "Lovelace wrote the first algorithm."},
                      {"content": "Lovelace a écrit le premier algorithme."})
    llm_server.script("responder", {"content": "Résumé traduit."})
    out = run(compiled, make_context(few_shot=0), request)  # backend auto
    assert out["status"] == "completed"
    assert [(r.backend, r.model) for r in out["results"].values()] == [("llm", LLM_EXPERT)] * 2
    assert out["results"][1].outputs == {"text": "Lovelace a écrit le premier algorithme."}
    summary_call, translation_call = llm_server.calls("expert")
    assert "Lovelace wrote the first algorithm." in _prompt(translation_call)
    assert "into French (fr)" in _prompt(translation_call)
    assert [c.role for c in out["llm_calls"]] == ["planner", "expert", "expert", "responder"]
    # the expert won on backend order over lite's TextRank, and is the only translator
    assert out["selections"][0].reason.startswith("top-ranked on llm")
    assert "lite/summa-textrank" in out["selections"][0].reason
    reason = out["selections"][1].reason
    assert reason.startswith("the only available model for translation")
    # with downloads off, the fix says which local model a download would add
    assert "hugginggpt models download" in str(out["selections"][1].fix)
    responder_prompt = _prompt(llm_server.calls("responder")[0])
    assert f"answered by the LLM endpoint scripted-model @ {llm_server.url}" in responder_prompt


def _cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_with_the_llm_expert_replays_without_the_server(capsys, workspace, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": [
        _sub(0, "summarization", text=TEXT),
        _sub(1, "zero-shot-classification", [0], text="<GENERATED>-0",
             labels="history, cooking")]}})
    llm_server.script("expert", {"content": "Lovelace wrote the first algorithm."},
                      {"tool_args": {"scores": [{"label": "history", "score": 0.9},
                                                {"label": "cooking", "score": 0.1}]}})
    llm_server.script("responder", {"content": "It is about history."})
    code, out, err = _cli(capsys, "run", "Summarize this and say if it is history: " + TEXT,
                          "--llm", "scripted", "--llm-base-url", llm_server.url,
                          "--backend", "llm", "--thread", "rec", "--json",
                          "--workspace", str(workspace))
    recorded = json.loads(out)
    assert code == 0 and recorded["status"] == "completed", err
    assert recorded["usage"]["by_role"] == {"expert": 2, "responder": 1, "planner": 1}
    assert recorded["results"]["1"]["endpoint"] == f"scripted @ {llm_server.url}"
    llm_server.stop()  # from here on, any LLM call would fail

    code, out, err = _cli(capsys, "replay", "--thread", "rec", "--workspace", str(workspace),
                          "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["same"] is True and report["differences"] == []
    assert report["divergences"] == [] and report["unused_recorded_calls"] == 0
    assert report["parts"]["expert"] == "from 2 recorded LLM calls"


def test_models_list_shows_the_expert_and_whether_it_can_run(capsys, monkeypatch,
                                                              llm_server):
    code, out, _ = _cli(capsys, "models", "list", "--task", "translation", "--json")
    rows = [r for r in json.loads(out) if r["id"] == LLM_EXPERT]
    assert code == 0 and len(rows) == 1
    assert "controller LLM" in rows[0]["description"]
    assert rows[0]["available"]["llm"] is False  # no LLM configured

    monkeypatch.setenv("HUGGINGGPT_LLM", "scripted")
    monkeypatch.setenv("HUGGINGGPT_LLM_BASE_URL", llm_server.url)
    code, out, _ = _cli(capsys, "models", "list", "--task", "translation", "--json")
    rows = [r for r in json.loads(out) if r["id"] == LLM_EXPERT]
    assert rows[0]["available"]["llm"] is True
    assert llm_server.requests == []  # availability asks nothing of the endpoint


def test_an_endpoint_name_keeps_no_secret(compiled, make_context, llm_server):
    url = llm_server.url.replace("http://", "http://user:s3cret-token@")
    llm_server.script("expert", {"content": "short"})
    out = run(compiled, make_context(plan=[_sub(0, "summarization", text=TEXT)],
                                     backend="llm", llm_base_url=url))
    result = out["results"][0]
    assert result.status == "done", result.error
    assert result.endpoint is not None and "s3cret" not in result.endpoint
    assert "s3cret" not in json.dumps([c.model_dump() for c in out["llm_calls"]])


def test_an_overlong_text_is_refused_before_any_call(compiled, make_context, llm_server):
    out = run(compiled, make_context(plan=[_sub(0, "summarization", text="x" * 40_001)],
                                     backend="llm"))
    assert "more than the 40000 it sends to an LLM" in out["results"][0].error
    assert llm_server.calls("expert") == []


def test_an_expert_call_has_the_llm_timeout(compiled, make_context, llm_server):
    llm_server.script("expert", {"content": "too late", "delay": 3})
    out = run(compiled, make_context(plan=[_sub(0, "conversational", text="hello")],
                                     backend="llm", llm_timeout_s=0.3))
    result = out["results"][0]
    assert result.status == "failed" and result.attempts == 1
    assert "the LLM expert failed" in result.error
    # it never answered: the advice says so, rather than only "raise the timeout"
    assert "did not answer within 0.3 s (not a byte came back" in result.error
    assert "HUGGINGGPT_LLM_TIMEOUT (now 0.3 s) helps only if it is still loading" in result.error
    assert out["llm_calls"][0].role == "expert" and not out["llm_calls"][0].ok


SLOW_PLUGIN = '''
import os, time
from pathlib import Path
from hugginggpt.tools.experts import register_tool

LOG = Path(os.environ["CRASH_LOG"])

def slow_similarity(text: str, text2: str) -> float:
    """The first time, logs its start and sleeps until the test kills the run."""
    if not LOG.exists():
        LOG.write_text("start")
        time.sleep(60)
    return 0.5

register_tool(slow_similarity, "sentence-similarity", backend="crash", models=["crash/slow"])
'''


def test_expert_calls_before_a_crash_are_kept_by_the_resumed_run(tmp_path, llm_server):
    """The expert's calls travel with its checkpointed result: after SIGKILL, the resumed
    run neither asks the LLM again for the finished subtask nor loses its record."""
    (tmp_path / "crashplugin.py").write_text(SLOW_PLUGIN)
    plan = {"subtasks": [_sub(0, "translation", text="hello", tgt_lang="fr"),
                         _sub(1, "sentence-similarity", text="a", text2="b")]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    log, workspace = tmp_path / "started", tmp_path / "ws"
    env = {**os.environ, "CRASH_LOG": str(log), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path.cwd())])}
    llm_server.script("expert", {"content": "bonjour"})

    def cli(*args: str) -> list[str]:
        return [sys.executable, "-m", "hugginggpt.cli", *args, "--workspace", str(workspace)]

    def translation_saved() -> bool:
        path = workspace / "checkpoints.sqlite"
        if not path.exists():
            return False
        with open_checkpointer(f"sqlite:///{path}") as saver:
            found = saver.get_tuple({"configurable": {"thread_id": "crash"}})
        return any(isinstance(v, dict) and v.get("id") == 0 and v.get("status") == "done"
                   for _, _, v in (found.pending_writes if found else []))

    proc = subprocess.Popen(cli("run", "translate hello", "--plan", str(tmp_path / "plan.json"),
                                "--backend", "llm,crash", "--plugin", "crashplugin",
                                "--llm", "scripted", "--llm-base-url", llm_server.url,
                                "--thread", "crash"),
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: log.exists() and translation_saved(), timeout=120)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert len(llm_server.calls("expert")) == 1

    resumed = subprocess.run(cli("resume", "--thread", "crash", "--json"), env=env,
                             capture_output=True, text=True, timeout=180)
    doc = json.loads(resumed.stdout)
    assert doc["results"]["0"]["outputs"] == {"text": "bonjour"}
    assert doc["results"]["0"]["endpoint"] == f"scripted @ {llm_server.url}"
    assert doc["status"] == "completed", resumed.stderr
    assert len(llm_server.calls("expert")) == 1  # not asked again
    assert [c["role"] for c in doc["llm_calls"]].count("expert") == 1  # nor forgotten
