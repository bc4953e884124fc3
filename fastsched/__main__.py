"""``python -m fastsched``: the command line (see :mod:`fastsched.cli`)."""
import sys

from .cli import main

sys.exit(main())
