"""The four stages of HuggingGPT, one module each: plan, select, execute, respond."""

from hugginggpt.nodes.approve import approve
from hugginggpt.nodes.execute import aexecute, execute
from hugginggpt.nodes.plan import plan, route_after_plan
from hugginggpt.nodes.respond import abort, respond
from hugginggpt.nodes.select import route_after_select, select

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
