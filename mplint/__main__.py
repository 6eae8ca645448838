"""Allow ``python -m mplint``."""

import sys

from mplint.cli import main

sys.exit(main())
