"""Planning's helpers: reading a request, the example bank, plan validation and the
offline planner (see :mod:`hugginggpt.nodes.plan` for the stage itself)."""
