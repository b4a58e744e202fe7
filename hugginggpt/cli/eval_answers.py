"""``hugginggpt eval --answers FILE``: run a labelled answers set through the whole graph,
offline and with no key, and judge what a user would read (right, honest or wrong).

Each sample runs in-process through :func:`hugginggpt.run` with the default settings, in
a fresh folder holding its files (made from its labels) and its workspace. The run is
what a new user gets with no key and no network, whatever this shell has configured:
while the set runs, every ``HUGGINGGPT_*`` setting but the cache's, the LLM keys and
base URLs (OpenAI's, Anthropic's, Hugging Face's tokens) are taken out of the
environment, and ``HF_HUB_OFFLINE=1`` is set; the environment is put back afterwards.
So the planner is ``auto`` with no LLM (the offline planner), the backend ``auto``
(local models only where cached, then the lite engines), the responder the plain one.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from hugginggpt.cli.common import EXIT_OK, UsageError, write_report
from hugginggpt.evaluation import DatasetError
from hugginggpt.evaluation.answer_report import AnswerRecord, run_answers
from hugginggpt.evaluation.answers import AnswerSample, read_answer_samples

__all__ = ["KEPT", "CLEARED", "evaluate_answers", "offline_environment", "answer_offline",
           "progress"]

KEPT = ("HUGGINGGPT_CACHE_DIR", "HUGGINGGPT_CACHE")
"""The ``HUGGINGGPT_*`` variables a measured run keeps: where things are cached, which
changes no answer."""
CLEARED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
           "HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN")
"""Keys and endpoints outside ``HUGGINGGPT_*`` that would give the run an LLM or the Hub."""


@contextmanager
def offline_environment(keep: tuple[str, ...] = ()) -> Iterator[None]:
    """The environment of a new user with no key and no network, for the ``with`` block;
    the variables named in ``keep`` stay (the keys of the LLMs being compared).

    huggingface_hub reads ``HF_HUB_OFFLINE`` when it is imported; when it already is (a
    caller that used it before), its constant is set for the block too.
    """
    saved = dict(os.environ)
    constants = sys.modules.get("huggingface_hub.constants")
    was_offline = getattr(constants, "HF_HUB_OFFLINE", None)
    for name in list(os.environ):
        if name in keep:
            continue
        if (name.startswith("HUGGINGGPT_") and name not in KEPT) or name in CLEARED:
            del os.environ[name]
    os.environ["HF_HUB_OFFLINE"] = "1"
    if constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if constants is not None:
            constants.HF_HUB_OFFLINE = was_offline  # type: ignore[attr-defined]


def answer_offline(sample: AnswerSample, files: list[Path], workspace: Path) -> tuple[str, str]:
    """The answer of the whole graph to ``sample`` (default settings, checkpoints in
    memory), and the run's status."""
    from hugginggpt.api import run

    result = run(sample.request, files=files, workspace=str(workspace),
                 checkpoint_url="memory")
    return result.response, result.status


def progress(total: int) -> Callable[[AnswerRecord], None]:
    done = [0]

    def say(record: AnswerRecord) -> None:
        done[0] += 1
        print(f"[{done[0]}/{total}] {record.sample.id} {record.judgement.label} "
              f"({record.seconds:.1f} s)", file=sys.stderr, flush=True)

    return say


def evaluate_answers(args: argparse.Namespace) -> int:
    """The ``--answers`` form of ``hugginggpt eval`` (see the module docstring); with
    several ``--llm``, the models compared on the same answers
    (:func:`~hugginggpt.cli.eval_compare.compare_answers`)."""
    comparing = args.llm is not None and len(args.llm) > 1
    if not comparing and (args.planner == "llm" or args.llm or args.llm_base_url
                          or args.llm_config):
        raise UsageError("--answers measures what a user gets offline with no key: "
                         "--planner llm, --llm, --llm-base-url and --llm-config do not apply "
                         "(give --llm two or more times to compare LLMs on the answers)")
    try:
        samples = read_answer_samples(args.answers, split=args.split, limit=args.limit)
    except (OSError, DatasetError) as exc:
        raise UsageError(f"cannot read {args.answers}: {exc}") from exc
    if not samples:
        raise UsageError(f"{args.answers} has no sample in the split {args.split!r}")
    if comparing:
        from hugginggpt.cli.eval_compare import compare_answers

        return compare_answers(args, samples)
    with offline_environment():
        report = run_answers(samples, answer_offline, on_record=progress(len(samples)))
    document = report.to_json() | {"dataset": str(args.answers), "split": args.split}
    write_report(args, document, report.format())
    return EXIT_OK
