"""``hugginggpt eval DATASET.jsonl``: measure a planner (offline or an LLM) on a labelled
set with TaskBench's metrics, split also by how near each request is to the example bank
the planner retrieves from (the offline planner adapts the nearest example, the LLM
planner is shown the nearest few). ``hugginggpt eval --answers FILE`` judges the answers
of the whole graph instead (:mod:`hugginggpt.cli.eval_answers`); with several ``--llm``,
the models are compared side by side as planners (:mod:`hugginggpt.cli.eval_compare`)."""

from __future__ import annotations

import argparse
from typing import Any

from hugginggpt.cli.common import EXIT_OK, UsageError, checked, write_report
from hugginggpt.evaluation import (
    DatasetError,
    Nearness,
    Sample,
    evaluate,
    nearest_in,
    read_samples,
)
from hugginggpt.evaluation.answers import SPLITS
from hugginggpt.graph.context import Context
from hugginggpt.nodes.planning.bank import DEFAULT_BANK, load_bank

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    evaluation = sub.add_parser(
        "eval", help="measure the planner, or (--answers) the answers, on a labelled set")
    evaluation.add_argument("dataset", nargs="?",
                            help="JSON lines: this project's plans or TaskBench's")
    evaluation.add_argument("--answers", metavar="FILE",
                            help="judge the whole graph's answers (offline, no key) on a "
                                 "labelled answers set instead: right, honest or wrong")
    evaluation.add_argument("--split", choices=[*SPLITS, "all"], default="all",
                            help="with --answers: only this split of the set")
    evaluation.add_argument("--planner", choices=["offline", "llm"],
                            help="offline (the default with at most one --llm) or llm")
    evaluation.add_argument("--llm", action="append",
                            help="the planner LLM: MODEL, PROVIDER:MODEL or hf:REPO_OR_URL; "
                                 "give it several times to compare models side by side "
                                 "(with --llm-config: the names of the file's endpoints to "
                                 "compare)")
    evaluation.add_argument("--llm-base-url", help="the server of every --llm")
    evaluation.add_argument("--llm-config", metavar="FILE", help="several routed endpoints")
    evaluation.add_argument("--limit", type=int, help="only the first N samples")
    evaluation.add_argument("--max-subtasks", type=int, default=10)
    evaluation.add_argument("--output", help="write the JSON report here")
    evaluation.add_argument("--json", action="store_true", help="print the JSON report")
    evaluation.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    if (args.dataset is None) == (args.answers is None):
        raise UsageError("give a planning set (hugginggpt eval DATASET.jsonl) or an "
                         "answers set (hugginggpt eval --answers FILE), one of the two")
    if args.answers is not None:
        from hugginggpt.cli.eval_answers import evaluate_answers

        return evaluate_answers(args)
    try:
        samples = read_samples(args.dataset, limit=args.limit)
    except (OSError, DatasetError) as exc:
        raise UsageError(f"cannot read {args.dataset}: {exc}") from exc
    if args.llm and len(args.llm) > 1:
        from hugginggpt.cli.eval_compare import compare_models

        return compare_models(args, samples)
    args.planner = args.planner or "offline"
    overrides = {"llm": args.llm[0] if args.llm else None, "llm_base_url": args.llm_base_url,
                 "llm_config": args.llm_config}
    context = checked(Context(max_subtasks=args.max_subtasks,
                               **{k: v for k, v in overrides.items() if v is not None}))
    nearness: Nearness | None = None
    if args.planner == "llm":
        from hugginggpt.cli.exits import NOT_CONFIGURED_HELP
        from hugginggpt.graph.state import State
        from hugginggpt.nodes.plan import ask_planner
        from hugginggpt.tools.llm.config import has_llm

        if not has_llm(context, "planner"):
            raise UsageError(NOT_CONFIGURED_HELP)

        def planner(sample: Sample) -> list[dict[str, Any]]:
            state = State(request=sample.request, files=sample.files)
            return ask_planner(state, context)[0]

        if context.few_shot > 0:  # the planner's few-shot examples come from the bank
            try:
                nearness = nearest_in(load_bank(context.plan_bank or DEFAULT_BANK))
            except OSError:  # as the planner: no bank file, no examples
                nearness = None
    else:
        from hugginggpt.nodes.planning.offline import offline_plan

        bank = load_bank(context.plan_bank or DEFAULT_BANK)
        nearness = nearest_in(bank)

        def planner(sample: Sample) -> list[dict[str, Any]]:
            return offline_plan(sample.request, sample.files, bank,
                                max_subtasks=context.max_subtasks).items

    report = evaluate(samples, planner, max_subtasks=context.max_subtasks, nearness=nearness)
    document = report.to_json() | {"dataset": str(args.dataset), "planner": args.planner}
    write_report(args, document, report.format())
    return EXIT_OK
