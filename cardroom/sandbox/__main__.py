"""``python -m cardroom.sandbox``: print the probe report (exit status 1 if
the sandbox cannot work here)."""

import sys

from .probe import main

sys.exit(main())
