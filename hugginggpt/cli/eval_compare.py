"""``hugginggpt eval DATASET --llm A --llm B ...``: the same labelled plans through each
model as the planner, and one table, a row per model, best first
(:mod:`hugginggpt.evaluation.compare`).

Each ``--llm`` is a model at ``--llm-base-url`` (the same for all), with the key the
single ``--llm`` reads. With ``--llm-config FILE``, each ``--llm`` names one of the
file's endpoints instead (its ``name``, or its ``model`` when it has no name), and that
endpoint alone plans, with its own base URL, key, timeout and prices: a routed
configuration is compared endpoint by endpoint.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hugginggpt.cli.common import EXIT_OK, UsageError, checked, write_report
from hugginggpt.cli.eval_answers import offline_environment, progress
from hugginggpt.cli.exits import NOT_CONFIGURED_HELP
from hugginggpt.evaluation import Sample, run_answers
from hugginggpt.evaluation.answer_compare import AnswersComparison, AnswersRun
from hugginggpt.evaluation.answers import AnswerSample
from hugginggpt.evaluation.compare import Comparison, run_model
from hugginggpt.graph.context import Context
from hugginggpt.graph.state import Failure
from hugginggpt.nodes.responding.advice import reason_and_fix, told
from hugginggpt.tools.errors import LLMCredentialsError
from hugginggpt.tools.llm.config import (
    ENDPOINT_ROLES,
    LLM_KEYS,
    ConfigError,
    Endpoint,
    has_llm,
    load_config,
    routing_config,
)
from hugginggpt.tools.llm.records import LLMCall

_KEYS = (*LLM_KEYS, "ANTHROPIC_API_KEY", "HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN")
"""The keys an answers comparison keeps in its environment (``--llm``'s, and those an
``--llm-config`` endpoint may name)."""

__all__ = ["compare_models", "compare_answers", "model_settings"]


def model_settings(args: argparse.Namespace, roles: tuple[str, ...] = ("planner",)
                   ) -> list[tuple[str, dict[str, Any]]]:
    """Each compared model's label and the settings that make it the LLM of ``roles``
    (each checked: a configuration that cannot be read is a usage error)."""
    if args.llm_config is None:
        base = {"llm_base_url": args.llm_base_url} if args.llm_base_url else {}
        chosen = [(llm, {"llm": llm, "planner_llm": llm} | base) for llm in args.llm]
    else:
        try:
            endpoints = {e.name: e for e in load_config(args.llm_config).endpoints}
        except ConfigError as exc:
            raise UsageError(told(exc, "cli")) from exc
        by_model = {e.model: e for e in endpoints.values()}
        chosen = []
        for name in args.llm:
            endpoint = endpoints.get(name) or by_model.get(name)
            if endpoint is None:
                raise UsageError(f"{args.llm_config} has no endpoint named {name!r}; "
                                 f"its endpoints: {', '.join(endpoints)}")
            chosen.append((endpoint.name, {"llm_endpoints": [_alone(endpoint, roles)]}))
    labels = [label for label, _ in chosen]
    if len(set(labels)) != len(labels):
        raise UsageError(f"each --llm once: {', '.join(labels)}")
    for label, settings in chosen:
        context = checked(Context(**settings))
        if not has_llm(context, "planner"):
            raise UsageError(f"{label}: {NOT_CONFIGURED_HELP}")
    return chosen


def _alone(endpoint: Endpoint, roles: tuple[str, ...]) -> dict[str, Any]:
    """The endpoint as a configuration of its own, serving ``roles``."""
    fields = endpoint.model_dump()
    fields["roles"] = list(roles)
    fields["api_key_env"] = list(endpoint.api_key_env)
    return {key: value for key, value in fields.items() if value is not None}


def _priced(context: Context) -> bool:
    """Whether the planner's endpoint has prices (else its cost is unknown, not 0)."""
    config = routing_config(context)
    endpoints = config.for_role("planner") if config else []
    return any(e.cost_per_1m_input or e.cost_per_1m_output for e in endpoints)


def compare_models(args: argparse.Namespace, samples: list[Sample]) -> int:
    """Run ``samples`` through each ``--llm`` as the planner; print the table (or, with
    ``--json``, the report) and write the report to ``--output``."""
    if args.planner == "offline":
        raise UsageError("several --llm compare planner LLMs: --planner offline does not "
                         "apply (run the offline planner on its own, without --llm)")
    contexts = [(label, Context(**settings, max_subtasks=args.max_subtasks))
                for label, settings in model_settings(args)]
    runs = []
    for label, context in contexts:
        print(f"planning {len(samples)} samples with {label} ...", file=sys.stderr, flush=True)
        try:
            runs.append(run_model(label, samples, context, priced=_priced(context)))
        except LLMCredentialsError as exc:
            missing = Failure(reason=exc.description, fix=exc.fix)
            raise UsageError(f"{label}: {reason_and_fix(missing, 'cli')}") from exc
    comparison = Comparison(runs)
    document = comparison.to_json() | {"dataset": str(args.dataset), "planner": "llm"}
    write_report(args, document, comparison.format())
    return EXIT_OK


def compare_answers(args: argparse.Namespace, samples: list[AnswerSample]) -> int:
    """Run the answers set through the whole graph with each ``--llm`` as every role's
    LLM (``planner="llm"``: a planner that fails is not replaced by the offline one), in
    the environment of :func:`~hugginggpt.cli.eval_answers.offline_environment` but for
    the LLM keys; judge and rank the answers. Each model first answers the first sample
    once, untimed and uncounted, so that the first model does not pay alone for loading
    the graph's modules and engines."""
    from hugginggpt.api import run

    runs = []
    for label, settings in model_settings(args, ENDPOINT_ROLES):
        calls: dict[str, list[LLMCall]] = {}

        def answer(sample: AnswerSample, files: list[Path], workspace: Path,
                   settings: dict[str, Any] = settings,
                   calls: dict[str, list[LLMCall]] = calls) -> tuple[str, str]:
            result = run(sample.request, files=files, workspace=str(workspace),
                         checkpoint_url="memory", planner="llm", **settings)
            calls[sample.id] = result.llm_calls
            return result.response, result.status

        print(f"answering {len(samples)} samples with {label} ...", file=sys.stderr, flush=True)
        named = [k for e in settings.get("llm_endpoints", []) for k in e.get("api_key_env", [])]
        with offline_environment(keep=(*_KEYS, *named)):
            run_answers(samples[:1], answer)  # untimed: as a planning comparison warms up
            calls.clear()
            report = run_answers(samples, answer, on_record=progress(len(samples)))
        runs.append(AnswersRun(label, report, calls,
                               priced=_priced(Context(**settings))))
    comparison = AnswersComparison(runs)
    document = comparison.to_json() | {"dataset": str(args.answers), "split": args.split}
    write_report(args, document, comparison.format())
    return EXIT_OK
