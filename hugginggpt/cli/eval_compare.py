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
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from hugginggpt.cli.common import EXIT_OK, UsageError, checked
from hugginggpt.evaluation import Sample
from hugginggpt.evaluation.compare import Comparison, run_model
from hugginggpt.graph.context import Context
from hugginggpt.tools.errors import LLMCredentialsError
from hugginggpt.tools.llm.config import (
    NOT_CONFIGURED_HELP,
    ConfigError,
    Endpoint,
    has_llm,
    load_config,
    routing_config,
)

__all__ = ["compare_models"]


def _contexts(args: argparse.Namespace) -> list[tuple[str, Context]]:
    """Each compared model's label and the settings that make it the planner."""
    if args.llm_config is None:
        return [(llm, checked(Context(
            llm=llm, planner_llm=llm, max_subtasks=args.max_subtasks,
            **({"llm_base_url": args.llm_base_url} if args.llm_base_url else {}))))
            for llm in args.llm]
    try:
        endpoints = {e.name: e for e in load_config(args.llm_config).endpoints}
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    by_model = {e.model: e for e in endpoints.values()}
    chosen: list[tuple[str, Context]] = []
    for name in args.llm:
        endpoint = endpoints.get(name) or by_model.get(name)
        if endpoint is None:
            raise UsageError(f"{args.llm_config} has no endpoint named {name!r}; "
                             f"its endpoints: {', '.join(endpoints)}")
        chosen.append((endpoint.name, checked(Context(
            llm_endpoints=[_alone(endpoint)], max_subtasks=args.max_subtasks))))
    return chosen


def _alone(endpoint: Endpoint) -> dict[str, Any]:
    """The endpoint as a configuration of its own, serving the planner."""
    fields = dataclasses.asdict(endpoint)
    fields["roles"] = ["planner"]
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
    labels = list(args.llm)
    if len(set(labels)) != len(labels):
        raise UsageError(f"each --llm once: {', '.join(labels)}")
    contexts = _contexts(args)
    for label, context in contexts:
        if not has_llm(context, "planner"):
            raise UsageError(f"{label}: {NOT_CONFIGURED_HELP}")
    runs = []
    for label, context in contexts:
        print(f"planning {len(samples)} samples with {label} ...", file=sys.stderr, flush=True)
        try:
            runs.append(run_model(label, samples, context, priced=_priced(context)))
        except LLMCredentialsError as exc:
            raise UsageError(f"{label}: {exc}") from exc
    comparison = Comparison(runs)
    document = comparison.to_json() | {"dataset": str(args.dataset), "planner": "llm"}
    if args.output:
        output = Path(args.output)
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(json.dumps(document, indent=2))
        except OSError as exc:
            raise UsageError(f"cannot write the report to {output}: {exc}") from exc
    print(json.dumps(document, indent=2) if args.json else comparison.format())
    return EXIT_OK
