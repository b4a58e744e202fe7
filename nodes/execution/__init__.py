"""The execute stage's parts: jobs, the board, argument resolution and the per-subtask
attempts (see :mod:`hugginggpt.nodes.execute`)."""
