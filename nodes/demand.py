"""What an LLM call of a stage needs: the capability tier.

The stages know what they ask, so they say it; the router
(:mod:`hugginggpt.tools.llm.router`) then keeps the endpoints of that tier or above.
"""

from __future__ import annotations

from collections.abc import Iterable

from hugginggpt.nodes.planning.reading import split_clauses
from hugginggpt.tools.kinds import kind_of_literal

__all__ = ["tier_needed"]


def tier_needed(role: str, *, request: str = "", files: Iterable[str] = (),
                plan_size: int = 0, failures: int = 0, attempt: int = 1) -> int:
    """The capability tier a call needs, estimated from what it is asked to do.

    Planning always needs a medium model and a large one for a request with several
    steps, several or mixed attachments, a long text, or a repair of a rejected plan.
    Choosing between close candidate models needs a small one. Writing the answer needs
    a small one for up to two subtasks that all finished, else a medium one.
    """
    if role == "planner":
        files = list(files)
        hard = (len(split_clauses(request)) > 1 or len(files) > 1
                or len({kind_of_literal(f) for f in files}) > 1
                or len(request.split()) > 40 or attempt > 1)
        return 3 if hard else 2
    if role == "responder":
        return 1 if plan_size <= 2 and failures == 0 else 2
    return 1
