"""Allow ``python -m mplint``."""

import sys

from mplint.launch import main

sys.exit(main())
