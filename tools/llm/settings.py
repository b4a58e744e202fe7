"""What the LLM client reads of a run's settings.

The run's :class:`hugginggpt.graph.context.Context` has these fields (and more); the LLM
client is typed against this protocol so that it depends on no layer above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["LLMSettings", "StructuredOutputMethod", "LLMSpec"]

LLMSpec: TypeAlias = "str | BaseChatModel | None"
"""A role's LLM: a model's name (``gpt-4o-mini``, ``anthropic:claude-...``, ``hf:REPO``),
or a LangChain chat model built by the caller."""

StructuredOutputMethod = Literal["auto", "function_calling", "json_schema", "json_mode"]
"""How a chat model is asked for structure (``with_structured_output``'s method):
``auto`` picks per chat model (:func:`hugginggpt.tools.llm.providers.structured_method`)."""


class LLMSettings(Protocol):
    """The LLM part of a run's settings (see ``Context`` for what each one means)."""

    @property
    def llm(self) -> LLMSpec: ...
    @property
    def llm_base_url(self) -> str | None: ...
    @property
    def planner_llm(self) -> LLMSpec: ...
    @property
    def selector_llm(self) -> LLMSpec: ...
    @property
    def responder_llm(self) -> LLMSpec: ...
    @property
    def expert_llm(self) -> LLMSpec: ...
    @property
    def llm_config(self) -> str | None: ...
    @property
    def llm_endpoints(self) -> list[dict[str, Any]] | None: ...
    @property
    def llm_routing(self) -> str | None: ...
    @property
    def replay(self) -> Any: ...
    @property
    def llm_timeout_s(self) -> float: ...
    @property
    def llm_max_retries(self) -> int: ...
    @property
    def structured_output(self) -> StructuredOutputMethod: ...
    @property
    def offline(self) -> bool: ...
    @property
    def hf_provider(self) -> str | None: ...
    @property
    def hf_bill_to(self) -> str | None: ...
    @property
    def max_llm_calls(self) -> int: ...
    @property
    def max_llm_tokens(self) -> int: ...
    @property
    def max_run_s(self) -> float: ...
