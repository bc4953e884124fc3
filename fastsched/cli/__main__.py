"""``python -m fastsched.cli``: the command line, as the ``fastsched`` script runs it."""
import sys

from .parser import main

sys.exit(main())
