"""Advice phrased for the interface that asked (issue 25): every ``hugginggpt run`` flag
a failure text names is said as a Python keyword, a served run's context key or the
operator's setting, from the settings' own declarations and the CLI's parser."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hugginggpt.cli import _parser
from hugginggpt.graph.callers import FLAG_NAMES, flag_of
from hugginggpt.graph.context import Context
from hugginggpt.nodes.responding.advice import said, setting_named
from hugginggpt.tools.errors import Control, Fix, setting

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")


def _run_options() -> list[str]:
    parser = _parser(["run", "x"])
    [sub] = [a for a in parser._actions if a.dest == "command"]
    run = sub.choices["run"]  # type: ignore[attr-defined]
    return [o for a in run._actions for o in a.option_strings if o.startswith("--")]


def test_a_settings_flag_is_the_parsers_own():
    """The flag said for a setting is an option of ``hugginggpt run``: those the fixes
    name, and each whose name is not its setting's."""
    options = set(_run_options())
    named = {s: flag_of(s) for s in Context.model_fields if flag_of(s) in options}
    assert named["subtask_timeout_s"] == "--subtask-timeout"
    assert named["download"] == "--download" and named["max_run_s"] == "--max-run-time"
    assert {"backend", "download", "max_loaded_models", "allow_private_urls", "llm",
            "llm_base_url", "planner_llm", "plan", "max_subtasks"} <= set(named)
    assert all(flag_of(name) in options for name in FLAG_NAMES)


FLAG_NAMED_IN = {"graph/callers.py", "nodes/responding/advice.py", "tools/errors.py"}
"""Where a flag or a command may be written: the CLI's names for the settings, each
caller's words for each control, and a control's words for no caller in particular."""


def _flags_in_failure_texts() -> list[tuple[str, str]]:
    """The string literals (not docstrings) of tools/, nodes/ and graph/ that name a
    flag, a shell's ``export`` or a ``hugginggpt models`` command."""
    found = []
    for folder in ("tools", "nodes", "graph"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = f"{path.relative_to(ROOT)}"
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
            found += [(where, n.value) for n in ast.walk(tree)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)
                      and id(n) not in docs and where not in FLAG_NAMED_IN
                      and (FLAG.search(n.value) or re.search(r"\bexport [A-Z]|hugginggpt "
                                                             r"models", n.value))]
    return found


def test_no_failure_text_names_a_flag_a_fix_says_it():
    """A failure's text says what went wrong; what to do is a typed fix, said for each
    caller (:func:`said`): no text is rewritten at the answer."""
    assert _flags_in_failure_texts() == []


def test_each_interface_names_its_own_control():
    download = Fix(say="or run with {}", controls=[setting("download", "ask|yes")])
    assert said(download, "cli") == "or run with --download ask|yes"
    assert said(download, "python") == 'or run with download="ask" or download="yes"'
    assert "HUGGINGGPT_DOWNLOAD=ask" in said(download, "served")  # the deployment's
    assert "operator" in said(download, "served")
    assert setting_named("backend", "served") == '"backend" in the run\'s context'
    assert setting_named("approval", "ui", "plan") == "the Approval choice"
    limit = Fix(say="raise it with {}", controls=[Control(kind="limit", name="max_run_s")])
    assert said(limit, "served") == ("raise it with HUGGINGGPT_MAX_RUN_S (ask the server's "
                                     "operator)")
    attach = Fix(say="attach one with {} or name it", controls=[Control(kind="file")])
    assert said(attach, "ui") == "attach one with the Images and audio box or name it"
    backend = Fix(say="try another {}, or wait", controls=[setting("backend")])
    assert said(backend, "python") == "try another backend=..., or wait"
    key = Fix(say="needs a key: set OPENAI_API_KEY ({}), or ...",
              controls=[Control(kind="variable", name="OPENAI_API_KEY", value="sk-...")])
    assert said(key, "served") == ("needs a key: set OPENAI_API_KEY (OPENAI_API_KEY in the "
                                   "server's environment (ask its operator)), or ...")
    assert said(key, "python") == said(key, "cli") == (
        "needs a key: set OPENAI_API_KEY (export OPENAI_API_KEY=sk-...), or ...")
    named = Fix(say="which is not set: {}", controls=[Control(kind="variable", name="MY_KEY")])
    assert said(named, "ui") == (
        "which is not set: MY_KEY in the environment this UI runs in (ask whoever runs it)")


def test_an_llm_to_configure_is_said_each_callers_way():
    """The CLI's words as they were (flags), a Python caller's keywords, and a served or
    UI caller is sent to whoever runs it; the one-line text says nothing else."""
    from hugginggpt.tools.errors import NO_LLM

    llm = Fix(say="{}", controls=[Control(kind="llm")])
    assert said(llm, "cli") == (
        "set OPENAI_API_KEY (export OPENAI_API_KEY=sk-...), or give --llm MODEL --llm-base-url "
        "URL for an OpenAI-compatible server (vLLM, Ollama, ...), or --llm hf:REPO with "
        "HF_TOKEN set")
    assert "give llm=MODEL llm_base_url=URL" in said(llm, "python")
    assert 'llm="hf:REPO"' in said(llm, "python")
    assert said(llm, "served").startswith("ask the server's operator to configure one")
    assert said(llm, "ui").startswith("ask whoever runs this UI to configure one")
    assert said(NO_LLM, "cli").endswith("with --backend dry-run and --plan PLAN.json")
    for caller in ("python", "served", "ui"):
        assert not FLAG.search(said(NO_LLM, caller)), caller


def test_a_served_runs_default_caller_is_served_and_a_caller_may_say_ui():
    from hugginggpt.graph.callers import ServedContext

    assert Context().caller == "python" and ServedContext().caller == "served"
    assert ServedContext(caller="ui").caller == "ui"


# --- a failure's fix is a field, said for who asked ----------------------------------------


def test_a_fix_is_said_from_its_fields_for_each_caller():
    from hugginggpt.nodes.responding.advice import said
    from hugginggpt.tools.errors import Control, Fix, setting

    fix = Fix(say="download it with {}, or run with {}; attach it with {}",
              controls=[Control(kind="models", name="download", value="org/m"),
                        setting("download", "yes|ask"), Control(kind="file")])
    assert said(fix, "cli") == ("download it with hugginggpt models download org/m, or run "
                                "with --download yes|ask; attach it with --file")
    assert said(fix, "python") == ('download it with hugginggpt models download org/m, or run '
                                   'with download="yes" or download="ask"; attach it with the '
                                   'files argument of hugginggpt.run')
    served = said(fix, "served")
    assert "org/m into the server's model cache" in served and "HUGGINGGPT_DOWNLOAD=yes" in served
    assert said(fix, "ui").endswith("attach it with the Images and audio box")
    limit = Fix(say="raise it with {}", controls=[Control(kind="limit", name="max_run_s")])
    assert said(limit, "cli") == "raise it with --max-run-time (or HUGGINGGPT_MAX_RUN_S)"
    key = Fix(say="give it a token: {}",
              controls=[Control(kind="variable", name="HF_TOKEN", value="hf_...")])
    assert said(key, "cli") == "give it a token: export HF_TOKEN=hf_..."
    assert said(key, "served") == ("give it a token: HF_TOKEN in the server's environment "
                                   "(ask its operator)")
    for caller in ("python", "served", "ui"):
        assert not FLAG.search(said(fix, caller)), caller


def test_a_limit_says_what_it_is_and_its_fix_is_a_field():
    """The message names the limit (no flag, nothing for the answer to parse back); the
    fix raises it, said for each caller."""
    from hugginggpt.nodes.execution.attempts import failure_of
    from hugginggpt.nodes.responding.advice import said
    from hugginggpt.tools.errors import LimitExceededError

    limit = LimitExceededError("the run's time limit was reached", setting="max_run_s",
                               value=3, unit=" s")
    assert str(limit) == "the run's time limit was reached (limit max_run_s=3 s)"
    failure = failure_of(limit)
    assert failure.reason == str(limit) and failure.error_type == "LimitExceededError"
    assert failure.fix is not None
    assert said(failure.fix, "python") == "raise it with max_run_s=..."
    assert said(failure.fix, "ui") == ("raise it with HUGGINGGPT_MAX_RUN_S (ask whoever runs "
                                       "this UI)")


def test_a_failure_with_its_fix_survives_the_checkpointer():
    """Failure, Fix and Control are in the msgpack allowlist: a checkpoint gives them
    back as they were, not as dicts (and langgraph.json says the same, test_house)."""
    from hugginggpt.graph.checkpoint import serializer
    from hugginggpt.graph.state import Failure, SubtaskResult
    from hugginggpt.tools.errors import Control, Fix

    result = SubtaskResult(id=0, task="translation", status="failed", failure=Failure(
        reason="r", error_type="ArgumentError",
        fix=Fix(say="attach it with {}", controls=[Control(kind="file")])))
    serde = serializer()
    back = serde.loads_typed(serde.dumps_typed({"results": {0: result}, "why": result.failure}))
    assert back["results"][0] == result and back["why"] == result.failure
    assert isinstance(back["why"].fix, Fix)


def test_an_abort_is_a_failure_in_state_and_said_for_the_caller(tmp_path):
    """The planner's abort is typed (``why_aborted``); the abort stage says its reason
    and fix the caller's way, and nothing parses the text back."""
    from langgraph.checkpoint.memory import InMemorySaver

    from hugginggpt.graph.builder import build_graph
    from hugginggpt.graph.checkpoint import serializer

    app = build_graph(checkpointer=InMemorySaver(serde=serializer()))
    said = {}
    for caller in ("cli", "python"):
        config = {"configurable": {"thread_id": caller}}
        out = app.invoke({"request": "   "}, config,
                         context=Context(caller=caller, workspace=str(tmp_path)))
        why = app.get_state(config).values["why_aborted"]
        assert out["status"] == "aborted" and why.reason == "the request is empty"
        assert why.fix is not None and out["abort_reason"].startswith("the request is empty: ")
        said[caller] = out["response"]
    assert said["cli"] == said["python"]  # no control to name: the same words

    bad = {"subtasks": [{"id": 0, "task": "no-such-task", "dep": [], "args": {}}]}
    config = {"configurable": {"thread_id": "plan"}}
    out = app.invoke({"request": "x"}, config, context=Context(
        workspace=str(tmp_path), plan=bad, backend="dry-run"))
    why = app.get_state(config).values["why_aborted"]
    assert why.error_type == "PlanParseError" and "no-such-task" in why.reason


def test_a_limit_the_cli_has_no_flag_for_is_its_variable():
    from hugginggpt.nodes.responding.advice import NO_FLAG, said
    from hugginggpt.tools.errors import Control, Fix

    options = _run_options()
    assert all(flag_of(name) not in options for name in NO_FLAG)
    fix = Fix(say="raise it with {}", controls=[Control(kind="limit", name="max_file_mb")])
    assert said(fix, "cli") == "raise it with HUGGINGGPT_MAX_FILE_MB"
    assert said(fix, "python") == "raise it with max_file_mb=..."
