"""The ``llm`` backend: the run's controller LLM as the expert for text task types.

JARVIS let its controller handle summarization, translation, conversation and text
generation itself; here the same LLM routing that plans and answers also runs these
subtasks, under its own role ``expert``, on the cheapest configured endpoint that
suffices (:mod:`hugginggpt.tools.llm.expert`):

- summarization, translation (any pair of languages), question-answering over a text,
  text-generation, text2text-generation and conversational: free text;
- text-classification (sentiment: POSITIVE, NEGATIVE, NEUTRAL),
  zero-shot-classification (the given labels) and token-classification (named
  entities as spans of the text): by structured output, checked in code.

Its one model per task type is ``llm/expert``, with a card that says it is the
controller LLM, so selection, ``hugginggpt models list`` and the responder can explain
the choice; a result also names the endpoint that answered. It can run whenever the run
has an LLM for the role (the run's settings, through ``backend_settings("llm")``, never
a process global), and says why not otherwise ("no LLM configured"). Its calls count
against the run's ``max_llm_calls`` and ``max_llm_tokens`` with the stages' calls, are
recorded on the thread like them, and a replay answers them from the recording.

Where it sits in ``auto``: see :data:`hugginggpt.tools.experts.availability.HYBRID_ORDER`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.llm.tools import EXPERTS, ControllerLLM, controller_llm
from hugginggpt.tools.experts.registry import backend_settings, register_tool

__all__ = ["LLM_BACKEND", "LLM_EXPERT", "ControllerLLM", "controller_llm", "llm_available",
           "unavailable_reason"]

LLM_BACKEND = "llm"
LLM_EXPERT = "llm/expert"
"""The model id of the controller LLM as an expert (its endpoint is per run: results
name it)."""


def unavailable_reason() -> str | None:
    """Why the run's LLM cannot be an expert now (None: it can). Outside a run there
    is no LLM to lend."""
    settings = backend_settings(LLM_BACKEND)
    if not settings:
        return "no LLM configured (outside a run, no LLM is lent to the llm backend)"
    return settings.get("unavailable")


def llm_available(model: str) -> bool:
    """Whether the run has an LLM for the expert role (the model id is always
    ``llm/expert``)."""
    return model == LLM_EXPERT and unavailable_reason() is None


def _why_not(model: str) -> str | None:
    return unavailable_reason() if model == LLM_EXPERT else f"not the llm expert ({LLM_EXPERT})"


_ABOUT = ("The controller LLM itself (the run's LLM routing, role 'expert', the cheapest "
          "configured endpoint that suffices; the result names it), not a Hugging Face "
          "model. Each call counts against the run's LLM budget (max_llm_calls, "
          "max_llm_tokens); quality and cost depend on the endpoint.")


def _register(fn: Callable[..., Any], task: str, does: str, latency_s: float) -> None:
    card = ModelCard(id=LLM_EXPERT, task=task, description=f"{does} {_ABOUT}",
                     license="the LLM provider's terms", languages=["multilingual"],
                     expected_latency_s=latency_s, library_name="llm")
    register_tool(fn, task, backend=LLM_BACKEND, models=[LLM_EXPERT], cards=[card],
                  available=llm_available, unavailable=_why_not, risk="network",
                  deterministic=False)  # "llm/expert" is a role: the endpoint answering varies


for _task, _expert in EXPERTS.items():
    _register(_expert.tool, _task, _expert.does, _expert.latency_s)
