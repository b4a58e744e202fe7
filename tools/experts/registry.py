"""Tools: typed functions that run one task type on some backend.

A tool is registered with :func:`tool` (a decorator) or :func:`register_tool`. Its
schema comes from its signature: the parameters named like the task type's arguments
receive those arguments (``str`` for text; :class:`~pathlib.Path` for files, already
resolved inside the workspace), a parameter named ``model`` receives the selected model
id, and one annotated :class:`ToolContext` (or ``ToolContext | None``) receives the run's
context (artifact store, expected latency; where a tool reports its confidence). The
return annotation is required. A tool returns its task's primary output, or a dict of
named outputs; files are returned as paths and become artifacts.

Example::

    @tool("text-classification", backend="mine", models=["me/my-classifier"])
    def classify(text: str, model: str) -> list[dict]:
        return [{"label": "POSITIVE", "score": 0.9}]
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, get_type_hints

from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.errors import ToolDefinitionError
from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.confidence import Confidence
from hugginggpt.tools.experts.tasks import TaskType, get_task_type
from hugginggpt.tools.extras import install_command, missing

__all__ = [
    "Tool",
    "ToolContext",
    "ANY_TASK",
    "tool",
    "register_tool",
    "unregister_tool",
    "find_tools",
    "registered_tools",
    "backend_settings",
    "run_settings",
    "needs_extra",
    "missing_extra",
    "not_installed",
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
    endpoint: str | None = None
    """Set by a tool whose model id does not say where it ran (the ``llm`` backend's
    ``llm/expert``): the endpoint that answered, as endpoints are shown (no secrets).
    The subtask's result names it."""
    confidence: Confidence | None = None
    """Set by a tool whose engine says how sure it was (a recogniser's posteriors, OCR
    scores): the subtask's result carries it, and below the thresholds of
    :mod:`hugginggpt.tools.experts.confidence` the answer says the result is uncertain."""


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
    unavailable: Callable[[str], str | None] | None = None
    """Why a model cannot run here now (None: it can), for backends that can say why; a
    tool that gives it and no ``available`` can run exactly the models it has no reason
    against, so the reason shown and the choice made never disagree."""
    warm: Callable[[str], bool] | None = None
    """Whether a model is loaded and ready where this tool runs it (a shared tier's
    replica holds it); a warm model ranks first among near equals. None: not known."""
    deterministic: bool | Callable[[], bool] | None = None
    """Whether the same inputs always give the same outputs, so that a result may be
    reused (the result cache): True (a fixed seed, greedy decoding, a rule-based
    engine), False (it samples, or its model id does not say which model answers), a
    function asked during the run (the run's settings decide: a dry run with faults), or
    None: its task type's default (:attr:`TaskType.nondeterministic`)."""

    def is_deterministic(self, task: str) -> bool:
        """Whether this tool's outputs for ``task`` depend on its inputs alone (asked
        inside a run: a function may read the run's settings)."""
        if callable(self.deterministic):
            return bool(self.deterministic())
        if self.deterministic is not None:
            return self.deterministic
        task_type = get_task_type(task)
        return task_type is not None and not task_type.nondeterministic

    def serves(self, task: str, model: str) -> bool:
        return self.task in (task, ANY_TASK) and (self.models is None or model in self.models)

    def can_run(self, model: str) -> bool:
        if not_installed(self.backend) is not None:
            return False
        if self.available is not None:
            return self.available(model)
        return self.unavailable is None or self.unavailable(model) is None

    def why_not(self, model: str) -> str | None:
        """Why ``model`` cannot run here now, or None when it can."""
        if (lacking := not_installed(self.backend)) is not None:
            return lacking
        if self.available is not None and self.available(model):
            return None
        reason = self.unavailable(model) if self.unavailable is not None else None
        return reason or (None if self.can_run(model) else "cannot run now")

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

_EXTRAS: dict[str, str] = {}
"""Backend -> the extra of hugginggpt that its tools need (:func:`needs_extra`)."""


def needs_extra(backend: str, extra: str) -> None:
    """Declare that ``backend``'s tools run only with hugginggpt's ``extra`` installed:
    while a package of it is missing, none of them is a candidate, and each says what to
    install."""
    _EXTRAS[backend] = extra


def missing_extra(backend: str) -> str | None:
    """The extra that ``backend`` needs and this install lacks, or None."""
    extra = _EXTRAS.get(backend)
    return extra if extra is not None and missing(extra) else None


def not_installed(backend: str) -> str | None:
    """What ``backend`` lacks on this install and the command that installs it, or None
    (its extra is installed, or it needs none)."""
    extra = missing_extra(backend)
    return None if extra is None else (
        f"the {extra} extra is not installed: {install_command(extra)}")


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
    unavailable: Callable[[str], str | None] | None = None,
    deterministic: bool | Callable[[], bool] | None = None,
    warm: Callable[[str], bool] | None = None,
) -> Tool:
    """Register ``fn`` as the tool for ``task`` on ``backend``; later registrations of the
    same (task, backend, models) replace earlier ones.

    Args:
        models: the model ids this tool runs; None for any catalog model of the task.
        risk: what the tool may do beyond reading its inputs ("read-only" by default).
        available: tells whether a model can run now (e.g. its weights are cached).
        cards: model cards for models the catalog does not list.
        unavailable: says why a model cannot run now (None when it can); without
            ``available`` it decides alone.
        warm: tells whether a model is loaded and ready where the tool runs it.
        deterministic: whether the same inputs give the same outputs (see
            :attr:`Tool.deterministic`); None: the task type's default.

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
        elif hints.get(param.name) in (ToolContext, ToolContext | None):
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
        unavailable=unavailable,
        deterministic=deterministic,
        warm=warm,
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
    deterministic: bool | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form of :func:`register_tool`; returns the function unchanged."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        register_tool(fn, task, backend=backend, models=models, risk=risk,
                      available=available, cards=cards, deterministic=deterministic)
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
