"""``python -m hugginggpt.cli``: the command line."""

from hugginggpt.cli import console

console()
