"""``python -m hugginggpt.cli``: the command line."""

import sys

from hugginggpt.cli import main

sys.exit(main())
