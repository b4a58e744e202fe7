"""The task types, one module each: a module's ``TASK`` is the whole declaration of one
task type (its arguments and outputs, its description for the planner, the noun for its
step and the sentence its result is said in). :func:`hugginggpt.tools.experts.tasks.
get_task_type` registers them all on first use; adding a module here adds a task type.
"""
