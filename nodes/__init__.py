"""The four stages of HuggingGPT, one module each: plan, select, execute, respond."""

from nodes.approve import approve
from nodes.execute import aexecute, execute
from nodes.plan import plan, route_after_plan
from nodes.respond import abort, respond
from nodes.select import route_after_select, select

__all__ = [
    "abort",
    "approve",
    "aexecute",
    "execute",
    "plan",
    "respond",
    "route_after_plan",
    "route_after_select",
    "select",
]
