"""``python -m hugginggpt``: the command line."""

from hugginggpt.cli import console

console()
