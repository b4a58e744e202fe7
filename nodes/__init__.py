"""The stages, one module each: HuggingGPT's four (plan, select, execute, respond) plus
the human approval between selection and execution and the abort that ends a run that
cannot go on. Each is a plain function of the state (and the run's context) that
returns an update; their helpers sit beside them (``planning/``, ``execution/``,
``ranking``, ``demand``, ``prompts``).
"""

from hugginggpt.nodes.approve import approve
from hugginggpt.nodes.execute import StreamedExecution, aexecute, execute
from hugginggpt.nodes.plan import plan, route_after_plan
from hugginggpt.nodes.respond import abort, respond
from hugginggpt.nodes.select import route_after_select, select

__all__ = [
    "StreamedExecution",
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
