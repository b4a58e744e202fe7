"""Tools: typed functions that run one task type on some backend.

A tool is registered with :func:`tool` (a decorator) or :func:`register_tool`. Its
schema comes from its signature: the parameters named like the task type's arguments
receive those arguments (``str`` for text; :class:`~pathlib.Path` for files, already
resolved inside the workspace), a parameter named ``model`` receives the selected model
id, and one annotated :class:`ToolContext` receives the run's context (artifact store,
expected latency). The return annotation is required. A tool returns its task's primary
output, or a dict of named outputs; files are returned as paths and become artifacts.

Example::

    @tool("text-classification", backend="mine", models=["me/my-classifier"])
    def classify(text: str, model: str) -> list[dict]:
        return [{"label": "POSITIVE", "score": 0.9}]
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, get_type_hints

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import ArgumentError, ToolDefinitionError, ToolOutputError
from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.tasks import TaskType, get_task_type

__all__ = [
    "Tool",
    "ToolContext",
    "ANY_TASK",
    "tool",
    "register_tool",
    "unregister_tool",
    "find_tools",
    "registered_tools",
    "normalize_outputs",
    "backend_settings",
    "run_settings",
]

ANY_TASK = "*"
"""Task name for generic tools (simulated experts) that take any task type's arguments."""


@dataclass
class ToolContext:
    """What a tool may use besides its arguments."""

    subtask_id: int
    task: str
    model: str
    artifacts: ArtifactStore
    expected_latency_s: float = 1.0
    latency_scale: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    """A registered tool. ``models`` None means any catalog model of the task type."""

    name: str
    task: str
    backend: str
    fn: Callable[..., Any]
    models: tuple[str, ...] | None
    arg_names: tuple[str, ...]
    wants_model: bool
    context_param: str | None
    accepts_any_args: bool
    is_async: bool
    description: str
    risk: str = "read-only"
    simulated: bool = False
    available: Callable[[str], bool] | None = None
    """Whether a model can run here now (weights cached, endpoint configured); None: always."""
    cards: tuple[ModelCard, ...] = ()
    """Model cards for models the catalog does not list (engines shipped in packages)."""

    def serves(self, task: str, model: str) -> bool:
        return self.task in (task, ANY_TASK) and (self.models is None or model in self.models)

    def can_run(self, model: str) -> bool:
        return self.available is None or self.available(model)

    def call_kwargs(
        self, args: dict[str, Any], model: str, context: ToolContext
    ) -> dict[str, Any]:
        kwargs = dict(args) if self.accepts_any_args else {
            name: args[name] for name in self.arg_names if name in args
        }
        if self.wants_model:
            kwargs["model"] = model
        if self.context_param:
            kwargs[self.context_param] = context
        return kwargs


_TOOLS: list[Tool] = []

_NO_SETTINGS: Mapping[str, Mapping[str, Any]] = MappingProxyType({})
_RUN_SETTINGS: ContextVar[Mapping[str, Mapping[str, Any]]] = ContextVar(
    "run_settings", default=_NO_SETTINGS
)


@contextmanager
def run_settings(settings: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """Give backends this run's settings (``{backend: {key: value}}``) for the duration
    of the block; threads started through :func:`hugginggpt.tools.threads.in_thread` inherit them.

    Settings belong to a run, not to the process: two runs in one server may use
    different endpoints.
    """
    token = _RUN_SETTINGS.set(settings)
    try:
        yield
    finally:
        _RUN_SETTINGS.reset(token)


def backend_settings(backend: str) -> Mapping[str, Any]:
    """The current run's settings for ``backend`` (empty outside a run)."""
    return _RUN_SETTINGS.get().get(backend, {})


def register_tool(
    fn: Callable[..., Any],
    task: str,
    *,
    backend: str,
    models: Iterable[str] | None = None,
    risk: str = "read-only",
    simulated: bool = False,
    name: str | None = None,
    available: Callable[[str], bool] | None = None,
    cards: Iterable[ModelCard] = (),
) -> Tool:
    """Register ``fn`` as the tool for ``task`` on ``backend``; later registrations of the
    same (task, backend, models) replace earlier ones.

    Args:
        models: the model ids this tool runs; None for any catalog model of the task.
        risk: what the tool may do beyond reading its inputs ("read-only" by default).
        available: tells whether a model can run now (e.g. its weights are cached).
        cards: model cards for models the catalog does not list.

    Raises:
        ToolDefinitionError: the task type is unknown, the return annotation is missing,
            a parameter is not an argument of the task type, or a required argument of
            the task type has no parameter.
    """
    label: str = name or getattr(fn, "__name__", None) or repr(fn)
    task_type: TaskType | None = None
    if task != ANY_TASK:
        task_type = get_task_type(task)
        if task_type is None:
            raise ToolDefinitionError(f"tool {label!r}: unknown task type {task!r}")
        task = task_type.name
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn)
    except Exception as exc:  # unresolvable annotation: a definition error, said plainly
        raise ToolDefinitionError(f"tool {label!r}: cannot read its type hints: {exc}") from exc
    if "return" not in hints:
        raise ToolDefinitionError(f"tool {label!r} has no return type annotation")

    arg_names: list[str] = []
    wants_model = False
    context_param: str | None = None
    accepts_any = False
    for param in signature.parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_any = True
        elif hints.get(param.name) is ToolContext:
            context_param = param.name
        elif param.name == "model":
            wants_model = True
        elif task_type is not None and task_type.arg(param.name) is None:
            known = ", ".join(a.name for a in task_type.args)
            raise ToolDefinitionError(
                f"tool {label!r}: parameter {param.name!r} is not an argument of "
                f"{task_type.name} (its arguments: {known})"
            )
        else:
            arg_names.append(param.name)
    if task_type is not None and not accepts_any:
        missing = [a.name for a in task_type.args if a.required and a.name not in arg_names]
        if missing:
            raise ToolDefinitionError(
                f"tool {label!r} lacks parameters for required arguments of "
                f"{task_type.name}: {', '.join(missing)}"
            )
    if task == ANY_TASK and not accepts_any:
        raise ToolDefinitionError(f"generic tool {label!r} must take **args")

    model_ids = tuple(models) if models is not None else None
    new = Tool(
        name=label,
        task=task,
        backend=backend,
        fn=fn,
        models=model_ids,
        arg_names=tuple(arg_names),
        wants_model=wants_model,
        context_param=context_param,
        accepts_any_args=accepts_any,
        is_async=inspect.iscoroutinefunction(fn),
        description=inspect.getdoc(fn) or "",
        risk=risk,
        simulated=simulated,
        available=available,
        cards=tuple(cards),
    )
    _TOOLS[:] = [
        t for t in _TOOLS if (t.task, t.backend, t.models) != (task, backend, model_ids)
    ]
    _TOOLS.append(new)
    return new


def tool(
    task: str,
    *,
    backend: str,
    models: Iterable[str] | None = None,
    risk: str = "read-only",
    available: Callable[[str], bool] | None = None,
    cards: Iterable[ModelCard] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form of :func:`register_tool`; returns the function unchanged."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        register_tool(fn, task, backend=backend, models=models, risk=risk,
                      available=available, cards=cards)
        return fn

    return decorate


def unregister_tool(registered: Tool) -> None:
    _TOOLS[:] = [t for t in _TOOLS if t is not registered]


def registered_tools() -> list[Tool]:
    return list(_TOOLS)


def find_tools(task: str, model: str, backends: Iterable[str] | None = None) -> list[Tool]:
    """Tools that can run ``model`` for ``task``, specific ones before generic ones."""
    allowed = set(backends) if backends is not None else None
    found = [
        t for t in _TOOLS
        if t.serves(task, model) and (allowed is None or t.backend in allowed)
    ]
    return sorted(found, key=lambda t: (t.task == ANY_TASK, t.models is None))


_FILE_KINDS = frozenset({"image", "audio", "video", "table"})
_LABEL_KEYS = ("label", "word", "entity", "entity_group")
MAX_INLINE_TEXT = 4000
"""Longer text outputs are stored as artifacts (state keeps a preview)."""


def _shown(value: Any) -> str:
    """A value's type and the start of its repr, for error messages."""
    try:
        text = reprlib.repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        text = "<unprintable>"
    return f"{type(value).__name__} {text}"


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _checked_ref(kind: str, ref: dict[str, Any], artifacts: ArtifactStore) -> dict[str, Any]:
    if ref.get("kind") != kind:
        raise ToolOutputError(f"expected a {kind} artifact, got a reference to a "
                              f"{ref.get('kind')} artifact ({ref.get('path')})")
    try:
        path = artifacts.resolve(ref)
    except (ArgumentError, KeyError, TypeError, ValueError) as exc:
        raise ToolOutputError(f"the {kind} artifact it names is unusable: {exc}") from exc
    if path.stat().st_size == 0:
        raise ToolOutputError(f"the {kind} artifact {ref['path']} is an empty file")
    return ref


def _a(kind: str) -> str:
    """A kind with its article: "an image", "a number", "labels"."""
    if kind == "labels":
        return "labels"
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def _coerce(kind: str, value: Any, artifacts: ArtifactStore) -> Any:
    """One output value checked against its declared kind and put in the form state
    keeps: text and numbers inline, everything bulky or binary as an artifact reference.

    Raises:
        ToolOutputError: the value is missing, empty, of the wrong type, malformed, or
            names a file that is not there.
    """
    if value is None:
        raise ToolOutputError(f"expected {_a(kind)}, got nothing (None)")
    if is_artifact_ref(value):
        return _checked_ref(kind, value, artifacts)
    if kind in _FILE_KINDS:
        if not isinstance(value, (str, Path)):
            raise ToolOutputError(f"expected {_a(kind)} file path, got {_shown(value)}")
        path = Path(value)
        if not path.is_file():
            raise ToolOutputError(f"expected {_a(kind)} file path, got {_shown(value)}, "
                                  "which is not a file")
        path = path.resolve()
        if not path.is_relative_to(artifacts.workspace):
            raise ToolOutputError(
                f"the tool returned the file {str(value)!r:.80}, which is outside the "
                f"workspace {artifacts.workspace}: a tool writes its output files with "
                "ctx.artifacts.new_path(suffix)"
            )
        if path.stat().st_size == 0:
            raise ToolOutputError(f"the {kind} file {path.name} is empty")
        return artifacts.add_file(path, kind)
    if kind == "text":
        if not isinstance(value, str):
            raise ToolOutputError(f"expected text, got {_shown(value)}")
        if len(value) > MAX_INLINE_TEXT:
            return artifacts.put_bytes(value.encode(), "text", ".txt", preview=value[:200])
        return value
    if kind == "number":
        if not _real(value) or not math.isfinite(value):
            raise ToolOutputError(f"expected a finite number, got {_shown(value)}")
        return float(value)
    if kind == "vector":
        values = value.tolist() if hasattr(value, "tolist") else value
        if not isinstance(values, (list, tuple)) or not values:
            raise ToolOutputError(f"expected a non-empty vector of numbers, got {_shown(value)}")
        bad = next((v for v in values if not _real(v) or not math.isfinite(v)), None)
        if bad is not None:
            raise ToolOutputError(f"expected a vector of finite numbers, one is {_shown(bad)}")
        floats = [float(v) for v in values]
        return artifacts.put_json(floats, "vector", dims=len(floats))
    if kind == "labels":
        return _checked_labels(value)
    return value


def _checked_labels(value: Any) -> list[dict[str, Any]]:
    """Labels are a list of dicts, each naming its label (``label``, ``word``, ``entity``
    or ``entity_group``) with an optional score; scores become plain floats."""
    if not isinstance(value, list):
        raise ToolOutputError(f"expected a list of labels, got {_shown(value)}")
    labels = []
    for item in value:
        if not isinstance(item, dict) or not any(
            isinstance(item.get(key), str) for key in _LABEL_KEYS
        ):
            raise ToolOutputError(
                f"expected labels as {{'label': str, 'score': number}}, got {_shown(item)}")
        score = item.get("score")
        if score is not None and (not _real(score) or not math.isfinite(score)):
            raise ToolOutputError(f"label {item!r:.80} has a score that is not a finite number")
        labels.append(item if score is None else {**item, "score": float(score)})
    return labels


def normalize_outputs(
    task_type: TaskType, value: Any, artifacts: ArtifactStore
) -> dict[str, Any]:
    """Check what a tool returned against the task type's declared outputs and turn it
    into ``{output name: value or artifact ref}``.

    A tool returns its primary output, or a dict of its named outputs; every declared
    output must be there, of its kind, and JSON-able (state is checkpointed). An empty
    string is a text (a model may have nothing to say); nothing at all is an error.

    Raises:
        ToolOutputError: an output is missing, of the wrong type or malformed; the message
            names the output and what was expected.
    """
    names = [o.name for o in task_type.outputs]
    if value is None or (isinstance(value, dict) and not value):
        raise ToolOutputError(f"{task_type.name} returned no output ({_shown(value)})")
    if isinstance(value, dict) and set(value) <= set(names) \
            and not is_artifact_ref(value):
        raw = value
    elif len(names) > 1:
        raise ToolOutputError(
            f"{task_type.name} returns a dict of its outputs ({', '.join(names)}), "
            f"got {_shown(value)}")
    else:
        raw = {names[0]: value}
    outputs: dict[str, Any] = {}
    for output in task_type.outputs:
        if output.name not in raw:
            raise ToolOutputError(
                f"{task_type.name} output {output.name!r} ({output.kind}) is missing")
        try:
            outputs[output.name] = _coerce(output.kind, raw[output.name], artifacts)
        except ToolOutputError as exc:
            raise ToolOutputError(f"{task_type.name} output {output.name!r}: {exc}") from exc
    try:
        json.dumps(outputs, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolOutputError(
            f"{task_type.name} outputs cannot be saved as JSON: {exc}") from exc
    return outputs
