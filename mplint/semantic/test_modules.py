"""Which files are test modules, by pytest's and unittest's naming. Imports nothing,
so the project index (which must not load libcst) and the rules share it."""

from __future__ import annotations

import os


def is_test_path(path: str) -> bool:
    """``test_x.py``, ``x_test.py`` or ``conftest.py``."""
    name = os.path.basename(path)
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
