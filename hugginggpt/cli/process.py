"""What only the ``hugginggpt`` process does: start lean and leave without clean-up work.

The command line is a short-lived process, so two things that a long-lived one needs
are waste in it (``benchmarks/startup.py`` measures both):

- **Package initialisers that import everything.** LangGraph imports one ``TypedDict``
  from ``langgraph_sdk.auth.types``, and LangSmith's tracer one ``Literal`` from
  ``langsmith.types.run_select_field``. Python runs each parent package's
  ``__init__`` first: ``langgraph_sdk``'s builds the whole HTTP client (httpx, rich),
  ``langsmith.types``'s imports all 160-odd generated API models. That is 0.4-0.5 s
  of CPU for names no command uses. :func:`defer_package_inits` makes such a package's
  ``__init__`` run at the first look-up of one of its own names instead; its submodules
  import as before.
- **Garbage collections during the imports.** Importing LangGraph, LangChain and this
  package allocates about 90,000 tracked objects and frees almost none of them in
  cycles (about 1,900 objects of cyclic garbage in all): the collector ran 230 times
  over them for nothing, 0.08-0.12 s of a 1.5 s run here. :func:`start` holds the
  collector off until the command's modules are imported; :func:`imported` then
  freezes what they made (``gc.freeze``: later collections skip it, and that small
  garbage stays) and turns the collector back on for the run.
- **The interpreter's collections at exit.** Finalisation runs full garbage
  collections over every object that the imports and the run made: 0.7-0.8 s after a
  short request here, a fifth of it. :func:`leave` freezes them (``gc.freeze``) so the
  collections skip them; the process's memory goes back to the system as it ends.

None of this is done for a program that imports :mod:`hugginggpt`: only
:func:`hugginggpt.cli.console` (the installed command and ``python -m hugginggpt``)
calls :func:`start` and :func:`leave`, and :func:`imported` does nothing without
:func:`start`.
"""

from __future__ import annotations

import gc
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

__all__ = ["DEFERRED_PACKAGES", "defer_package_inits", "start", "imported", "leave"]

DEFERRED_PACKAGES = ("langsmith.types", "langgraph_sdk")
"""The packages whose ``__init__`` the command defers (see the module's docstring)."""


class _DeferredInit(importlib.abc.Loader):
    """A package's own loader, with its ``exec_module`` put off until the package is
    asked for a name it does not have yet (PEP 562's module ``__getattr__``)."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader
        self.lock = threading.RLock()
        self.done = False
        self.hook: Any = None
        """The ``__getattr__`` put on the package, taken off once its ``__init__`` ran."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        def __getattr__(name: str) -> Any:
            self.initialise(module)
            if name in module.__dict__:
                return module.__dict__[name]
            own = module.__dict__.get("__getattr__")
            if own is not None and own is not __getattr__:  # the package's own
                return own(name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        self.hook = __getattr__

    def initialise(self, module: ModuleType) -> None:
        """Run the package's real ``__init__`` once (another thread asking meanwhile
        waits for it, as it would for an import in progress)."""
        with self.lock:
            if self.done:
                return
            self.done = True
            module.__loader__ = self.loader
            if module.__spec__ is not None:
                module.__spec__.loader = self.loader
            self.loader.exec_module(module)  # type: ignore[attr-defined]
            if module.__dict__.get("__getattr__") is self.hook:
                del module.__dict__["__getattr__"]


class _DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds the named packages with the finders after it, and defers their ``__init__``."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and spec.submodule_search_locations is not None:
                    spec.loader = _DeferredInit(spec.loader)
                return spec
        return None


def defer_package_inits(names: Sequence[str] = DEFERRED_PACKAGES) -> None:
    """Defer the ``__init__`` of each package in ``names`` not imported yet (see the
    module's docstring). Once per process; a package already imported is left as it is."""
    if any(isinstance(f, _DeferringFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _DeferringFinder([n for n in names if n not in sys.modules]))


_collector_held = False


def start() -> None:
    """What the command does first: defer the package initialisers
    (:func:`defer_package_inits`) and hold the garbage collector off until
    :func:`imported` (see the module's docstring)."""
    global _collector_held
    defer_package_inits()
    if gc.isenabled():
        gc.disable()
        _collector_held = True


def imported() -> None:
    """The command's modules are imported: freeze the objects made so far and turn the
    collector back on, if :func:`start` held it off (else nothing)."""
    global _collector_held
    if _collector_held:
        _collector_held = False
        gc.freeze()
        gc.enable()


def leave(code: int) -> NoReturn:
    """End the process with ``code``, without the exit's garbage collections (see the
    module's docstring). ``atexit`` handlers and the wait for non-daemon threads run
    as usual."""
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()
    sys.exit(code)
