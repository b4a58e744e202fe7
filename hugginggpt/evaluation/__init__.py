"""Scoring planners against gold plans, with TaskBench's metrics (arXiv 2311.18760).

A dataset is JSON Lines in one of two formats, mixed freely:

- this project's: ``{"id", "request", "files"?, "plan": [subtasks] | {"subtasks": [...]}}``;
- TaskBench's: ``{"id", "user_request", "task_nodes": [{"task", "arguments"}],
  "task_links": [{"source", "target"}]}``, where an argument ``<node-j>`` is the output
  of node j (0-based). It becomes ``<GENERATED>-j`` and j joins the node's ``dep``; a
  task link that no argument expresses is added as a dependency too.

Task names go through :func:`canonical_task`, so TaskBench's "Automatic Speech
Recognition" is this project's ``automatic-speech-recognition``; a name the registry does
not know is kept (lower-cased) and can never be matched by a valid prediction.

:func:`evaluate` runs a planner on every sample, validates each prediction with
:func:`~hugginggpt.nodes.planning.validation.validate_plan`, and scores it with
:func:`score_plan`. A planner that raises, or a plan with any problem, scores as an EMPTY
plan: the sample stays in the report and all its gold counts as false negatives.
TaskBench instead drops such samples from its supports, which flatters a planner that
often fails.

The metrics follow TaskBench's ``taskbench/evaluate.py`` (microsoft/JARVIS), resource
dependency mode, the one for the Hugging Face domain:

- node: task types;
- edge (TaskBench's "link"): ``(source task, target task)`` pairs, one per dependency;
- argument name: ``(task, name)`` pairs;
- argument value: ``(task, name, value)`` pairs.

Differences from TaskBench, on purpose:

- Matching is by multiset (:class:`collections.Counter`): a plan with two translations
  against a gold with one gets one true and one false positive. TaskBench's ``flatten``
  takes the *set* of items per sample, so a repeated tool, edge or argument counts once.
- Every count is micro-averaged over the dataset: true and false positives and false
  negatives are summed over the samples, then precision, recall and F1 are computed once
  (TaskBench's "binary" F1 for edges and arguments is this micro average; for nodes it
  reports micro and macro, the macro one averaging per tool type; only micro is kept).
- TaskBench's node F1 ignores tool names outside its tool list (true negatives); here an
  unknown task is a wrong node.
- Edges come from ``dep``; TaskBench reads them from ``<node-j>`` arguments, which the
  reader turns into ``dep``, so the two agree on its data.
- A reference ``<GENERATED>-k`` is compared as ``<node:TASK>``, ``TASK`` being node k's
  task, whether it is the whole value or embedded in text ("from <node:image-to-text>
  and <node:object-detection>"), so plans that number their subtasks differently still
  match (TaskBench compares the source tool's name). A literal value is compared
  stripped of white space and of one pair of surrounding quotes, case-insensitively
  (TaskBench compares it as is).
- When a gold sample has an argument without a name (TaskBench's Hugging Face data gives
  a list of values), the sample is scored by value: each argument's "name", on both
  sides, is the kind of its value (the primary output kind of a referenced node's task,
  or the kind of a literal: image, audio, video, table, text), which is what TaskBench
  does; the value pair is ``(task, value)``, the name playing no part. TaskBench reads a
  ``{"name", "value"}`` argument as its first dict value, i.e. the name; here it is a
  named argument.
- Precision with nothing predicted is 0, recall with nothing to find is 0 (scikit-learn's
  ``zero_division=0``, as TaskBench gets); when a group has no item on either side (no
  edges in single-node plans) the scores are ``None``, shown as ``-``.

Report groups: overall, by the gold plan's shape (:func:`plan_shape`), by the number of
gold subtasks and, when the run measures it (``evaluate(..., nearness=nearest_in(bank))``),
by the similarity of each sample's nearest example in the planner's bank, computed as the
planner retrieves (:mod:`~hugginggpt.evaluation.nearness`), plus the rate of invalid
(failed or rejected) predictions.

The modules, each importing only the ones listed before it:
:mod:`~hugginggpt.evaluation.datasets` (reading samples),
:mod:`~hugginggpt.evaluation.metrics` (the shape and the counts of one plan),
:mod:`~hugginggpt.evaluation.nearness` (a sample's nearest bank example) and
:mod:`~hugginggpt.evaluation.report` (running a planner, grouping and formatting the
results). Every public name is re-exported here.

Answers, judged as a user reads them (``hugginggpt eval --answers``): a labelled answers
set's samples and the judge (:mod:`~hugginggpt.evaluation.answers`: right, honest or
wrong), the files a sample's labels describe (:mod:`~hugginggpt.evaluation.answer_files`)
and running a set per half (:mod:`~hugginggpt.evaluation.answer_report`).

Models side by side (``hugginggpt eval --llm A --llm B``): planner LLMs on a labelled
set, with repairs, latency, tokens and cost (:mod:`~hugginggpt.evaluation.compare`), and
controller LLMs on an answers set (:mod:`~hugginggpt.evaluation.answer_compare`); they
are not re-exported here, since the first imports the plan stage.
"""

from __future__ import annotations

from hugginggpt.evaluation.answer_files import FileSpecError, materialise
from hugginggpt.evaluation.answer_report import AnswerRecord, AnswerReport, run_answers
from hugginggpt.evaluation.answers import (
    AnswerSample,
    Judgement,
    judge,
    read_answer_samples,
)
from hugginggpt.evaluation.datasets import (
    DatasetError,
    PlanNode,
    Sample,
    canonical_task,
    parse_sample,
    read_samples,
)
from hugginggpt.evaluation.metrics import (
    METRICS,
    Counts,
    PlanScore,
    Shape,
    plan_shape,
    score_plan,
)
from hugginggpt.evaluation.nearness import (
    NEARNESS_BANDS,
    Nearest,
    Nearness,
    nearest_in,
    nearness_band,
)
from hugginggpt.evaluation.report import (
    GroupMetrics,
    Planner,
    Report,
    SampleRecord,
    evaluate,
)

__all__ = [
    "Shape",
    "METRICS",
    "NEARNESS_BANDS",
    "DatasetError",
    "PlanNode",
    "Sample",
    "Counts",
    "PlanScore",
    "Nearest",
    "Nearness",
    "GroupMetrics",
    "SampleRecord",
    "Report",
    "Planner",
    "canonical_task",
    "parse_sample",
    "read_samples",
    "plan_shape",
    "score_plan",
    "nearest_in",
    "nearness_band",
    "evaluate",
    "AnswerSample",
    "Judgement",
    "AnswerRecord",
    "AnswerReport",
    "FileSpecError",
    "judge",
    "materialise",
    "read_answer_samples",
    "run_answers",
]
